"""The tool catalogue (SPEC §4, §11): every tool's name, tier, effect classes and input schema,
and its traits: which inputs are paths (read or written), which one is a shell command line, how
its call is previewed in the Inbox, how long it may run and how much of its output is kept, where
its implementation lives. Everything that must know what a tool is reads its declaration here;
nothing else decides by a tool's name. A new tool is one declaration here (or in its own module,
added to ``CATALOGUE``) plus its implementation module.

Names and input keys are part of the contract with the model and with outside checks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from control_center.core.modes import Effect, Tier


class Access(StrEnum):
    """What a call does with the file a path input names."""

    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class PathArg:
    """An input naming a file or folder of the worktree: refused before the gate when it leaves
    the worktree; a written one is what a grant rule's path glob matches."""

    key: str
    access: Access = Access.READ


@dataclass(frozen=True)
class Preview:
    """How a call is shown in the Inbox: ``verb subject`` ("Edit calc.py (+4 −0)", "Run `make`")."""

    verb: str
    #: The input shown after the verb.
    subject: str
    #: The subject is code (a command line): shown in backticks, whitespace folded.
    code: bool = False
    #: The file's text after the call, from its text before and the call's input: the Inbox
    #: shows the diff (computed without writing). Pure; None: no diff.
    after: Callable[[str, Mapping[str, Any]], str] | None = None
    #: An input shown whole in the item's detail when there is no diff (a new file's content).
    body: str | None = None
    #: Inputs the diff shows (the item's detail does not list them again).
    in_diff: tuple[str, ...] = ()


#: The wall-clock limit of a call whose declaration names none (file, git and web tools finish
#: far sooner).
DEFAULT_LIMIT_S = 180.0
#: Characters of a call's output kept for the model when its implementation does not bound it.
DEFAULT_OUTPUT_CHARS = 100_000


@dataclass(frozen=True)
class Bound:
    """How long one call may run and how much of its output the model is shown."""

    limit_s: float = DEFAULT_LIMIT_S
    #: An input giving the call's own limit in seconds (a command's ``timeout_s``): then the
    #: limit is that input (``default_s`` when absent or invalid, at most ``max_s``) plus
    #: ``slack_s`` (the process group is killed and drained first).
    timeout_arg: str | None = None
    default_s: float = 0.0
    max_s: float = 0.0
    slack_s: float = 0.0
    #: Characters of output the call path keeps (the rest is cut with a marker); None: the
    #: implementation bounds its own output, as ``own`` says.
    max_output_chars: int | None = DEFAULT_OUTPUT_CHARS
    own: str = ""

    def limit_for(self, args: Mapping[str, Any]) -> float:
        if self.timeout_arg is None:
            return self.limit_s
        raw = args.get(self.timeout_arg, self.default_s)
        valid = isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0
        seconds = float(raw) if valid else 0.0
        return min(seconds or self.default_s, self.max_s) + self.slack_s


@dataclass(frozen=True)
class ToolSpec:
    name: str
    tier: Tier
    effects: frozenset[Effect]
    description: str
    input_schema: Mapping[str, Any] = field(compare=False)
    #: ``module:function`` of its implementation (the harness imports it on first use).
    implementation: str = ""
    #: A verb: runs in the harness's process with the turn's context (async, ``VerbContext``);
    #: otherwise a tool, run on a thread with a ``ToolContext`` under its ``bound``.
    verb: bool = False
    #: Its implementation also receives the workspace (it opens spaces, reads the store).
    workspace: bool = False
    paths: tuple[PathArg, ...] = ()
    #: The input holding a shell command line (gated and granted by its argv).
    command_arg: str | None = None
    preview: Preview | None = None
    bound: Bound = Bound()
    #: Its inputs and results are deliverables, approvals or questions: context compaction keeps
    #: them whole.
    kept_whole: bool = False
    #: Refused when it was the previous call too (a progress note never follows itself).
    not_twice_in_a_row: bool = False

    def __post_init__(self) -> None:
        # Declarations may give plain dicts and tuples; the catalogue holds them frozen.
        object.__setattr__(self, "effects", frozenset(self.effects))
        if not isinstance(self.input_schema, MappingProxyType):
            object.__setattr__(self, "input_schema", _freeze(self.input_schema))

    def schema_dict(self) -> dict[str, Any]:
        """A plain, JSON-serialisable copy of the input schema."""
        thawed: dict[str, Any] = _thaw(self.input_schema)
        return thawed

    @property
    def written_path(self) -> str | None:
        """The input naming the file this call changes (a grant rule's glob matches it)."""
        return next((p.key for p in self.paths if p.access is Access.WRITE), None)


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


def _written(_old: str, args: Mapping[str, Any]) -> str:
    return str(args.get("content", ""))


def _edited(old: str, args: Mapping[str, Any]) -> str:
    return old.replace(str(args.get("old", "")), str(args.get("new", "")), 1)


