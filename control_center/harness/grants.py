"""Which stored grant rule (core/grants.py) answers a call at the approval gate, if any.

Fails closed: a call a rule cannot be shown to cover asks the operator as before.

- A command is read with bash's grammar (tree-sitter-bash, as the hook reads it) into the argv of
  each simple command. Anything whose argv is not known before it runs is no match: expansions,
  substitutions (``$(…)``, backticks, ``<(…)``), globs, braces, tildes, backslashes, ANSI-C
  strings, variable assignments (``X=1 pytest``), background jobs (``&``), subshells, compound
  commands, functions, comments, heredocs, redirections other than ``2>&1`` and ``>/dev/null``.
- Composition (``;``, newline, ``&&``, ``||``, ``|``) matches only when EVERY part matches a rule.
- EXACT is the whole argv, PREFIX the first whole words: ``pytest`` never covers ``pytest-evil``.
- A rule never matches what the profile refuses: a tool off the surface, a denied effect class
  (the guardrail), a read-only posture for anything that changes the worktree, or a command the
  Claude Code hook refuses in that mode.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tree_sitter

from control_center.core.git_paths import reaches_git_dir
from control_center.core.grants import (
    GrantRule,
    MatchKind,
    command_arg,
    glob_problem,
    glob_regex,
    match_kinds_for,
    written_path_arg,
)
from control_center.core.profiles import CapabilityProfile
from control_center.core.surface import Deny, guardrail
from control_center.core.tools import ToolSpec
from control_center.harness.transports.command_syntax import _parser

#: Longer command lines are never matched (the operator reads what they approve).
MAX_COMMAND_CHARS = 8_000
_MAX_NODES = 2_000
#: Unquoted characters whose meaning bash decides at run time (globs, braces, tilde, escapes,
#: expansions) or that a reading could get wrong.
_UNQUOTED_SPECIAL = frozenset("*?[]{}~\\$`!#'\"<>()&;|\n\r\t\x00")
_DQ_SPECIAL = frozenset('\\$`!"\x00')
#: The only redirections a rule covers: duplicating stderr onto stdout and discarding output.
_HARMLESS_REDIRECT = re.compile(r"^(?:[12]?>&[12]|(?:[12]|&)?>>?\s*/dev/null)$")
_GAP = re.compile(r"^[ \t]+$")
#: Control characters other than tab and newline (NUL, \v, \f, \r, ...): the grammar reads
#: some as blanks where ``sh`` reads them as part of a word (``./run.sh\v`` runs another file),
#: so a line holding one never matches a rule, quoted or not.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

Argv = tuple[str, ...]


class _NoMatch(Exception):
    pass


def command_parts(command: str) -> list[Argv] | None:
    """The argv of every simple command on the line, or None when any part is not a plain
    command of words known now (see the module's docstring)."""
    if not command.strip() or len(command) > MAX_COMMAND_CHARS or _CONTROL.search(command):
        return None
    source = command.encode("utf-8", errors="surrogateescape")
    try:
        root = _parser().parse(source).root_node
        if root.has_error or root.descendant_count > _MAX_NODES:
            return None
        parts: list[Argv] = []
        _Reader(source, parts).program(root)
    except (_NoMatch, RecursionError):
        return None
    return parts or None


class _Reader:
    def __init__(self, source: bytes, parts: list[Argv]) -> None:
        self.source = source
        self.parts = parts

    def text(self, node: tree_sitter.Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", errors="surrogateescape")

    def program(self, node: tree_sitter.Node) -> None:
        for child in node.children:
            if child.type == ";":
                continue
            if not child.is_named:
                raise _NoMatch  # `&` (a background job) and anything else between statements
            self.statement(child)

    def statement(self, node: tree_sitter.Node) -> None:
        match node.type:
            case "command":
                self.command(node)
            case "list":
                for child in node.children:
                    if child.is_named:
                        self.statement(child)
                    elif child.type not in ("&&", "||"):
                        raise _NoMatch
            case "pipeline":
                for child in node.children:
                    if child.is_named:
                        self.statement(child)
                    elif child.type != "|":
                        raise _NoMatch  # `|&` and anything unexpected
            case "redirected_statement":
                body = node.child_by_field_name("body")
                if body is None:
                    raise _NoMatch
                for child in node.children:
                    if child.id == body.id:
                        continue
                    if child.type != "file_redirect" or not _HARMLESS_REDIRECT.match(self.text(child)):
                        raise _NoMatch
                self.statement(body)
            case _:
                raise _NoMatch

    def command(self, node: tree_sitter.Node) -> None:
        argv: list[str] = []
        children = node.children
        for i, child in enumerate(children):
            if i and not _GAP.match(self.source[children[i - 1].end_byte : child.start_byte].decode()):
                raise _NoMatch  # two words where bash may read one, or a line continuation
            if child.type == "command_name":
                if i != 0 or child.named_child_count != 1 or child.child_count != 1:
                    raise _NoMatch
                argv.append(self.word(child.children[0]))
            else:
                argv.append(self.word(child))
        if not argv:
            raise _NoMatch
        self.parts.append(tuple(argv))

    def word(self, node: tree_sitter.Node) -> str:
        raw = self.text(node)
        match node.type:
            case "word" | "number":
                if not raw or any(c in _UNQUOTED_SPECIAL for c in raw):
                    raise _NoMatch
                return raw
            case "raw_string":
                if len(raw) < 2 or not (raw.startswith("'") and raw.endswith("'")) or "'" in raw[1:-1]:
                    raise _NoMatch
                return raw[1:-1]
            case "string":
                inner = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == '"' else None
                if inner is None or any(c in _DQ_SPECIAL for c in inner):
                    raise _NoMatch
                if any(c.type not in ('"', "string_content") for c in node.children):
                    raise _NoMatch
                return inner
            case "concatenation":
                out: list[str] = []
                prev: tree_sitter.Node | None = None
                for child in node.children:
                    if prev is not None and prev.end_byte != child.start_byte:
                        raise _NoMatch
                    out.append(self.word(child))
                    prev = child
                return "".join(out)
        raise _NoMatch


def argv_of_pattern(pattern: str) -> Argv | None:
    """A rule's pattern as one argv (a single plain command), or None."""
    parts = command_parts(pattern)
    return parts[0] if parts is not None and len(parts) == 1 else None


def argv_matches(rule_argv: Sequence[str], kind: MatchKind, argv: Sequence[str]) -> bool:
    if kind is MatchKind.EXACT:
        return tuple(argv) == tuple(rule_argv)
    if kind is MatchKind.PREFIX:
        return len(argv) >= len(rule_argv) and tuple(argv[: len(rule_argv)]) == tuple(rule_argv)
    return False


def relative_path(worktree: Path, path: str) -> str | None:
    """The call's path as the worktree-relative posix path it resolves to (symlinks followed),
    or None when it leaves the worktree or cannot be resolved."""
    from control_center.harness.tools.base import ToolError
    from control_center.harness.tools.paths import resolve_in_worktree

    try:
        resolved = resolve_in_worktree(worktree, path, must_exist=False)
        rel = resolved.relative_to(worktree.resolve())
    except (ToolError, OSError, ValueError):
        return None
    text = rel.as_posix()
    return None if text in ("", ".") else text


# -- what a profile lets a rule cover ------------------------------------------------------------


def profile_refuses(spec: ToolSpec, profile: CapabilityProfile, args: dict[str, Any]) -> bool:
    """Whether the call is one a rule must never answer, whatever its pattern: the guardrail
    refuses it, the posture is read-only and the call changes something, or (a command) the
    Claude Code hook would refuse it in this mode."""
    if isinstance(guardrail(spec, profile), Deny):
        return True
    if profile.read_only and spec.effects:
        return True
    if spec.command_arg:
        from control_center.harness.transports.claude_hook import decide

        command = args.get(spec.command_arg)
        if not isinstance(command, str):
            return True
        verdict = decide(profile.mode.value, {"tool_name": "Bash", "tool_input": {"command": command}})
        return not verdict.allowed
    return False


# -- an index of rules for one call --------------------------------------------------------------


@dataclass(frozen=True)
class _Compiled:
    rule: GrantRule
    argv: Argv = ()
    glob: re.Pattern[str] | None = None


@functools.lru_cache(maxsize=4096)
def _compile(rule: GrantRule) -> _Compiled | None:
    if rule.match in (MatchKind.EXACT, MatchKind.PREFIX):
        argv = argv_of_pattern(rule.pattern)
        return _Compiled(rule, argv=argv) if argv else None
    if rule.match is MatchKind.GLOB:
        return None if glob_problem(rule.pattern) else _Compiled(rule, glob=glob_regex(rule.pattern))
    return _Compiled(rule)


class RuleIndex:
    """Active rules by tool (and, for commands, by program name): matching a call looks at the
    few rules that can cover it, however many there are."""

    def __init__(self, rules: Iterable[GrantRule]) -> None:
        self.by_tool: dict[str, list[_Compiled]] = {}
        self.commands: dict[str, list[_Compiled]] = {}
        for rule in rules:
            compiled = _compile(rule)
            if compiled is None or rule.match not in match_kinds_for(rule.tool):
                continue  # a stored rule this code cannot read covers nothing
            if command_arg(rule.tool):
                self.commands.setdefault(compiled.argv[0], []).append(compiled)
            else:
                self.by_tool.setdefault(rule.tool, []).append(compiled)

    def __bool__(self) -> bool:
        return bool(self.by_tool or self.commands)

    def match(
        self,
        spec: ToolSpec,
        profile: CapabilityProfile,
        args: dict[str, Any],
        worktree: Path,
        *,
        space_id: str | None = None,
        turn_id: str | None = None,
        now: str | None = None,
    ) -> GrantRule | None:
        """The rule that answers this call (for a composed command line: the one that answers
        its first part; every part has one), or None. Only rules whose scope holds for this
        space and turn, and (given ``now``) that have not expired, answer."""
        if not self or profile_refuses(spec, profile, args):
            return None

        def holds(rule: GrantRule) -> bool:
            if now is not None and not rule.active(now):
                return False
            return rule.applies_to(space_id=space_id, turn_id=turn_id)

        name = spec.name
        if spec.command_arg:
            command = args.get(spec.command_arg)
            parts = command_parts(command) if isinstance(command, str) else None
            if parts is None:
                return None
            first: GrantRule | None = None
            for argv in parts:
                found = next(
                    (
                        c.rule
                        for c in self.commands.get(argv[0], ())
                        if c.rule.tool == name and argv_matches(c.argv, c.rule.match, argv) and holds(c.rule)
                    ),
                    None,
                )
                if found is None:
                    return None
                first = first or found
            return first
        candidates = self.by_tool.get(name, ())
        if not candidates:
            return None
        if spec.written_path:
            raw = args.get(spec.written_path)
            rel = relative_path(worktree, raw) if isinstance(raw, str) else None
            if rel is None or reaches_git_dir(rel.split("/")):
                return None
            return next(
                (c.rule for c in candidates if c.glob is not None and c.glob.match(rel) and holds(c.rule)),
                None,
            )
        return next((c.rule for c in candidates if c.rule.match is MatchKind.TOOL and holds(c.rule)), None)


# -- the rule an approval's grant makes -----------------------------------------------------------


class RuleProblem(ValueError):
    """A rule that cannot be made (one line for the operator)."""


def default_pattern(tool: str, args: dict[str, Any], worktree: Path | None) -> tuple[MatchKind, str]:
    """What a rule made from this call covers when the operator names nothing: the call's own
    command exactly, its own path, or the tool."""
    command_key, path_key = command_arg(tool), written_path_arg(tool)
    if command_key:
        command = args.get(command_key)
        parts = command_parts(command) if isinstance(command, str) else None
        if parts is None or len(parts) != 1:
            raise RuleProblem(
                "this command is not one plain command (it is composed, or holds expansions): grant it "
                "for this call only, or name a --pattern"
            )
        return MatchKind.EXACT, shlex.join(parts[0])
    if path_key:
        path = args.get(path_key)
        rel = relative_path(worktree, path) if worktree is not None and isinstance(path, str) else None
        if rel is None:
            raise RuleProblem(f"the {tool} call has no path inside the worktree to make a rule from")
        return MatchKind.GLOB, rel
    return MatchKind.TOOL, ""


def check_rule(tool: str, match: MatchKind, pattern: str, args: dict[str, Any], worktree: Path | None) -> str:
    """The rule's pattern normalized, checked to be a valid rule for ``tool`` that covers the
    call it is made from (``args``); RuleProblem otherwise."""
    allowed = match_kinds_for(tool)
    if match not in allowed:
        raise RuleProblem(
            f"a rule for {tool} matches by {' or '.join(k.value for k in allowed)}, not {match.value}"
        )
    if match in (MatchKind.EXACT, MatchKind.PREFIX):
        argv = argv_of_pattern(pattern)
        if argv is None:
            raise RuleProblem(
                f"pattern {pattern!r} is not one plain command of fixed words (no ;, &&, |, $, globs, "
                "quotes that hide them, or redirections)"
            )
        command = args.get(command_arg(tool) or "")
        parts = command_parts(command) if isinstance(command, str) else None
        if parts is None or not all(argv_matches(argv, match, p) for p in parts):
            raise RuleProblem(
                f"pattern {shlex.join(argv)!r} ({match.value}) does not cover the call's command"
            )
        return shlex.join(argv)
    if match is MatchKind.GLOB:
        problem = glob_problem(pattern)
        if problem:
            raise RuleProblem(problem)
        raw = args.get(written_path_arg(tool) or "")
        rel = relative_path(worktree, raw) if worktree is not None and isinstance(raw, str) else None
        if rel is None or not glob_regex(pattern).match(rel):
            raise RuleProblem(f"path glob {pattern!r} does not cover the call's path {raw!r}")
        return pattern
    return ""
