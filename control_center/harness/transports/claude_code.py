"""The Claude Code transport (SPEC §9): one turn is one ``claude -p`` run in the space's worktree.

A non-chat mode runs under ``--permission-mode plan`` and, where bubblewrap works, inside the OS
layer (``sandbox.ClaudeSandbox``: a read-only file system for Claude and everything it runs);
Claude's own tools are allowed or refused from the mode's surface where a Claude tool has a
catalogue equivalent, and our PreToolUse hook (``control-center hook claude-code``) checks every
shell command line and file write. ``core.guarantees`` says which of these hold for a turn. Claude's
stream-json output is mapped onto our event stream and stored like a built-in turn's messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import sys
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_center.core.events import (
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnded,
    TurnStarted,
    TurnStatus,
)
from control_center.core.guarantees import guarantee_for
from control_center.core.modes import Autonomy, Transport
from control_center.core.profiles import CapabilityProfile
from control_center.core.records import Turn
from control_center.core.surface import materialize_surface
from control_center.harness import sandbox
from control_center.harness.agent_processes import mark
from control_center.harness.calls import ExternalCalls, external_calls
from control_center.harness.cli_check import locate_cli
from control_center.harness.credentials import ENV_VAR as API_KEY_ENV
from control_center.harness.credentials import resolve_api_key
from control_center.harness.driver import DriverHost, TurnRun, contract_nudge
from control_center.harness.environment import scrubbed_environ
from control_center.harness.errors import HarnessError
from control_center.harness.own_command import PACKAGE_ROOT, own_shell_command
from control_center.harness.recorder import TurnRecorder, Usage
from control_center.harness.tools.base import ToolOutput
from control_center.harness.transports.claude_home import (
    home_key,
    home_path,
    keep_session,
    prepare_home,
    remove_home,
)
from control_center.harness.transports.claude_hook import (
    CLAUDE_TOOL_EQUIVALENTS,
    HOOKED_TOOLS,
    catalogue_call,
    claude_tool_on_surface,
    gated_claude_tools,
)
from control_center.harness.transports.egress import EgressGate, HostGateway, relay_command
from control_center.harness.transports.turn_mcp import (
    CALL_TIMEOUT_MS,
    PERMISSION_TOOL,
    DecidePermission,
    TurnMcpServer,
    claude_tool_name,
)
from control_center.harness.turn_claim import owner_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from control_center.core.events import TurnEvent
    from control_center.harness.providers.base import ModelSettings

log = logging.getLogger(__name__)

CLI_NOT_FOUND = "Claude Code CLI not found: set its path in Settings or put `claude` on PATH"
#: Said on every read-only turn that runs without the OS layer (bubblewrap missing or broken).
GUIDANCE_NOTE = (
    "No OS layer on this host (bubblewrap is missing or does not work): on the Claude Code "
    "transport the read-only mode rests on the command-line hook alone."
)
NO_API_KEY = (
    f"Claude Code needs an Anthropic API key: add one in Settings or set {API_KEY_ENV} "
    "(the Claude Code transport uses the same key and endpoint as the Anthropic provider)"
)
EXIT_PLAN_VERB = "exit_plan_mode"
#: Providers a Claude Code turn may be resolved to: Anthropic, or "scripted" (what "auto" resolves to
#: without a key, which the key check then refuses with its own message).
CLAUDE_CODE_PROVIDERS = ("anthropic", "scripted")
#: Environment that keeps the CLI offline apart from the model endpoint (ENVIRONMENT.md).
QUIET_ENV: dict[str, str] = {
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    # A verb may wait for the operator's decision: no wall-clock limit on the turn's MCP calls.
    "MCP_TOOL_TIMEOUT": str(CALL_TIMEOUT_MS),
}
#: One stream-json line carries a whole tool result; a file read can be large.
_LINE_LIMIT = 64 * 1024 * 1024
_STDERR_TAIL_CHARS = 4000
_KILL_WAIT_S = 5.0


def find_claude_cli(setting: str | None) -> tuple[str | None, str | None]:
    """(path, None) or (None, the operator-facing error): the setting, else ``claude`` on PATH,
    resolved through symlinks (``cli_check.locate_cli``)."""
    return locate_cli(setting, "claude", CLI_NOT_FOUND)


def cli_needs(cli: str) -> tuple[Path, ...]:
    """What the CLI at ``cli`` (a resolved path) needs to run inside a sandbox: the file itself;
    for a script (npm's ``cli.js``) also its package folder (the nearest one with a
    ``package.json``) and the interpreter its ``#!`` line names, with that interpreter's prefix
    (a ``node`` under ``~/.nvm`` or ``~/.volta``)."""
    path = Path(cli)
    needs = [path]
    try:
        with path.open("rb") as f:
            first = f.readline(512)
    except OSError:
        return tuple(needs)
    if not first.startswith(b"#!"):
        return tuple(needs)
    for folder in path.parents:
        if (folder / "package.json").is_file():
            needs.append(folder)
            break
    words = first[2:].decode(errors="replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    interpreter = shutil.which(words[0]) if words else None
    if interpreter:
        real = Path(os.path.realpath(interpreter))
        # .../bin/node -> ... (its lib/ and share/ beside bin/)
        needs.append(real.parent.parent if real.parent.name == "bin" else real.parent)
    return tuple(needs)


def hook_command(mode: str, autonomy: Autonomy | None = None) -> str:
    """The shell command Claude Code runs as our PreToolUse hook (never the worktree's code).
    ``autonomy``: given when it gates some hooked tool (``gated_claude_tools``)."""
    extra = ("--autonomy", autonomy.value) if autonomy is not None else ()
    return own_shell_command("hook", "claude-code", "--mode", mode, *extra)


def claude_settings(mode: str, autonomy: Autonomy | None = None) -> dict[str, Any]:
    """The ``--settings`` JSON: our hook on the shell and on every file-writing tool. Only keys
    the CLI knows: it silently ignores a settings file that fails validation in ``-p`` mode."""
    hook = {"type": "command", "command": hook_command(mode, autonomy)}
    writers = "|".join(t for t in HOOKED_TOOLS if t != "Bash")
    return {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [hook]},
                {"matcher": writers, "hooks": [dict(hook)]},
            ]
        }
    }


def tool_lists(
    profile: CapabilityProfile, surface: frozenset[str], gated: frozenset[str] = frozenset()
) -> tuple[list[str], list[str]]:
    """(allowed, disallowed) Claude tools, from the surface where a Claude tool maps onto it.
    The shell stays in neither list of a mode that denies effects: the hook reads each command
    line, so read-only commands still run. A ``gated`` tool is in neither list either: Claude
    asks the turn's permission tool for each call (a stored rule or the operator answers)."""
    allowed: list[str] = []
    disallowed: list[str] = []
    for name in CLAUDE_TOOL_EQUIVALENTS:
        on = claude_tool_on_surface(name, surface)
        if on and name in gated:
            continue
        if on:
            allowed.append(name)
        elif name == "Bash" and profile.denied_effects:
            continue
        else:
            disallowed.append(name)
    return allowed, disallowed


def build_argv(
    cli: str,
    message: str,
    profile: CapabilityProfile,
    surface: frozenset[str],
    model: str | None,
    mcp: TurnMcpServer | None = None,
    mcp_config: Path | None = None,
    autonomy: Autonomy | None = None,
) -> list[str]:
    """``claude``'s command line. ``mcp_config``: the private file that holds the turn's MCP
    server and its token (``write_private_config``): a token on the command line is readable by
    every process of the machine (``/proc/<pid>/cmdline``). ``autonomy``: the space's, which may
    gate Claude's shell and file writes (``gated_claude_tools``)."""
    gated = gated_claude_tools(profile, autonomy) if autonomy is not None else frozenset()
    # The prompt is the positional argument right after -p; a leading "-" would read as an option.
    prompt = " " + message if message.startswith("-") else message
    argv = [
        cli,
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--settings",
        json.dumps(claude_settings(profile.mode.value, autonomy if gated else None)),
        "--setting-sources",
        "user",
        "--strict-mcp-config",
    ]
    if profile.read_only:
        argv += ["--permission-mode", "plan"]
    allowed, disallowed = tool_lists(profile, surface, gated)
    if mcp is not None and mcp_config is not None:
        argv += ["--mcp-config", str(mcp_config)]
        allowed += [claude_tool_name(verb) for verb in mcp.verbs]
        if mcp.permission is not None:
            # Claude asks us, not a person: ExitPlanMode is answered from the plan_exit gate,
            # a gated shell command or file write by a stored rule or the operator's decision.
            argv += ["--permission-prompt-tool", claude_tool_name(PERMISSION_TOOL)]
    if allowed:
        argv += ["--allowedTools", ",".join(allowed)]
    if disallowed:
        argv += ["--disallowedTools", ",".join(disallowed)]
    if model:
        argv += ["--model", model]
    return argv


def write_private_config(folder: Path, config: dict[str, Any]) -> Path:
    """``config`` in a new file only this user can read, in Claude's private home (the OS layer
    binds it at the same path). Removed as soon as Claude has read it (its session started),
    before any tool of the turn runs."""
    path = folder / f".mcp-{uuid.uuid4().hex}.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(config, out)
    return path


def model_base_url(host: DriverHost, profile: CapabilityProfile) -> str | None:
    """The Anthropic endpoint Claude talks to: the mode's setting, else the environment's."""
    return host.settings.model_for(profile.mode).base_url or os.environ.get("ANTHROPIC_BASE_URL")


def build_env(host: DriverHost, profile: CapabilityProfile, api_key: str, home: Path) -> dict[str, str]:
    """The same endpoint and key as the Anthropic provider, a scratch HOME, no side traffic.

    Every other credential-like variable is withheld (unless the operator allowed it by name):
    Claude runs commands, and whatever it can read it can print into the model's context."""
    env = scrubbed_environ(allow=host.settings.allowed_env)
    # Another credential in the environment would make the CLI authenticate differently.
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    base_url = model_base_url(host, profile)
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    else:
        env.pop("ANTHROPIC_BASE_URL", None)
    env[API_KEY_ENV] = api_key
    env.update(QUIET_ENV)
    mark(env)  # Claude and every command it runs work for an agent (never for the operator)
    env["HOME"] = str(home)
    return env


# -- the stream ---------------------------------------------------------------------------------


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


@dataclass
class _Stream:
    """Maps Claude Code's stream-json messages onto our events and stored messages."""

    recorder: TurnRecorder
    emit: Callable[[TurnEvent], None]
    on_session: Callable[[str], None] | None = None
    names: dict[str, str] = field(default_factory=dict)
    session_id: str | None = None
    result: dict[str, Any] | None = None

    def feed(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        try:
            msg = json.loads(line)
        except ValueError:
            log.debug("claude: not a JSON line: %.200s", line)
            return
        except RecursionError:  # a tool input nested past the parser: that message is skipped
            log.warning("claude: a stream message nested too deeply to read was skipped")
            return
        if not isinstance(msg, dict):
            return
        kind = msg.get("type")
        if kind == "system" and msg.get("subtype") == "init":
            self.session_id = msg.get("session_id")
            if isinstance(self.session_id, str) and self.session_id and self.on_session is not None:
                self.on_session(self.session_id)
        elif kind == "assistant":
            self._assistant(msg)
        elif kind == "user":
            self._user(msg)
        elif kind == "result":
            self.result = msg

    def _assistant(self, msg: dict[str, Any]) -> None:
        content = (msg.get("message") or {}).get("content") or []
        if not isinstance(content, list):
            return
        blocks: list[dict[str, Any]] = []
        texts: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                text = str(block.get("text", ""))
                texts.append(text)
                self.emit(TextDelta(text))
                blocks.append({"type": "text", "text": text})
            elif btype == "thinking":
                self.emit(ThinkingDelta(str(block.get("thinking", ""))))
                blocks.append({k: v for k, v in block.items() if v is not None})
            elif btype == "tool_use":
                call_id, name = str(block.get("id", "")), str(block.get("name", ""))
                given = block.get("input")
                args: dict[str, Any] = given if isinstance(given, dict) else {}
                self.names[call_id] = name
                self.emit(ToolCallEvent(call_id, name, args))
                blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
        # A subagent's messages (parent_tool_use_id set) are shown live but not stored: stored
        # rows form the model history, where they would break the tool_use/tool_result pairs.
        if blocks and msg.get("parent_tool_use_id") is None:
            self.recorder.assistant("".join(texts), blocks)

    def _user(self, msg: dict[str, Any]) -> None:
        content = (msg.get("message") or {}).get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id", ""))
            name = self.names.get(call_id, "?")
            text = _result_text(block.get("content"))
            is_error = bool(block.get("is_error"))
            self.emit(ToolResultEvent(call_id, name, is_error, text))
            if msg.get("parent_tool_use_id") is not None:
                continue
            self.recorder.tool_result(call_id, name, ToolOutput(text, is_error=is_error))


# -- the turn -----------------------------------------------------------------------------------

#: What a resumed Claude Code session is told (its own transcript holds the rest).
RESUME_MESSAGE = "The previous turn was interrupted. Continue where you left off."


class ClaudeCodeDriver:
    """One turn is one ``claude -p`` run (``--resume`` for a resume or the completion contract's
    reminder), with the mode's flags, the OS layer and the turn's MCP server."""

    #: The CLI is handed the message's text; its image blocks would not reach the model.
    takes_images = False

    def __init__(self, host: DriverHost, settings: ModelSettings, script: list[Any] | None) -> None:
        self.host = host
        self.settings = settings

    def check_start(self) -> None:
        # Claude Code talks to Anthropic only: a mode set to another provider would otherwise run
        # on a model the operator did not choose, recorded under the one they did.
        if self.settings.provider not in CLAUDE_CODE_PROVIDERS:
            raise HarnessError(
                f"the Claude Code transport talks to Anthropic only, but this mode's provider is "
                f"{self.settings.provider!r}: set modes.<mode>.provider to anthropic or auto, or "
                "run the space on the built-in harness"
            )
        # Through this module's own lookups: the CLI and key it would use are the ones that count.
        _path, problem = find_claude_cli(self.host.settings.claude_cli)
        if problem is None and not resolve_api_key()[0]:
            problem = NO_API_KEY
        if problem is not None:
            raise HarnessError(problem)

    def check_resume(self, turn: Turn) -> None:
        _claude_session(turn)

    async def drive(self, run: TurnRun) -> TurnEnded:
        """Run the turn through the ``claude`` CLI; returns how it ended (also emitted last). A
        resume continues Claude's session of the interrupted turn (``--resume``), with the mode's
        flags, the OS layer and the MCP server set up again as for a new turn."""
        turn, space, profile, recorder = run.turn, run.space, run.profile, run.recorder
        ws = self.host.ws
        resume_session = _claude_session(turn) if run.resumed else None
        autonomy = space.autonomy if space else Autonomy.ASK
        surface = materialize_surface(profile, autonomy, Transport.CLAUDE_CODE)
        names = frozenset(t.name for t in surface)
        os_layer = profile.read_only and sandbox.sandbox_available()
        guarantee = guarantee_for(profile, Transport.CLAUDE_CODE, os_layer)
        recorder.started(
            TurnStarted(
                turn.id,
                space.id if space else None,
                profile.mode.value,
                Transport.CLAUDE_CODE.value,
                tuple(t.name for t in surface),
                provider=turn.settings.get("provider"),
                model=turn.settings.get("model"),
                resumed=run.resumed,
                guarantee=guarantee.to_json(),
            )
        )
        if profile.read_only and not os_layer:
            recorder.note("note", GUIDANCE_NOTE)

        calls = external_calls(self.host.calls, turn, space, profile, recorder)
        usage = Usage.of(turn)

        def finish(status: TurnStatus, error: str | None = None) -> TurnEnded:
            # A call still waiting for the operator ends with the turn; its Inbox item stays
            # only when the turn can be resumed (a resumed session repeating the call waits on it).
            calls.close(final=status in (TurnStatus.COMPLETED, TurnStatus.FAILED))
            ended = recorder.end(status, delivered=calls.delivered, usage=usage, error=error)
            if space is None and status in (TurnStatus.COMPLETED, TurnStatus.FAILED):
                remove_home(ws.root, home_key(None, turn.id))
            return ended

        cli, problem = find_claude_cli(self.host.settings.claude_cli)
        if cli is None:
            return finish(TurnStatus.FAILED, problem)
        api_key, _source = resolve_api_key()
        if not api_key:
            return finish(TurnStatus.FAILED, NO_API_KEY)
        home_name = home_key(space.id if space else None, turn.id)
        home = home_path(ws.root, home_name)
        gated = gated_claude_tools(profile, autonomy)
        permission = _permission_decider(calls, profile, gated) if profile.read_only or gated else None
        try:
            mcp = TurnMcpServer(calls.verbs, calls.call, permission)
            await mcp.__aenter__()
        except OSError as exc:
            return finish(TurnStatus.FAILED, f"could not serve the mode's verbs to Claude Code: {exc}")
        egress: EgressGate | None = None
        if os_layer:
            # Claude's own network namespace reaches the model endpoint and this MCP server alone.
            try:
                assert mcp.port is not None
                egress = EgressGate(model_base_url(self.host, profile), mcp.port, api_key)
                await egress.__aenter__()
            except (OSError, ValueError) as exc:
                await mcp.__aexit__(None, None, None)
                return finish(TurnStatus.FAILED, f"could not open Claude Code's network forwarder: {exc}")
        host_gateway: HostGateway | None = None
        if egress is None:
            # On the host (Agent mode, or no OS layer): the key stays here too, behind a loopback
            # gateway; Claude and its commands hold a stand-in.
            try:
                host_gateway = await HostGateway(model_base_url(self.host, profile), api_key).__aenter__()
            except (OSError, ValueError) as exc:
                await mcp.__aexit__(None, None, None)
                return finish(TurnStatus.FAILED, f"could not open Claude Code's model gateway: {exc}")
        launch = _Launch(
            self.host,
            turn,
            profile,
            recorder,
            calls,
            cli,
            api_key,
            home,
            home_name,
            names,
            os_layer,
            mcp,
            egress,
            host_gateway,
        )
        nudged = turn.nudged
        try:
            prompt, session = (RESUME_MESSAGE if run.resumed else run.message), resume_session
            while True:
                cli_run = await _run_cli(launch, prompt, session)
                if cli_run.usage is not None:
                    step = cli_run.usage
                    usage.add(step.model_calls, step.input_tokens, step.output_tokens, step.cost_usd)
                    recorder.usage(usage, step)
                if cli_run.status is TurnStatus.COMPLETED and cli_run.session_id:
                    nudge = contract_nudge(profile, delivered=calls.delivered, nudged=nudged)
                    if nudge is not None:
                        # The completion contract, as on the built-in loop: one reminder, in the
                        # same Claude session, when the run ended without the mode's output verb.
                        nudged = True
                        recorder.nudge(nudge)
                        prompt, session = nudge, cli_run.session_id
                        continue
                return finish(cli_run.status, cli_run.error)
        except asyncio.CancelledError:
            finish(TurnStatus.INTERRUPTED, "cancelled by the operator")
            raise
        finally:
            if egress is not None:
                await egress.__aexit__(None, None, None)
            if host_gateway is not None:
                await host_gateway.__aexit__(None, None, None)
            await mcp.__aexit__(None, None, None)


def _operator_home() -> tuple[Path, ...]:
    """The home of the user running the product (hidden inside the OS layer), if it has one."""
    home = os.environ.get("HOME")
    if not home:
        return ()
    path = Path(home).resolve()
    return (path,) if path != Path("/") and path.is_dir() else ()


def _claude_session(turn: Turn) -> str:
    """The Claude session an interrupted turn resumes; refusals write nothing."""
    session = turn.state.get("session_id")
    if turn.status in (TurnStatus.COMPLETED, TurnStatus.FAILED):
        raise HarnessError(f"turn {turn.id} has ended ({turn.status.value}); start a new turn instead")
    if not isinstance(session, str) or not session:
        raise HarnessError(
            f"turn {turn.id} stopped before Claude Code started a session; start a new turn instead"
        )
    return session


@dataclass(frozen=True)
class _CliRun:
    """How one ``claude`` process ended."""

    status: TurnStatus
    error: str | None
    session_id: str | None
    usage: Usage | None = None


@dataclass(frozen=True)
class _Launch:
    """Everything one turn's ``claude`` processes are started with."""

    host: DriverHost
    turn: Turn
    profile: CapabilityProfile
    recorder: TurnRecorder
    calls: ExternalCalls
    cli: str
    api_key: str
    home: Path
    #: The home's name (claude_home): rebuilt before each run, its session kept after.
    home_name: str
    names: frozenset[str]
    os_layer: bool
    mcp: TurnMcpServer
    egress: EgressGate | None = None
    host_gateway: HostGateway | None = None


def _permission_decider(
    calls: ExternalCalls, profile: CapabilityProfile, gated: frozenset[str] = frozenset()
) -> DecidePermission:
    """Claude's own ExitPlanMode is answered from our durable plan_exit gate (SPEC §5): the
    first call opens it and is refused, repeats keep the one gate, a call after the operator's
    grant switches the space to Agent mode. A ``gated`` shell command or file write is its
    catalogue call at our gate (``ExternalCalls.consent``): a stored rule answers it ("granted
    by rule R"), else the operator in the Inbox. Anything else Claude would ask a person is
    refused."""

    ours = {claude_tool_name(v.name) for v in calls.verbs}

    async def decide(tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        if tool in ours:
            # Our own verbs: the call itself runs through the surface, gate and guardrail.
            return {"behavior": "allow", "updatedInput": tool_input}
        call = catalogue_call(tool, tool_input) if tool in gated else None
        if call is not None:
            name, args = call
            if "path" in args:
                # Claude names files by absolute path; our gate and rules read worktree paths
                # (one outside it stays absolute, which the gate refuses).
                args["path"] = _worktree_relative(Path(calls.scope.turn.worktree), args["path"])
            refused = await calls.consent(name, args)
            if refused is None:
                return {"behavior": "allow", "updatedInput": tool_input}
            return {"behavior": "deny", "message": refused.content}
        if tool == "ExitPlanMode" and any(v.name == EXIT_PLAN_VERB for v in calls.verbs):
            plan = str(tool_input.get("plan") or "").strip()
            summary = plan.splitlines()[0][:200] if plan else "Leave plan mode"
            out = await calls.call(EXIT_PLAN_VERB, {"summary": summary})
            if not out.is_error and out.content.startswith("granted"):
                return {"behavior": "allow", "updatedInput": tool_input}
            return {"behavior": "deny", "message": out.content}
        return {
            "behavior": "deny",
            "message": f"{tool} is not allowed in {profile.label} mode (the operator decides).",
        }

    return decide


def _worktree_relative(worktree: Path, path: str) -> str:
    candidate = Path(path)
    if candidate.is_absolute() and candidate.is_relative_to(worktree):
        return candidate.relative_to(worktree).as_posix() or "."
    return path


async def _run_cli(launch: _Launch, message: str, resume_session: str | None) -> _CliRun:
    """One ``claude`` process in a home rebuilt for it; afterwards the host keeps its session's
    transcript (claude_home)."""
    ws = launch.host.ws
    try:
        # Nothing a previous run left in the home is loaded, and only the host's copy of the
        # session this run resumes is in it.
        prepare_home(ws.root, launch.home_name, resume_session)
    except OSError as exc:
        return _CliRun(TurnStatus.FAILED, f"could not prepare Claude Code's home: {exc}", resume_session)
    try:
        return await _run_claude(launch, message, resume_session)
    finally:
        # The session this run ran (reported at its start; also when it was cancelled).
        session = launch.calls.state.get("session_id") or resume_session
        if isinstance(session, str) and session:
            try:
                keep_session(ws.root, launch.home_name, session)
            except OSError:
                log.exception("could not keep Claude Code session %s", session)


async def _run_claude(launch: _Launch, message: str, resume_session: str | None) -> _CliRun:
    """One ``claude`` process, from start to its result; cancelling kills its whole group."""
    turn, profile, cli, recorder = launch.turn, launch.profile, launch.cli, launch.recorder
    ws = launch.host.ws
    model = turn.settings.get("model")
    model_name = model if isinstance(model, str) else None

    mcp_files: list[Path] = []

    def forget_mcp_files() -> None:
        for path in mcp_files:
            path.unlink(missing_ok=True)

    def claude_argv(mcp_url: str | None) -> list[str]:
        config_file = None
        if launch.mcp is not None:
            config_file = write_private_config(launch.home, launch.mcp.config(mcp_url))
            mcp_files.append(config_file)
        argv = build_argv(
            cli,
            message,
            profile,
            launch.names,
            model_name,
            launch.mcp,
            config_file,
            launch.calls.scope.autonomy,
        )
        if resume_session:
            argv[1:1] = ["--resume", resume_session]
        return argv

    argv = claude_argv(None)
    key = launch.api_key
    inside: dict[str, str] = {}
    # What Claude needs to run inside a sandbox: the CLI, and our interpreter for the hook.
    readable = (*cli_needs(cli), Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable), PACKAGE_ROOT)
    # What no sandbox shows: this workspace, the operator's other ones, the operator's home.
    hidden = (ws.root, *launch.host.settings.workspace_roots(), *_operator_home())
    if not launch.os_layer and not profile.read_only:
        # Agent mode: Claude and every command it runs write the worktree, and see neither the
        # workspace (its database, other spaces), nor the operator's home, nor the keyring.
        confined = sandbox.claude_agent_argv(
            argv,
            Path(turn.worktree),
            launch.home,
            hidden=hidden,
            readable=readable,
        )
        argv = confined or argv
    if launch.os_layer:
        egress = launch.egress
        box = sandbox.ClaudeSandbox(
            Path(turn.worktree),
            launch.home,
            # The operator's home too: read-only is not enough where a request can leave (a key
            # read in ~/.ssh could go out to the model endpoint).
            hidden=hidden,
            readable=readable,
            egress=None
            if egress is None
            else sandbox.Egress(
                egress.folder or Path(),
                tuple(relay_command()),
                tuple((r.port, r.socket) for r in egress.routes),
            ),
        )
        inner_url = egress.mcp_url if egress is not None else None
        wrapped = sandbox.claude_sandbox_argv(claude_argv(inner_url), box)
        if wrapped is None:  # bubblewrap went away since the probe: say so, run on the hook
            recorder.note("note", GUIDANCE_NOTE)
        else:
            argv = wrapped
            if egress is not None:
                # The operator's key stays with the host's gateway: inside, only a stand-in that
                # is worth nothing elsewhere (bwrap's own environment is readable in /proc too).
                inside = egress.env()
                key = inside[API_KEY_ENV]
    if launch.host_gateway is not None:
        inside = launch.host_gateway.env()
        key = inside[API_KEY_ENV]
    env = build_env(launch.host, profile, key, launch.home)
    env.update(inside)
    # Claude's stdout is a socket, not a pipe: a pipe can be opened again through
    # /proc/<pid>/fd/1 by any process of the same user (a command Claude runs would write a
    # forged assistant message into the stream we store); a socket cannot be opened that way.
    ours, theirs = socket.socketpair()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(turn.worktree),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=theirs.fileno(),
            stderr=asyncio.subprocess.PIPE,
            # Its own process group, so cancelling kills the CLI and everything it started.
            start_new_session=True,
            limit=_LINE_LIMIT,
        )
    except OSError as exc:
        ours.close()
        theirs.close()
        forget_mcp_files()
        return _CliRun(TurnStatus.FAILED, f"could not start Claude Code ({cli}): {exc}", resume_session)
    # The turn row's state is shared with the calls (the approvals they used): one dict.
    state = launch.calls.state
    state.update({**owner_state(), "claude_pid": proc.pid})
    recorder.progress(status=TurnStatus.RUNNING, error=None, state=state)

    def session_started(session_id: str) -> None:
        # Kept at once: an interrupted turn resumes this session (--resume).
        state["session_id"] = session_id
        recorder.progress(state=state)
        # Claude has read its MCP configuration: the token now lives only in its memory.
        forget_mcp_files()

    stream = _Stream(recorder, recorder.emit, on_session=session_started)
    stderr_tail: deque[str] = deque()
    stderr_task = asyncio.create_task(_drain(proc.stderr, stderr_tail))
    theirs.close()
    writer: asyncio.StreamWriter | None = None
    try:
        reader, writer = await asyncio.open_unix_connection(sock=ours, limit=_LINE_LIMIT)
        async for raw in reader:
            stream.feed(raw.decode("utf-8", errors="replace"))
        code = await proc.wait()
        await stderr_task
    except asyncio.CancelledError:
        await _kill_group(proc, always=True)
        stderr_task.cancel()
        raise
    except Exception as exc:  # a bug must end the turn visibly, never leave it "running"
        log.exception("claude-code turn %s failed", turn.id)
        await _kill_group(proc)
        stderr_task.cancel()
        return _CliRun(TurnStatus.FAILED, f"internal error: {type(exc).__name__}: {exc}", stream.session_id)
    finally:
        forget_mcp_files()
        if writer is not None:
            writer.close()
        else:
            ours.close()
        if proc.returncode is None:
            await _kill_group(proc)
    return _conclude(recorder, stream, code, "".join(stderr_tail))


def _conclude(recorder: TurnRecorder, stream: _Stream, code: int, stderr: str) -> _CliRun:
    result = stream.result
    session = stream.session_id
    if result is None:
        detail = stderr.strip()[-_STDERR_TAIL_CHARS:] or "no output"
        return _CliRun(
            TurnStatus.FAILED, f"Claude Code exited with code {code} without a result: {detail}", session
        )
    given = result.get("usage")
    usage_in: dict[str, Any] = given if isinstance(given, dict) else {}
    usage = Usage(
        model_calls=int(result.get("num_turns") or 0),
        input_tokens=int(usage_in.get("input_tokens") or 0),
        output_tokens=int(usage_in.get("output_tokens") or 0),
        cost_usd=float(result.get("total_cost_usd") or 0.0),
    )
    denials = result.get("permission_denials") or []
    if isinstance(denials, list) and denials:
        refused = "; ".join(_describe_denial(d) for d in denials)
        recorder.note("note", f"Claude Code refused {refused}.", denials=denials)
    if result.get("is_error") or result.get("subtype") != "success":
        errors = result.get("errors")
        why = result.get("result") or (errors and "; ".join(map(str, errors))) or result.get("subtype")
        return _CliRun(TurnStatus.FAILED, f"Claude Code: {why or 'the run failed'}", session, usage)
    return _CliRun(TurnStatus.COMPLETED, None, session, usage)


def _describe_denial(denial: Any) -> str:
    if not isinstance(denial, dict):
        return str(denial)
    name = str(denial.get("tool_name", "?"))
    given = denial.get("tool_input")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    detail = args.get("command") or args.get("file_path") or ""
    return f"{name} `{detail}`" if detail else name


async def _drain(reader: asyncio.StreamReader | None, tail: deque[str]) -> None:
    """Keep the last few KB of stderr (for the error message); reading it keeps the pipe open."""
    if reader is None:
        return
    size = 0
    while chunk := await reader.read(65536):
        text = chunk.decode("utf-8", errors="replace")
        tail.append(text)
        size += len(text)
        while size > _STDERR_TAIL_CHARS and len(tail) > 1:
            size -= len(tail.popleft())


async def _kill_group(proc: asyncio.subprocess.Process, *, always: bool = False) -> None:
    """SIGKILL the CLI's whole process group and reap it. ``always``: even when the CLI itself
    has exited, since shells it started in the background may still run in its group."""
    if proc.returncode is None or always:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), _KILL_WAIT_S)