def _deleted(_old: str, _args: Mapping[str, Any]) -> str:
    return ""


def _own_output(how: str, *, limit_s: float = DEFAULT_LIMIT_S) -> Bound:
    """A tool whose implementation bounds its own output (``how``: what the model is shown)."""
    return Bound(limit_s=limit_s, max_output_chars=None, own=how)


#: A command's bound: its own ``timeout_s`` (120 s by default, at most 30 minutes) plus the
#: time to kill and drain its process group; its output is kept head and tail in a spool file.
COMMAND_BOUND = Bound(
    timeout_arg="timeout_s",
    default_s=120.0,
    max_s=1800.0,
    slack_s=10.0,
    max_output_chars=None,
    own="its first and last lines (the whole output in a file the operator opens)",
)

_DECLARED: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read_file",
        Tier.READ,
        frozenset(),
        "Read a text file of the worktree.",
        _obj(["path"], path=_PATH),
        implementation="control_center.harness.tools.files:read_file",
        paths=(PathArg("path"),),
        bound=_own_output("the first 200 KB of the file"),
    ),
    ToolSpec(
        "list_files",
        Tier.READ,
        frozenset(),
        "List files and folders of the worktree (optionally recursively).",
        _obj([], path=_PATH, recursive={"type": "boolean"}),
        implementation="control_center.harness.tools.files:list_files",
        paths=(PathArg("path"),),
        bound=_own_output("the first 2,000 entries"),
    ),
    ToolSpec(
        "search_files",
        Tier.READ,
        frozenset(),
        "Search the worktree's files for a regular expression.",
        _obj(["pattern"], pattern=_STR, path=_PATH),
        implementation="control_center.harness.tools.files:search_files",
        paths=(PathArg("path"),),
        bound=_own_output("the first 200 matches, lines cut at 300 characters, 20 s"),
    ),
    ToolSpec(
        "git_status",
        Tier.READ,
        frozenset(),
        "Show git status of the worktree.",
        _obj([]),
        implementation="control_center.harness.tools.git:git_status",
        bound=_own_output("the first 100,000 characters"),
    ),
    ToolSpec(
        "git_diff",
        Tier.READ,
        frozenset(),
        "Show a git diff in the worktree (working changes, or between refs).",
        _obj([], base=_STR, head=_STR, path=_PATH, staged={"type": "boolean"}),
        implementation="control_center.harness.tools.git:git_diff",
        bound=_own_output("the first 100,000 characters"),
    ),
    ToolSpec(
        "git_log",
        Tier.READ,
        frozenset(),
        "Show recent commits of the worktree's branch.",
        _obj([], max_count={"type": "integer", "minimum": 1}, ref=_STR),
        implementation="control_center.harness.tools.git:git_log",
        bound=_own_output("at most 500 commits"),
    ),
    ToolSpec(
        "fetch_url",
        Tier.READ,
        frozenset({Effect.NETWORK_EGRESS}),
        "Fetch a web page or document over HTTP(S) for research.",
        _obj(["url"], url=_STR),
        implementation="control_center.harness.tools.web:fetch_url",
        bound=_own_output("the first 1 MB of the page, 20 s"),
    ),
    ToolSpec(
        "ask_user",
        Tier.READ,
        frozenset(),
        "Ask the operator a question; the run waits for the answer.",
        _obj(["question"], question=_STR),
        implementation="control_center.harness.verbs:ask_user",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "report_progress",
        Tier.READ,
        frozenset(),
        "Tell the operator about progress without ending the run (never twice in a row).",
        _obj(["message"], message=_STR),
        implementation="control_center.harness.verbs:report_progress",
        verb=True,
        not_twice_in_a_row=True,
    ),
    ToolSpec(
        "plan_respond",
        Tier.READ,
        frozenset(),
        "Reply to the operator in plan mode; set needs_more_exploration to keep exploring.",
        _obj(["response"], response=_STR, needs_more_exploration={"type": "boolean"}),
        implementation="control_center.harness.verbs:plan_respond",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "write_file",
        Tier.WRITE,
        frozenset({Effect.WORKTREE_WRITE}),
        "Write a file of the worktree (creates missing parent folders).",
        _obj(["path", "content"], path=_PATH, content=_STR),
        implementation="control_center.harness.tools.files:write_file",
        paths=(PathArg("path", Access.WRITE),),
        preview=Preview("Write", "path", after=_written, body="content", in_diff=("content",)),
        bound=_own_output("a one-line result"),
    ),
    ToolSpec(
        "edit_file",
        Tier.WRITE,
        frozenset({Effect.WORKTREE_WRITE}),
        "Replace exactly one occurrence of `old` with `new` in a worktree file.",
        _obj(["path", "old", "new"], path=_PATH, old=_STR, new=_STR),
        implementation="control_center.harness.tools.files:edit_file",
        paths=(PathArg("path", Access.WRITE),),
        preview=Preview("Edit", "path", after=_edited, in_diff=("old", "new")),
        bound=_own_output("a one-line result"),
    ),
    ToolSpec(
        "delete_file",
        Tier.WRITE,
        frozenset({Effect.FILE_DELETE}),
        "Delete a file of the worktree.",
        _obj(["path"], path=_PATH),
        implementation="control_center.harness.tools.files:delete_file",
        paths=(PathArg("path", Access.WRITE),),
        preview=Preview("Delete", "path", after=_deleted),
        bound=_own_output("a one-line result"),
    ),
    ToolSpec(
        "git_commit",
        Tier.WRITE,
        frozenset({Effect.COMMIT}),
        "Commit all changes of the worktree with a message.",
        _obj(["message"], message=_STR),
        implementation="control_center.harness.tools.git:git_commit",
        bound=_own_output("the first 100,000 characters"),
    ),
    ToolSpec(
        "add_review_node",
        Tier.WRITE,
        frozenset(),
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
        implementation="control_center.harness.verbs:add_review_node",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "finalize_review",
        Tier.WRITE,
        frozenset(),
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
        implementation="control_center.harness.verbs:finalize_review",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "confirm_review_node",
        Tier.WRITE,
        frozenset(),
        "Confirm another reviewer's finding (never your own).",
        _obj(["node_id"], node_id=_STR),
        implementation="control_center.harness.verbs:confirm_review_node",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "create_ticket",
        Tier.WRITE,
        frozenset(),
        "Open a ticket.",
        _obj(["title"], title=_STR, body=_STR, parent=_STR),
        implementation="control_center.harness.verbs:create_ticket",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "post_message",
        Tier.WRITE,
        frozenset(),
        "Post a message to the room.",
        _obj(["text"], text=_STR, to=_STR),
        implementation="control_center.harness.verbs:post_message",
        verb=True,
    ),
    ToolSpec(
        "run_command",
        Tier.EXECUTE,
        frozenset({Effect.PROCESS_SPAWN}),
        "Run a shell command in the worktree.",
        _obj(["command"], command=_STR, timeout_s={"type": "number", "exclusiveMinimum": 0}),
        implementation="control_center.harness.tools.shell:run_command",
        command_arg="command",
        preview=Preview("Run", "command", code=True),
        bound=COMMAND_BOUND,
    ),
    ToolSpec(
        "git_push",
        Tier.EXECUTE,
        frozenset({Effect.PUSH}),
        "Push the worktree's branch to a remote.",
        _obj([], remote=_STR, branch=_STR),
        implementation="control_center.harness.extra_tools:git_push",
        bound=_own_output("git's own lines", limit_s=180.0),
    ),
    ToolSpec(
        "create_pr",
        Tier.EXECUTE,
        frozenset({Effect.PR_CREATE}),
        "Open a pull request for the worktree's branch.",
        _obj(["title"], title=_STR, body=_STR, base=_STR),
        implementation="control_center.harness.extra_tools:create_pr",
        workspace=True,
        bound=_own_output("a one-line result"),
    ),
    ToolSpec(
        "install_package",
        Tier.EXECUTE,
        frozenset({Effect.PACKAGE_INSTALL}),
        "Install a package into the project's environment.",
        _obj(["name"], name=_STR, manager=_STR),
        implementation="control_center.harness.extra_tools:install_package",
        bound=_own_output("the last 4,000 characters"),
    ),
    ToolSpec(
        "submit_plan",
        Tier.READ,
        frozenset(),
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
        implementation="control_center.harness.verbs:submit_plan",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "exit_plan_mode",
        Tier.READ,
        frozenset(),
        "Ask the operator for permission to leave plan mode (an approval gate, not a deliverable).",
        _obj([], summary=_STR),
        implementation="control_center.harness.verbs:exit_plan_mode",
        verb=True,
        kept_whole=True,
    ),
    ToolSpec(
        "propose_orchestration",
        Tier.READ,
        frozenset(),
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
        implementation="control_center.harness.verbs:propose_orchestration",
        verb=True,
        kept_whole=True,
    ),
)


def catalogue_of(specs: Iterable[ToolSpec]) -> MappingProxyType[str, ToolSpec]:
    """A catalogue (name -> declaration) in declaration order."""
    return MappingProxyType({spec.name: spec for spec in specs})


#: Every tool, in catalogue order. Read it through ``catalogue()`` / ``find()`` at call time.
CATALOGUE: MappingProxyType[str, ToolSpec] = catalogue_of(_DECLARED)


def catalogue() -> MappingProxyType[str, ToolSpec]:
    return CATALOGUE


def find(name: str) -> ToolSpec | None:
    """The declaration of ``name``, or None for a name no tool has."""
    return CATALOGUE.get(name)


def tool(name: str) -> ToolSpec:
    return CATALOGUE[name]
