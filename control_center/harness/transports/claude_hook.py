"""The Claude Code PreToolUse hook (``control-center hook claude-code --mode MODE``, SPEC §9, §11).

Claude Code runs this command before a hooked tool call, with its hook JSON on stdin. The
decision is computed from the mode's capability profile, never from the mode's name: a profile
with no denied effect classes allows everything; any other profile refuses tools whose Claude
equivalent is off its surface and every shell command line that is not provably read-only.

A command-line check can only be as strict as its reading of the line, so this one fails closed:
anything it cannot parse, any command it does not know and any command computed at run time is
refused. On this transport the mode is guidance, not a boundary (SPEC §9); this is the one place
where it gets as close to one as a command-line check can.

Denial (verified with Claude Code 2.1.328): exit code 2 with the reason on stderr, plus the
documented ``permissionDecision: "deny"`` JSON on stdout, whose reason Claude Code then shows to
the model. An explicit allow (chat) prints ``permissionDecision: "allow"`` and exits 0; any other
allow exits 0 silently, which leaves Claude Code's own permission mode in charge.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import CapabilityProfile, profile_for
from control_center.core.surface import materialize_surface
from control_center.core.tools import CATALOGUE

EXIT_ALLOW = 0
#: Claude Code blocks a PreToolUse call only on exit code 2 (exit 1 is a non-blocking error).
EXIT_DENY = 2

#: Claude Code's own tools and the catalogue tools whose surface membership decides them.
CLAUDE_TOOL_EQUIVALENTS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "Read": ("read_file",),
        "NotebookRead": ("read_file",),
        "Glob": ("list_files",),
        "LS": ("list_files",),
        "Grep": ("search_files",),
        "Write": ("write_file",),
        "Edit": ("edit_file",),
        "MultiEdit": ("edit_file",),
        "NotebookEdit": ("edit_file",),
        "WebFetch": ("fetch_url",),
        "WebSearch": ("fetch_url",),
        "Bash": ("run_command",),
    }
)
#: The hook's matchers on the transport: the shell and every file-writing tool.
HOOKED_TOOLS: tuple[str, ...] = ("Bash", "Write", "Edit", "MultiEdit", "NotebookEdit")
_MCP_PREFIX = "mcp__"
_MAX_DEPTH = 8


@dataclass(frozen=True)
class HookDecision:
    allowed: bool
    reason: str
    #: A positive allow that skips Claude Code's permission prompt (only where the profile
    #: denies nothing); otherwise an allow means "no objection" and Claude's own mode decides.
    explicit: bool = False

    def to_json(self) -> dict[str, Any]:
        decision = "allow" if self.allowed else "deny"
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": self.reason,
            }
        }


def claude_tool_on_surface(tool_name: str, surface: frozenset[str]) -> bool | None:
    """Whether a Claude Code tool maps onto the surface; None when it has no equivalent."""
    if tool_name.startswith(_MCP_PREFIX):
        # mcp__<server>__<tool>: the tool's own name decides, whichever server offers it.
        return tool_name.split("__", 2)[-1] in surface
    equivalents = CLAUDE_TOOL_EQUIVALENTS.get(tool_name)
    if equivalents is None:
        return None
    return all(name in surface for name in equivalents)


def surface_names(profile: CapabilityProfile) -> frozenset[str]:
    # Autonomy decides approvals, never visibility, so any level gives the same names.
    return frozenset(t.name for t in materialize_surface(profile, Autonomy.ASK, Transport.CLAUDE_CODE))


# -- the decision -------------------------------------------------------------------------------


def decide(mode: str, payload: object) -> HookDecision:
    """The hook's verdict for one call. Fails closed on an unknown mode or malformed input."""
    try:
        profile = profile_for(Mode(mode))
    except ValueError:
        allowed = ", ".join(m.value for m in Mode)
        return HookDecision(False, f"Control Center hook: unknown mode {mode!r} (expected one of {allowed})")
    if not isinstance(payload, dict):
        return HookDecision(False, "Control Center hook: the hook input is not a JSON object")
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return HookDecision(False, "Control Center hook: the hook input has no tool_name")
    tool_input = payload.get("tool_input")
    command: str | None = None
    if tool == "Bash":
        if not isinstance(tool_input, dict) or not isinstance(tool_input.get("command"), str):
            return HookDecision(False, "Control Center hook: a Bash call without a string tool_input.command")
        command = tool_input["command"]
    if not profile.denied_effects and not profile.read_only:
        return HookDecision(True, f"{profile.label} mode allows {tool}", explicit=True)
    prefix = f"Control Center: {profile.label} mode is read-only"
    if command is not None:
        ok, why = classify_bash(command)
        if ok:
            return HookDecision(True, why)
        return HookDecision(
            False,
            f"{prefix}: {why}. Only read-only commands run here (ls, cat, grep, find, git status, "
            "git diff, git log, ...); describe the change instead of making it.",
        )
    on_surface = claude_tool_on_surface(tool, surface_names(profile))
    if on_surface:
        return HookDecision(True, f"{tool} is on the {profile.label} surface")
    if on_surface is None:
        return HookDecision(False, f"{prefix}: {tool} is not a tool this hook knows, so it is refused")
    return HookDecision(False, f"{prefix}: {tool} {_effects_phrase(tool)}, which this mode does not allow")


