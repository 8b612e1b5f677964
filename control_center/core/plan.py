"""Plan graphs: the typed dependency graph plan mode delivers (SPEC §5)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from typing import Any


class PlanError(ValueError):
    """A plan that does not validate; the message is written for the model to fix it."""


#: Bounds on what a node may ask to be checked with (the model writes these).
MAX_CHECKS_PER_NODE = 10
MAX_CHECK_COMMAND_CHARS = 2_000


@dataclass(frozen=True)
class PlanCheck:
    """An acceptance check of a plan node: a command run on the node's worktree after its turn.
    ``command`` is a shell line (a string, run as ``sh -c``) or an argv (a tuple, run as is); the
    check passes when it exits ``expect_exit`` and, when ``expect_output`` is given, that regular
    expression matches somewhere in its output."""

    command: str | tuple[str, ...]
    expect_exit: int = 0
    expect_output: str | None = None

    @property
    def argv(self) -> list[str]:
        return ["sh", "-c", self.command] if isinstance(self.command, str) else list(self.command)

    @property
    def label(self) -> str:
        """The command as the operator reads it."""
        if isinstance(self.command, str):
            return self.command
        return " ".join(_shell_word(a) for a in self.command)

    def describe(self) -> str:
        """ "`pytest -q` exits 0 and prints /passed/"."""
        words = f"`{self.label}` exits {self.expect_exit}"
        if self.expect_output is not None:
            words += f" and prints /{self.expect_output}/"
        return words

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "command": self.command if isinstance(self.command, str) else list(self.command),
            "expect_exit": self.expect_exit,
        }
        if self.expect_output is not None:
            out["expect_output"] = self.expect_output
        return out


def _shell_word(word: str) -> str:
    if word and re.fullmatch(r"[\w@%+=:,./-]+", word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


@dataclass(frozen=True)
class PlanNode:
    key: str
    title: str
    description: str
    depends_on: tuple[str, ...]
    checks: tuple[PlanCheck, ...] = field(default=())


@dataclass(frozen=True)
class PlanGraph:
    goal: str
    nodes: tuple[PlanNode, ...]

    def node(self, key: str) -> PlanNode:
        for n in self.nodes:
            if n.key == key:
                return n
        raise KeyError(key)

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        """(dependency, dependent) pairs."""
        return tuple((dep, n.key) for n in self.nodes for dep in n.depends_on)

    def to_json(self) -> dict[str, Any]:
        return {"goal": self.goal, "nodes": [node_to_json(n) for n in self.nodes]}

    def content_hash(self) -> str:
        blob = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    def topological_order(self) -> tuple[str, ...]:
        ts = TopologicalSorter({n.key: n.depends_on for n in self.nodes})
        return tuple(ts.static_order())


def node_to_json(n: PlanNode) -> dict[str, Any]:
    """A node as ``submit_plan`` takes it. ``checks`` only when there are some, so a plan without
    checks keeps the content hash it had before checks existed."""
    out: dict[str, Any] = {
        "key": n.key,
        "title": n.title,
        "description": n.description,
        "depends_on": list(n.depends_on),
    }
    if n.checks:
        out["checks"] = [c.to_json() for c in n.checks]
    return out


def parse_checks(raw: Any, where: str) -> tuple[PlanCheck, ...]:
    """``checks`` of one node, or :class:`PlanError` naming the first bad one."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise PlanError(f"{where}.checks must be a list of checks")
    if len(raw) > MAX_CHECKS_PER_NODE:
        raise PlanError(f"{where}.checks has {len(raw)} checks; at most {MAX_CHECKS_PER_NODE}")
    checks: list[PlanCheck] = []
    for i, item in enumerate(raw):
        at = f"{where}.checks[{i}]"
        if not isinstance(item, dict):
            raise PlanError(f"{at} must be an object with a 'command'")
        unknown = sorted(set(item) - {"command", "expect_exit", "expect_output"})
        if unknown:
            raise PlanError(f"{at} has unknown field(s) {', '.join(unknown)}")
        command = item.get("command")
        parsed: str | tuple[str, ...]
        if isinstance(command, str):
            if not command.strip():
                raise PlanError(f"{at}.command must not be empty")
            if "\x00" in command:
                raise PlanError(f"{at}.command contains a NUL character")
            parsed = command
            size = len(command)
        elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
            if not command[0].strip():
                raise PlanError(f"{at}.command's program (its first word) must not be empty")
            if any("\x00" in a for a in command):
                raise PlanError(f"{at}.command contains a NUL character")
            parsed = tuple(command)
            size = sum(len(a) for a in command)
        else:
            raise PlanError(f"{at}.command must be a shell line (string) or an argv (list of strings)")
        if size > MAX_CHECK_COMMAND_CHARS:
            raise PlanError(f"{at}.command is longer than {MAX_CHECK_COMMAND_CHARS} characters")
        expect_exit = item.get("expect_exit", 0)
        if isinstance(expect_exit, bool) or not isinstance(expect_exit, int) or not 0 <= expect_exit <= 255:
            raise PlanError(f"{at}.expect_exit must be a whole number from 0 to 255")
        pattern = item.get("expect_output")
        if pattern is not None:
            if not isinstance(pattern, str) or not pattern:
                raise PlanError(f"{at}.expect_output must be a non-empty regular expression")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise PlanError(f"{at}.expect_output is not a valid regular expression: {exc}") from None
        checks.append(PlanCheck(parsed, expect_exit, pattern))
    return tuple(checks)


def parse_plan(data: Any) -> PlanGraph:
    """Validate ``submit_plan`` input into a graph, or raise :class:`PlanError` saying what is wrong."""
    if not isinstance(data, dict):
        raise PlanError("the plan must be an object with 'goal' and 'nodes'")
    goal = data.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise PlanError("'goal' must be a non-empty string")
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise PlanError("'nodes' must be a non-empty list: a plan has at least one node")
    nodes: list[PlanNode] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_nodes):
        where = f"nodes[{i}]"
        if not isinstance(raw, dict):
            raise PlanError(f"{where} must be an object")
        key = raw.get("key")
        if not isinstance(key, str) or not key.strip():
            raise PlanError(f"{where}.key must be a non-empty string")
        if key in seen:
            raise PlanError(f"duplicate node key {key!r}: keys must be unique")
        seen.add(key)
        title = raw.get("title")
        if not isinstance(title, str) or not title.strip():
            raise PlanError(f"{where} ({key!r}).title must be a non-empty string")
        description = raw.get("description", "")
        if not isinstance(description, str):
            raise PlanError(f"{where} ({key!r}).description must be a string")
        deps = raw.get("depends_on", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            raise PlanError(f"{where} ({key!r}).depends_on must be a list of node keys")
        if key in deps:
            raise PlanError(f"node {key!r} depends on itself")
        checks = parse_checks(raw.get("checks"), f"{where} ({key!r})")
        nodes.append(PlanNode(key, title, description, tuple(dict.fromkeys(deps)), checks))
    for n in nodes:
        for d in n.depends_on:
            if d not in seen:
                raise PlanError(f"node {n.key!r} depends on {d!r}, which is not a node of this plan")
    try:
        TopologicalSorter({n.key: n.depends_on for n in nodes}).prepare()
    except CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise PlanError(f"the dependencies form a cycle: {cycle}") from None
    return PlanGraph(goal.strip(), tuple(nodes))
