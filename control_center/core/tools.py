"""The tool catalogue (SPEC §4, §11): every tool's name, tier, effect classes and input schema.

Names and input keys are part of the contract with the model and with outside checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from control_center.core.modes import Effect, Tier


@dataclass(frozen=True)
class ToolSpec:
    name: str
    tier: Tier
    effects: frozenset[Effect]
    description: str
    input_schema: MappingProxyType[str, Any] = field(compare=False)

    def schema_dict(self) -> dict[str, Any]:
        """A plain, JSON-serialisable copy of the input schema."""
        thawed: dict[str, Any] = _thaw(self.input_schema)
        return thawed


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, MappingProxyType | dict):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_thaw(v) for v in value]
    return value


def _obj(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": True}


_STR = {"type": "string"}
_PATH = {"type": "string", "description": "path relative to the worktree"}

_TICKET_NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key": _STR,
        "title": _STR,
        "role": _STR,
        "children": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["key", "title", "role"],
}

_SPECS: list[tuple[str, Tier, tuple[Effect, ...], str, dict[str, Any]]] = [
    ("read_file", Tier.READ, (), "Read a text file of the worktree.", _obj(["path"], path=_PATH)),
    (
        "list_files",
        Tier.READ,
        (),
        "List files and folders of the worktree (optionally recursively).",
        _obj([], path=_PATH, recursive={"type": "boolean"}),
    ),
    (
        "search_files",
        Tier.READ,
        (),
        "Search the worktree's files for a regular expression.",
        _obj(["pattern"], pattern=_STR, path=_PATH),
    ),
    ("git_status", Tier.READ, (), "Show git status of the worktree.", _obj([])),
    (
        "git_diff",
        Tier.READ,
        (),
        "Show a git diff in the worktree (working changes, or between refs).",
        _obj([], base=_STR, head=_STR, path=_PATH, staged={"type": "boolean"}),
    ),
    (
        "git_log",
        Tier.READ,
        (),
        "Show recent commits of the worktree's branch.",
        _obj([], max_count={"type": "integer", "minimum": 1}, ref=_STR),
    ),
    (
        "fetch_url",
        Tier.READ,
        (Effect.NETWORK_EGRESS,),
        "Fetch a web page or document over HTTP(S) for research.",
        _obj(["url"], url=_STR),
    ),
    (
        "ask_user",
        Tier.READ,
        (),
        "Ask the operator a question; the run waits for the answer.",
        _obj(["question"], question=_STR),
    ),
    (
        "report_progress",
        Tier.READ,
        (),
        "Tell the operator about progress without ending the run (never twice in a row).",
        _obj(["message"], message=_STR),
    ),
    (
        "plan_respond",
        Tier.READ,
        (),
        "Reply to the operator in plan mode; set needs_more_exploration to keep exploring.",
        _obj(["response"], response=_STR, needs_more_exploration={"type": "boolean"}),
    ),
    (
        "write_file",
        Tier.WRITE,
        (Effect.WORKTREE_WRITE,),
        "Write a file of the worktree (creates missing parent folders).",
        _obj(["path", "content"], path=_PATH, content=_STR),
    ),
    (
        "edit_file",
        Tier.WRITE,
        (Effect.WORKTREE_WRITE,),
        "Replace exactly one occurrence of `old` with `new` in a worktree file.",
        _obj(["path", "old", "new"], path=_PATH, old=_STR, new=_STR),
    ),
    (
        "delete_file",
        Tier.WRITE,
        (Effect.FILE_DELETE,),
        "Delete a file of the worktree.",
        _obj(["path"], path=_PATH),
    ),
    (
        "git_commit",
        Tier.WRITE,
        (Effect.COMMIT,),
        "Commit all changes of the worktree with a message.",
        _obj(["message"], message=_STR),
    ),
    (
        "add_review_node",
        Tier.WRITE,
        (),
        "Record one review finding (kind, priority P0-P3, confidence 0..1, title, optional anchor).",
        _obj(
            ["kind", "title"],
            kind={"type": "string", "enum": ["bug", "suggestion", "recommendation", "question", "ticket"]},
            # Lenient on purpose (SPEC §6): whatever arrives is stored; the read boundary drops a
            # finding whose priority or confidence is missing or out of range.
            priority={"description": "P0 (blocks release) .. P3 (nice to have)"},
            confidence={"description": "your confidence in the finding, a number from 0 to 1"},
            title=_STR,
            body=_STR,
            anchor={
                "type": "object",
                "properties": {
                    "file": _STR,
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                },
                "required": ["file"],
            },
        ),
    ),
    (
        "finalize_review",
        Tier.WRITE,
        (),
        "Publish the review with your verdict (and, on a re-review, the previous findings now fixed, "
        "with evidence); the system then runs the review's gates.",
        _obj(
            ["verdict"],
            verdict={"type": "string", "enum": ["ship", "hold", "block"]},
            summary=_STR,
            # Optional (issue 26): previous findings the reviewer says are fixed, with evidence. A
            # claim resolves a finding only where the push rewrote its lines; otherwise the operator
            # sees it as a claim (core/review_claims.py).
            resolved={
                "type": "array",
                "description": "findings of the previous revision you consider fixed: node_id and "
                "evidence (required), optionally the commit, file, start_line, end_line, test",
                "items": {
                    "type": "object",
                    "properties": {
                        "node_id": {"type": "string", "description": "the previous finding's id"},
                        "evidence": {"type": "string", "description": "what fixed it and how you checked"},
                        "commit": _STR,
                        "file": _STR,
                        "start_line": {"type": "integer"},
                        "end_line": {"type": "integer"},
                        "test": _STR,
                    },
                    # node_id and evidence are needed, but checked per item: one bad claim is
                    # refused in one line without refusing the verdict with it.
                },
            },
        ),
    ),
    (
        "confirm_review_node",
        Tier.WRITE,
        (),
        "Confirm another reviewer's finding (never your own).",
        _obj(["node_id"], node_id=_STR),
    ),
    (
        "create_ticket",
        Tier.WRITE,
        (),
        "Open a ticket.",
        _obj(["title"], title=_STR, body=_STR, parent=_STR),
    ),
    ("post_message", Tier.WRITE, (), "Post a message to the room.", _obj(["text"], text=_STR, to=_STR)),
    (
        "run_command",
        Tier.EXECUTE,
        (Effect.PROCESS_SPAWN,),
        "Run a shell command in the worktree.",
        _obj(["command"], command=_STR, timeout_s={"type": "number", "exclusiveMinimum": 0}),
    ),
    (
        "git_push",
        Tier.EXECUTE,
        (Effect.PUSH,),
        "Push the worktree's branch to a remote.",
        _obj([], remote=_STR, branch=_STR),
    ),
    (
        "create_pr",
        Tier.EXECUTE,
        (Effect.PR_CREATE,),
        "Open a pull request for the worktree's branch.",
        _obj(["title"], title=_STR, body=_STR, base=_STR),
    ),
    (
        "install_package",
        Tier.EXECUTE,
        (Effect.PACKAGE_INSTALL,),
        "Install a package into the project's environment.",
        _obj(["name"], name=_STR, manager=_STR),
    ),
    (
        "submit_plan",
        Tier.READ,
        (),
        "Deliver the plan: a goal and a dependency graph of nodes (key, title, description, depends_on; "
        "optional checks: commands that must pass on the node's work before it counts as done).",
        _obj(
            ["goal", "nodes"],
            goal=_STR,
            nodes={
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "key": _STR,
                        "title": _STR,
                        "description": _STR,
                        "depends_on": {"type": "array", "items": _STR},
                        # Optional (SPEC §12): acceptance checks run on the node's worktree
                        # after its turn; the node is done only when they pass.
                        "checks": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "command": {"anyOf": [_STR, {"type": "array", "items": _STR}]},
                                    "expect_exit": {"type": "integer", "minimum": 0, "maximum": 255},
                                    "expect_output": _STR,
                                },
                                "required": ["command"],
                            },
                        },
                    },
                    "required": ["key", "title", "description", "depends_on"],
                },
            },
        ),
    ),
    (
        "exit_plan_mode",
        Tier.READ,
        (),
        "Ask the operator for permission to leave plan mode (an approval gate, not a deliverable).",
        _obj([], summary=_STR),
    ),
    (
        "propose_orchestration",
        Tier.READ,
        (),
        "Deliver an orchestration proposal: roles, a ticket tree, a synthesis step and a budget.",
        _obj(
            ["goal", "roles", "tickets", "synthesis", "budget"],
            goal=_STR,
            roles={
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {"name": _STR, "instructions": _STR},
                    "required": ["name", "instructions"],
                },
            },
            tickets={"type": "array", "minItems": 1, "items": _TICKET_NODE},
            synthesis={
                "type": "object",
                "properties": {"role": _STR, "instructions": _STR},
                "required": ["role", "instructions"],
            },
            budget={
                "type": "object",
                "properties": {
                    "max_tokens": {"type": "integer", "minimum": 1},
                    "max_usd": {"type": "number", "exclusiveMinimum": 0},
                },
            },
        ),
    ),
]

CATALOGUE: MappingProxyType[str, ToolSpec] = MappingProxyType(
    {
        name: ToolSpec(name, tier, frozenset(effects), description, _freeze(schema))
        for name, tier, effects, description, schema in _SPECS
    }
)


def tool(name: str) -> ToolSpec:
    return CATALOGUE[name]