def _effects_phrase(tool: str) -> str:
    names = CLAUDE_TOOL_EQUIVALENTS.get(tool, ())
    effects = sorted({e.value for n in names if n in CATALOGUE for e in CATALOGUE[n].effects})
    if effects:
        return "has effects " + ", ".join(effects)
    return "is off this mode's tool surface"


# -- the command line ---------------------------------------------------------------------------


class _ParseError(Exception):
    pass


@dataclass
class _Word:
    text: str
    #: Holds an unquoted expansion ($VAR, $(...), `...`): its value is only known at run time.
    dynamic: bool = False
    quoted: bool = False
    #: Holds an unquoted glob or brace pattern: it may expand to any file name, ``-delete`` too.
    glob: bool = False


@dataclass
class _Segment:
    words: list[_Word] = field(default_factory=list)
    #: (operator, target) pairs, e.g. (">", "/dev/null") or (">&", "1").
    redirects: list[tuple[str, _Word]] = field(default_factory=list)


@dataclass
class _Parsed:
    segments: list[_Segment]
    #: Command lines that run inside this one: $(...), `...`, <(...), >(...).
    nested: list[str]


def _matching_paren(src: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` just before ``start``; quotes and nesting respected."""
    depth, i, n = 1, start, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = src.find("'", i + 1)
            if j < 0:
                raise _ParseError("unterminated single quote")
            i = j + 1
            continue
        if c == '"':
            i = _double_quote_end(src, i + 1)
            continue
        if c == "`":
            i = _backtick_end(src, i + 1) + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise _ParseError("unbalanced parentheses")


def _double_quote_end(src: str, start: int) -> int:
    """Index just past the ``"`` closing a double-quoted string that starts at ``start``."""
    i, n = start, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c == "$" and src.startswith("$(", i):
            i = _matching_paren(src, i + 2) + 1
            continue
        if c == "`":
            i = _backtick_end(src, i + 1) + 1
            continue
        i += 1
    raise _ParseError("unterminated double quote")


def _backtick_end(src: str, start: int) -> int:
    i, n = start, len(src)
    while i < n:
        if src[i] == "\\":
            i += 2
            continue
        if src[i] == "`":
            return i
        i += 1
    raise _ParseError("unterminated backquote")


def _unescape_backticks(inner: str) -> str:
    return re.sub(r"\\([\\`$])", r"\1", inner)


class _Lexer:
    """Reads a bash command line into simple commands, their redirections and the command lines
    nested inside it. It does not evaluate anything; whatever it cannot read raises _ParseError."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.i = 0
        self.segments: list[_Segment] = []
        self.nested: list[str] = []
        self.seg = _Segment()
        self.chars: list[str] = []
        self.unquoted: list[str] = []
        self.started = False
        self.dynamic = False
        self.quoted = False
        self.pending_redirect: str | None = None
        self.heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, expands)

    def parse(self) -> _Parsed:
        src, n = self.src, len(self.src)
        while self.i < n:
            c = src[self.i]
            if c == "\\":
                if src.startswith("\\\n", self.i):
                    self.i += 2  # a line continuation
                    continue
                self._add(src[self.i + 1 : self.i + 2] or "\\", quoted=True)
                self.i += 2
            elif c == "'":
                j = src.find("'", self.i + 1)
                if j < 0:
                    raise _ParseError("unterminated single quote")
                self._add(src[self.i + 1 : j], quoted=True)
                self.i = j + 1
            elif c == '"':
                self._double_quoted()
            elif c == "`":
                j = _backtick_end(src, self.i + 1)
                self.nested.append(_unescape_backticks(src[self.i + 1 : j]))
                self._add("`…`", dynamic=True)
                self.i = j + 1
            elif c == "$":
                self._dollar()
            elif c == "#" and not self.started:
                j = src.find("\n", self.i)
                self.i = n if j < 0 else j
            elif c in " \t":
                self._end_word()
                self.i += 1
            elif c in "<>" and src.startswith("(", self.i + 1):
                end = _matching_paren(src, self.i + 2)
                self.nested.append(src[self.i + 2 : end])
                self._add("/dev/fd/N", dynamic=True)
                self.i = end + 1
            elif c in "<>" or src.startswith("&>", self.i):
                self._redirect()
            elif c in "\n;&|()":
                self._operator(c)
            else:
                self._add(c)
                self.unquoted.append(c)
                self.i += 1
        self._end_segment()
        if self.heredocs:
            raise _ParseError("a here-document has no body")
        return _Parsed(self.segments, self.nested)

    # -- words ----------------------------------------------------------------------------------

    def _add(self, text: str, *, quoted: bool = False, dynamic: bool = False) -> None:
        self.chars.append(text)
        self.started = True
        self.quoted = self.quoted or quoted
        self.dynamic = self.dynamic or dynamic

    def _double_quoted(self) -> None:
        src = self.src
        end = _double_quote_end(src, self.i + 1)
        body = src[self.i + 1 : end - 1]
        dynamic = self._collect_expansions(body)
        text = re.sub(r'\\([\\$`"\n])', r"\1", body)
        self._add(text, quoted=True, dynamic=dynamic)
        self.i = end

    def _collect_expansions(self, text: str) -> bool:
        """Queue the command substitutions inside double-quoted or here-document text; returns
        whether the text expands anything at run time."""
        dynamic, i, n = False, 0, len(text)
        while i < n:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if text.startswith("$(", i):
                end = _matching_paren(text, i + 2)
                self._substitution(text[i + 2 : end])
                dynamic, i = True, end + 1
                continue
            if c == "`":
                j = _backtick_end(text, i + 1)
                self.nested.append(_unescape_backticks(text[i + 1 : j]))
                dynamic, i = True, j + 1
                continue
            if c == "$":
                dynamic = True
            i += 1
        return dynamic

    def _substitution(self, inner: str) -> None:
        if inner.startswith("(") and inner.endswith(")"):
            # $((...)) is arithmetic; only a substitution nested in it runs anything.
            if "$(" in inner or "`" in inner:
                self.nested.append(inner[1:-1])
            return
        self.nested.append(inner)

    def _dollar(self) -> None:
        src = self.src
        if src.startswith("$(", self.i):
            end = _matching_paren(src, self.i + 2)
            self._substitution(src[self.i + 2 : end])
            self._add("$(…)", dynamic=True)
            self.i = end + 1
        elif src.startswith("${", self.i):
            end = src.find("}", self.i)
            if end < 0:
                raise _ParseError("unterminated ${")
            self._collect_expansions(src[self.i + 2 : end])
            self._add(src[self.i : end + 1], dynamic=True)
            self.i = end + 1
        elif src.startswith("$'", self.i):
            # ANSI-C quoting: escapes make the text unknowable for a simple reader.
            j = self.i + 2
            while j < len(src) and src[j] != "'":
                j += 2 if src[j] == "\\" else 1
            if j >= len(src):
                raise _ParseError("unterminated $'...'")
            self._add(src[self.i : j + 1], quoted=True, dynamic=True)
            self.i = j + 1
        else:
            self._add("$", dynamic=True)
            self.i += 1

    def _end_word(self) -> None:
        if not self.started:
            return
        bare = "".join(self.unquoted)
        glob = bool(re.search(r"[*?[]", bare) or re.search(r"\{[^}]*(,|\.\.)[^}]*\}", bare))
        word = _Word("".join(self.chars), self.dynamic, self.quoted, glob)
        self.chars, self.unquoted, self.started, self.dynamic, self.quoted = [], [], False, False, False
        if self.pending_redirect is not None:
            op, self.pending_redirect = self.pending_redirect, None
            if op in ("<<", "<<-"):
                self.heredocs.append((word.text, op == "<<-", not word.quoted))
            self.seg.redirects.append((op, word))
        else:
            self.seg.words.append(word)

    def _end_segment(self) -> None:
        self._end_word()
        if self.pending_redirect is not None:
            raise _ParseError(f"a redirection `{self.pending_redirect}` has no target")
        if self.seg.words or self.seg.redirects:
            self.segments.append(self.seg)
        self.seg = _Segment()

    # -- operators ------------------------------------------------------------------------------

    def _redirect(self) -> None:
        src = self.src
        # A word of digits glued to the operator is its file descriptor (2>, 1>>), not an argument.
        if self.started and not self.quoted and not self.dynamic and "".join(self.chars).isdigit():
            self.chars, self.unquoted, self.started = [], [], False
        else:
            self._end_word()
        for op in ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<"):
            if src.startswith(op, self.i):
                break
        self.i += len(op)
        if self.pending_redirect is not None:
            raise _ParseError("two redirections in a row")
        self.pending_redirect = op

    def _operator(self, c: str) -> None:
        self._end_segment()
        if c == "\n" and self.heredocs:
            self._skip_heredoc_bodies()
            return
        two = self.src[self.i : self.i + 2]
        self.i += 2 if two in ("&&", "||", "|&", ";;") else 1

    def _skip_heredoc_bodies(self) -> None:
        src = self.src
        pos = self.i + 1
        for delimiter, strip_tabs, expands in self.heredocs:
            body: list[str] = []
            while True:
                if pos >= len(src):
                    raise _ParseError(f"here-document not closed by {delimiter!r}")
                j = src.find("\n", pos)
                line = src[pos:] if j < 0 else src[pos:j]
                pos = len(src) if j < 0 else j + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            if expands:
                self._collect_expansions("\n".join(body))
        self.heredocs = []
        self.i = pos


# -- what each command does ---------------------------------------------------------------------


def _names(text: str) -> frozenset[str]:
    """A set of names written as whitespace-separated words (long lists stay readable)."""
    return frozenset(text.split())


#: Commands that change files, the repository, packages or processes, with what they do.
_MUTATING: Mapping[str, str] = MappingProxyType(
    {
        "rm": "deletes files",
        "rmdir": "deletes folders",
        "unlink": "deletes files",
        "shred": "destroys files",
        "mv": "moves files",
        "cp": "writes files",
        "touch": "creates files",
        "mkdir": "creates folders",
        "mkfifo": "creates files",
        "mknod": "creates files",
        "chmod": "changes permissions",
        "chown": "changes ownership",
        "chgrp": "changes ownership",
        "ln": "creates links",
        "dd": "writes files",
        "tee": "writes files",
        "truncate": "changes files",
        "install": "writes files",
        "patch": "changes files",
        "rsync": "writes files",
        "scp": "writes files",
        "tar": "can write files",
        "unzip": "writes files",
        "zip": "writes files",
        "gzip": "changes files",
        "gunzip": "changes files",
        "wget": "downloads files",
        "make": "runs build steps",
        "cmake": "runs build steps",
        "ninja": "runs build steps",
        "pip": "installs packages",
        "pip3": "installs packages",
        "pipx": "installs packages",
        "uv": "installs packages",
        "poetry": "installs packages",
        "npm": "installs packages or runs scripts",
        "npx": "runs packages",
        "yarn": "installs packages or runs scripts",
        "pnpm": "installs packages or runs scripts",
        "apt": "installs packages",
        "apt-get": "installs packages",
        "dpkg": "installs packages",
        "cargo": "builds or installs packages",
        "go": "builds or installs packages",
        "gem": "installs packages",
        "brew": "installs packages",
        "kill": "stops processes",
        "pkill": "stops processes",
        "killall": "stops processes",
        "sudo": "runs commands as another user",
        "su": "runs commands as another user",
        "doas": "runs commands as another user",
        "source": "runs a script",
        ".": "runs a script",
        "crontab": "schedules commands",
        "at": "schedules commands",
        "docker": "controls containers",
        "podman": "controls containers",
        "nohup": "starts background processes",
        "setsid": "starts background processes",
        "vi": "edits files",
        "vim": "edits files",
        "nano": "edits files",
        "emacs": "edits files",
        "ed": "edits files",
        "alias": "redefines commands",
        "set": "changes shell options",
        "shopt": "changes shell options",
        "trap": "runs commands on signals",
    }
)
_INTERPRETERS = _names(
    """
    python python2 python3 node nodejs deno bun ruby perl php lua Rscript R java tclsh osascript
    pwsh powershell
    """
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "fish", "busybox"})
#: Read-only as long as their arguments pass the checks below (none for most of them).
_READ_ONLY = _names(
    """
    ls cat head tail grep egrep fgrep rg find wc pwd echo printf tree stat file which whereis
    type true false test [ : basename dirname realpath readlink du df diff cmp comm sort uniq
    cut tr nl od hexdump xxd strings column fold fmt paste join rev tac expand unexpand sha1sum
    sha256sum sha512sum md5sum cksum b2sum base64 base32 jq date whoami id uname hostname
    printenv nproc uptime ps sleep seq cd pushd popd dirs unset export git curl sed awk gawk
    mawk less more locale exit [[
    """
)
#: Commands that no argument can make write or run anything. Only these may take arguments known
#: at run time ($VAR, globs: a file named ``-delete`` is a glob's possible value) and only these
#: may follow ``xargs``, which appends arguments read from its input.
_ARGUMENT_SAFE = _names(
    """
    cat head tail grep egrep fgrep wc ls stat echo printf basename dirname realpath readlink du
    df nl od hexdump strings sha1sum sha256sum sha512sum md5sum cksum b2sum base64 base32 test [
    [[ true false : diff cmp comm cut tr column fold fmt paste join rev tac expand unexpand jq
    pwd whoami id uname nproc uptime printenv sleep seq exit unset cd pushd popd dirs which
    whereis type locale
    """
)
#: Prefix words with no effect of their own: what follows them is the command.
_KEYWORDS = frozenset({"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "done", "fi"})
#: Variables that change which program runs or what a program runs.
_DANGEROUS_VARS = _names(
    """
    PATH BASH_ENV ENV PROMPT_COMMAND IFS SHELLOPTS BASHOPTS PS4 PAGER EDITOR VISUAL LESSOPEN
    LESSCLOSE MANPAGER PYTHONSTARTUP NODE_OPTIONS PERL5OPT RUBYOPT CDPATH
    """
)
_DANGEROUS_VAR_PREFIXES = ("LD_", "GIT_", "BASH_FUNC_", "DYLD_")
_SYSTEM_BIN_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=")

_GIT_READ = _names(
    """
    status diff log show blame annotate shortlog rev-parse rev-list ls-files ls-tree cat-file
    describe grep diff-tree diff-files diff-index merge-base name-rev show-ref for-each-ref
    whatchanged count-objects cherry range-diff help version var check-ignore check-attr
    show-branch
    """
)
_GIT_MUTATING = _names(
    """
    commit push add reset checkout switch restore merge rebase apply am cherry-pick revert stash
    tag branch clean rm mv fetch pull clone init gc prune update-ref update-index submodule
    worktree config remote notes filter-branch replace bisect format-patch archive reflog
    commit-tree write-tree read-tree symbolic-ref maintenance repack lfs
    """
)
_GIT_CONFIG_READ = frozenset({"--get", "--get-all", "--get-regexp", "-l", "--list"})
_GIT_CONFIG_WRITE = _names(
    "--unset --unset-all --add --replace-all --edit -e --rename-section --remove-section"
)
_GIT_BRANCH_VALUE_OPTS = frozenset(
    {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"}
)
_GIT_BRANCH_LIST_OPTS = _names(
    """
    -a --all -r --remotes -v -vv --verbose --show-current -l --list --no-color --color --column
    --no-column -i --ignore-case --omit-empty
    """
)


def classify_bash(command: str) -> tuple[bool, str]:
    """Whether a Bash command line is provably read-only, and why (a reason for the model)."""
    return _classify(command, 0)


def _classify(command: str, depth: int) -> tuple[bool, str]:
    if depth > _MAX_DEPTH:
        return False, "the command nests too deeply to check"
    if "\x00" in command:
        return False, "the command contains a NUL byte"
    try:
        parsed = _Lexer(command).parse()
    except _ParseError as exc:
        return False, f"the command line could not be read ({exc})"
    # Nested command lines first: their own reason says more than "computed at run time".
    for inner in parsed.nested:
        ok, reason = _classify(inner, depth + 1)
        if not ok:
            return False, reason
    for segment in parsed.segments:
        reason = _check_redirects(segment) or _check_words(segment.words, depth)
        if reason:
            return False, reason
    return True, "read-only command"


def _check_redirects(segment: _Segment) -> str | None:
    for op, target in segment.redirects:
        if op in ("<", "<<", "<<-", "<<<", "<&"):
            continue
        if op == ">&" and (target.text.isdigit() or target.text == "-") and not target.dynamic:
            continue  # 2>&1: duplicates a descriptor, writes no file
        if op == "<>":
            return f"`<> {target.text}` opens a file for writing"
        if target.dynamic or target.text not in _HARMLESS_TARGETS:
            return f"the output redirection `{op} {target.text}` writes a file"
    return None


def _dangerous_var(name: str) -> bool:
    return name in _DANGEROUS_VARS or name.startswith(_DANGEROUS_VAR_PREFIXES)


def _check_words(words: list[_Word], depth: int) -> str | None:
    words = list(words)
    while words and not words[0].quoted and words[0].text in _KEYWORDS:
        words.pop(0)
    if words and not words[0].quoted and words[0].text in ("for", "select"):
        return None  # a loop header: its word list runs nothing (substitutions are checked apart)
    while words and not words[0].quoted and (m := _ASSIGNMENT.match(words[0].text)):
        if _dangerous_var(m.group(1)):
            return f"setting {m.group(1)} changes which programs run"
        words.pop(0)
    if not words:
        return None
    head, args = words[0], words[1:]
    if head.dynamic:
        return f"the command name `{head.text}` is only known at run time"
    text = head.text
    if "/" in text:
        if posixpath.dirname(text) not in _SYSTEM_BIN_DIRS:
            return f"`{text}` runs a program by path"
        text = posixpath.basename(text)
    return _check_command(text, args, depth)


def _positional(args: list[_Word]) -> list[_Word]:
    return [a for a in args if not a.text.startswith("-") or a.text == "-"]


def _short_cluster(word: _Word) -> str:
    """The letters of a short-option cluster (``-sSLo`` → ``sSLo``), else ''."""
    t = word.text
    return t[1:] if t.startswith("-") and not t.startswith("--") and len(t) > 1 else ""


def _check_command(name: str, args: list[_Word], depth: int) -> str | None:
    if name in _MUTATING:
        return f"`{name}` {_MUTATING[name]}"
    if name in _INTERPRETERS or re.fullmatch(r"python\d+(\.\d+)*|pypy\d*", name):
        return f"`{name}` runs code that a command-line check cannot read"
    if name in _SHELLS:
        return _check_shell(name, args, depth)
    if name == "eval":
        if any(a.dynamic for a in args):
            return "`eval` of a computed string"
        return _nested(" ".join(a.text for a in args), depth)
    if name in ("env", "nice", "timeout", "stdbuf", "command", "exec", "builtin", "time", "xargs", "ionice"):
        return _check_wrapper(name, args, depth)
    if name not in _READ_ONLY:
        return f"`{name}` is not a known read-only command"
    if name not in _ARGUMENT_SAFE:
        # `--` ends the options of most commands, not the expressions of find, sed or awk.
        honours_end = name not in ("find", "sed", "awk", "gawk", "mawk")
        for a in args:
            if honours_end and a.text == "--" and not a.quoted:
                break
            if a.dynamic or a.glob:
                return f"`{name}` with an argument only known at run time (`{a.text}`)"
    if name == "git":
        return _check_git(args)
    if name == "find":
        return _check_find(args, depth)
    if name == "sed":
        return _check_sed(args)
    if name in ("awk", "gawk", "mawk"):
        return _check_awk(name, args)
    if name == "curl":
        for a in args:
            if a.text.startswith(("--output", "--remote-name", "--dump-header", "--cookie-jar", "--config")):
                return f"`curl {a.text}` writes or reads a file"
            if a.text in ("--create-dirs", "--output-dir") or set(_short_cluster(a)) & set("oODcK"):
                return f"`curl {a.text}` writes a file"
        return None
    if name == "sort":
        for a in args:
            if a.text.startswith(("--output", "--compress-program")) or "o" in _short_cluster(a):
                return f"`sort {a.text}` writes a file"
        return None
    if name == "tree" and any("o" in _short_cluster(a) for a in args):
        return "`tree -o` writes a file"
    if name == "file" and any(a.text == "--compile" or "C" in _short_cluster(a) for a in args):
        return "`file -C` writes a file"
    if name == "rg" and any(a.text.startswith("--pre") for a in args):
        return "`rg --pre` runs a program"
    if name in ("uniq", "xxd") and len(_positional(args)) >= 2:
        return f"`{name}` with an output file writes it"
    if name == "date" and any(
        a.text.startswith("--set") or "s" in _short_cluster(a) or not a.text.startswith(("-", "+"))
        for a in args
    ):
        return "`date` would set the clock"
    if name == "hostname" and _positional(args):
        return "`hostname NAME` sets the host name"
    if name in ("less", "more") and any(a.text.startswith(("-o", "-O", "--log-file")) for a in args):
        return f"`{name} -o` writes a file"
    if name == "export":
        for a in args:
            m = _ASSIGNMENT.match(a.text)
            if m and _dangerous_var(m.group(1)):
                return f"exporting {m.group(1)} changes which programs run"
    return None


def _nested(command: str, depth: int) -> str | None:
    ok, reason = _classify(command, depth + 1)
    return None if ok else reason


def _check_shell(name: str, args: list[_Word], depth: int) -> str | None:
    for i, a in enumerate(args):
        cluster = _short_cluster(a)
        if "c" in cluster:
            rest = _positional(args[i + 1 :])
            if not rest:
                return f"`{name} -c` without a command"
            if rest[0].dynamic:
                return f"`{name} -c` of a computed string"
            return _nested(rest[0].text, depth)
        if not a.text.startswith("-"):
            break
    return f"`{name}` runs a script or commands from its input"


_WRAPPER_VALUE_OPTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
        "nice": frozenset({"-n", "--adjustment"}),
        "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
        "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
        "exec": frozenset({"-a"}),
        "ionice": frozenset({"-c", "-n", "--class", "--classdata"}),
        "xargs": _names(
            """
            -I -i -n -P -d -E -e -L -l -s -a --arg-file --delimiter --max-args --max-procs --max-lines
            --max-chars --replace --eof
            """
        ),
    }
)


def _check_wrapper(name: str, args: list[_Word], depth: int) -> str | None:
    value_opts = _WRAPPER_VALUE_OPTS.get(name, frozenset())
    i = 0
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
        opt = args[i].text
        if opt == "--":
            i += 1
            break
        if name == "command" and opt in ("-v", "-V"):
            return None  # like `which`
        if name == "env" and (opt in ("-S", "--split-string") or opt.startswith("--split-string=")):
            return "`env -S` splits a string into a command"
        i += 2 if opt in value_opts else 1
    rest = args[i:]
    if name == "env":
        while rest and (m := _ASSIGNMENT.match(rest[0].text)):
            if _dangerous_var(m.group(1)):
                return f"setting {m.group(1)} changes which programs run"
            rest = rest[1:]
    if name == "timeout":
        if not rest:
            return "`timeout` without a command"
        rest = rest[1:]  # the duration
    if not rest:
        if name in ("env", "nice", "time", "xargs", "exec"):
            return None  # prints the environment / priority, or echoes its input
        return f"`{name}` without a command"
    if name == "xargs":
        head = rest[0].text
        if rest[0].dynamic or posixpath.basename(head) not in _ARGUMENT_SAFE:
            return f"`xargs {head}`: xargs appends arguments no check can see; only plain readers may follow"
    return _check_words(rest, depth + 1)


def _check_find(args: list[_Word], depth: int) -> str | None:
    i = 0
    while i < len(args):
        t = args[i].text
        if t in ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls"):
            return f"`find {t}` deletes or writes files"
        if t in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            inner = args[i + 1 : j]
            if not inner:
                return f"`find {t}` without a command"
            reason = _check_words(inner, depth + 1)
            if reason:
                return f"`find {t}`: {reason}"
            i = j
        i += 1
    return None


#: sed commands that write (w, W) or execute (e), and s/// flags that do the same.
_SED_WRITE = re.compile(r"(^|[;\n{}])\s*(\d+|\$|/[^/]*/)?(,\s*(\d+|\$|/[^/]*/))?\s*!?\s*[wWe](\s|$)")
_SED_S_FLAGS = re.compile(r"s(.).*?(?<!\\)\1.*?(?<!\\)\1([gpIiMm0-9]*[we])")


def _check_sed(args: list[_Word]) -> str | None:
    scripts: list[_Word] = []
    i, explicit = 0, False
    while i < len(args):
        a = args[i]
        t = a.text
        if t.startswith("--in-place"):
            return "`sed --in-place` edits files in place"
        if t in ("-f", "--file") or t.startswith("--file="):
            return "`sed -f` runs a script file that cannot be checked"
        if t.startswith("--expression"):
            value = t.split("=", 1)[1] if "=" in t else (args[i + 1].text if i + 1 < len(args) else "")
            dyn = a.dynamic if "=" in t else (i + 1 < len(args) and args[i + 1].dynamic)
            scripts.append(_Word(value, dyn))
            explicit = True
            i += 1 if "=" in t else 2
            continue
        cluster = _short_cluster(a)
        for k, letter in enumerate(cluster):
            if letter == "i":
                return "`sed -i` edits files in place"
            if letter in "ef":  # the rest of the cluster, or the next word, is the value
                if letter == "f":
                    return "`sed -f` runs a script file that cannot be checked"
                value = cluster[k + 1 :]
                if not value and i + 1 < len(args):
                    i += 1
                    scripts.append(args[i])
                else:
                    scripts.append(_Word(value, a.dynamic))
                explicit = True
                break
            if letter == "l":  # -l N: line length
                if k == len(cluster) - 1:
                    i += 1
                break
        i += 1
    if not explicit:
        scripts = _positional(args)[:1]
    for s in scripts:
        if s.dynamic:
            return "`sed` with a computed script"
        if _SED_WRITE.search(s.text) or _SED_S_FLAGS.search(s.text):
            return "`sed` script writes files or runs commands (w, W or e)"
    return None


def _check_awk(name: str, args: list[_Word]) -> str | None:
    program: _Word | None = None
    i = 0
    while i < len(args):
        t = args[i].text
        if t in ("-f", "--file") or t.startswith("--file") or t in ("-i", "--include"):
            return f"`{name} {t}` loads a program file that cannot be checked"
        if t in ("-v", "-F", "--assign", "--field-separator"):
            i += 2
            continue
        if not t.startswith("-") or t == "-":
            program = args[i]
            break
        i += 1
    if program is None:
        return None
    if program.dynamic or re.search(r"system|[>|]|getline", program.text):
        return f"`{name}` program may write files or run commands"
    return None


def _check_git(args: list[_Word]) -> str | None:
    i = 0
    while i < len(args):
        t = args[i].text
        if t == "-c" or t.startswith(("--exec-path=", "--config-env")):
            return f"`git {t}` can make git run other programs"
        if t in ("-C", "--git-dir", "--work-tree", "--namespace"):
            i += 2
            continue
        if t.startswith("-"):
            i += 1
            continue
        break
    if i >= len(args):
        return None  # `git` alone prints its help
    sub, rest = args[i], args[i + 1 :]
    if sub.dynamic:
        return "the git subcommand is only known at run time"
    name = sub.text
    texts = [a.text for a in rest]
    if any(t.startswith("--output") for t in texts):
        return f"`git {name} --output` writes a file"
    first = texts[0] if texts else ""
    if name in _GIT_READ:
        if name == "grep" and any(t in ("-O", "--open-files-in-pager") or t.startswith("-O") for t in texts):
            return "`git grep -O` runs a pager program"
        return None
    if name == "branch":
        expect_value = False
        for t in texts:
            if expect_value:
                expect_value = False
            elif t in _GIT_BRANCH_VALUE_OPTS:
                expect_value = True
            elif t.startswith(tuple(o + "=" for o in _GIT_BRANCH_VALUE_OPTS)) or t in _GIT_BRANCH_LIST_OPTS:
                continue
            elif not t.startswith("-") and ("--list" in texts or "-l" in texts):
                continue  # a pattern for --list
            else:
                return f"`git branch {t}` changes branches (only listing is read-only)"
        return None
    if name == "tag":
        if not texts or texts[0] in ("-l", "--list"):
            return None
        return "`git tag` with arguments creates or deletes tags (only listing is read-only)"
    if name == "stash" and first in ("list", "show"):
        return None
    if name == "remote" and all(t in ("-v", "--verbose") for t in texts):
        return None
    if name == "remote" and first in ("get-url", "show"):
        return None
    if name == "worktree" and first == "list":
        return None
    if name == "notes" and first in ("", "list", "show"):
        return None
    if name == "reflog" and first in ("", "show"):
        return None
    if name == "config" and (first in ("get", "list") or set(texts) & _GIT_CONFIG_READ):
        if set(texts) & _GIT_CONFIG_WRITE:
            return "`git config` would change the configuration"
        return None
    if name in _GIT_MUTATING:
        return f"`git {name}` changes the repository"
    return f"`git {name}` is not a known read-only git command"


# -- the command --------------------------------------------------------------------------------


def run_hook(mode: str, raw: bytes) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for one hook call; never raises, so nothing prints a
    traceback and nothing exits with a non-blocking code."""
    try:
        try:
            payload: object = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            decision = HookDecision(False, "Control Center hook: the hook input is not valid JSON")
        else:
            decision = decide(mode, payload)
    except Exception as exc:  # a bug must refuse the call, never let it through
        reason = f"Control Center hook failed ({type(exc).__name__}); refusing the call"
        decision = HookDecision(False, reason)
    if decision.allowed:
        return EXIT_ALLOW, json.dumps(decision.to_json()) + "\n" if decision.explicit else "", ""
    return EXIT_DENY, json.dumps(decision.to_json()) + "\n", decision.reason + "\n"


def cmd_hook(args: argparse.Namespace) -> int:
    try:
        raw = sys.stdin.buffer.read()
    except (OSError, ValueError):
        raw = b""
    code, out, err = run_hook(str(args.mode), raw)
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return code
