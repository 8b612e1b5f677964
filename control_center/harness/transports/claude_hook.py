"""The Claude Code PreToolUse hook (``control-center hook claude-code --mode MODE``, SPEC §9, §11).

Claude Code runs this command before a hooked tool call, with its hook JSON on stdin. The
decision is computed from the mode's capability profile, never from the mode's name: a profile
with no denied effect classes allows everything; any other profile refuses tools whose Claude
equivalent is off its surface and every shell command line that is not provably read-only.

A command-line check can only be as strict as its reading of the line, so this one fails closed
(``command_check``: bash's grammar, a rule per program): anything it cannot parse, any command it
does not know and any command computed at run time is refused. It is not a boundary on its own:
in read-only modes the OS layer (bubblewrap around ``claude``) is, where the host has it (SPEC §9).

Denial (verified with Claude Code 2.1.328): exit code 2 with the reason on stderr, plus the
documented ``permissionDecision: "deny"`` JSON on stdout, whose reason Claude Code then shows to
the model. An explicit allow (chat) prints ``permissionDecision: "allow"`` and exits 0; any other
allow exits 0 silently, which leaves Claude Code's own permission mode in charge.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import CapabilityProfile, profile_for
from control_center.core.surface import materialize_surface, needs_approval
from control_center.core.tools import CATALOGUE
from control_center.harness.transports.command_check import classify_bash

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


def gated_claude_tools(profile: CapabilityProfile, autonomy: Autonomy) -> frozenset[str]:
    """The hooked Claude tools whose calls wait on the approval gate at ``autonomy`` (as their
    catalogue equivalents do on the built-in harness), answered by a stored rule or the operator
    through the permission tool. Only where the profile denies nothing: a read-only mode's hook
    and OS layer decide alone, and a rule never widens them."""
    if profile.denied_effects or profile.read_only:
        return frozenset()
    return frozenset(
        tool
        for tool in HOOKED_TOOLS
        if any(needs_approval(CATALOGUE[n], profile, autonomy) for n in CLAUDE_TOOL_EQUIVALENTS[tool])
    )


#: Where each hooked Claude tool names its file (its catalogue equivalent's ``path``).
_PATH_FIELDS: MappingProxyType[str, str] = MappingProxyType(
    {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
)


def catalogue_call(tool: str, tool_input: object) -> tuple[str, dict[str, Any]] | None:
    """A hooked Claude call as its catalogue call (name, input) for our gate and rules: Bash as
    ``run_command {command}``, a file write as its equivalent with ``path``; None when the input
    lacks what the gate reads (refused by the caller)."""
    if not isinstance(tool_input, dict):
        return None
    if tool == "Bash":
        command = tool_input.get("command")
        return ("run_command", {"command": command}) if isinstance(command, str) else None
    field = _PATH_FIELDS.get(tool)
    path = tool_input.get(field) if field else None
    if not isinstance(path, str) or not path:
        return None
    extra = {"content": tool_input["content"]} if isinstance(tool_input.get("content"), str) else {}
    return CLAUDE_TOOL_EQUIVALENTS[tool][0], {"path": path, **extra}


def decide(mode: str, payload: object, autonomy: str | None = None) -> HookDecision:
    """The hook's verdict for one call. Fails closed on an unknown mode or malformed input.
    ``autonomy``: the space's level; a call it gates gets no explicit allow (Claude Code then asks
    the turn's permission tool, where a rule or the operator decides)."""
    try:
        profile = profile_for(Mode(mode))
        level = Autonomy(autonomy) if autonomy is not None else None
    except ValueError:
        allowed = ", ".join(m.value for m in Mode)
        return HookDecision(
            False, f"Control Center hook: unknown mode {mode!r} or autonomy {autonomy!r} (modes: {allowed})"
        )
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
        if level is not None and tool in gated_claude_tools(profile, level):
            return HookDecision(True, f"{tool} waits on the approval gate at autonomy {level.value}")
        return HookDecision(True, f"{profile.label} mode allows {tool}", explicit=True)
    prefix = f"Control Center: {profile.label} mode is read-only"
    if command is not None:
        cwd = payload.get("cwd")
        ok, why = classify_bash(command, cwd if isinstance(cwd, str) else None)
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


# -- the command --------------------------------------------------------------------------------


def run_hook(mode: str, raw: bytes, autonomy: str | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for one hook call; never raises, so nothing prints a
    traceback and nothing exits with a non-blocking code."""
    try:
        try:
            payload: object = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            decision = HookDecision(False, "Control Center hook: the hook input is not valid JSON")
        else:
            decision = decide(mode, payload) if autonomy is None else decide(mode, payload, autonomy)
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
    autonomy = getattr(args, "autonomy", None)
    code, out, err = run_hook(str(args.mode), raw, str(autonomy) if autonomy else None)
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return code
