"""The Codex transport (SPEC §9): one turn is one ``codex app-server`` process in the space's
worktree, driven over its JSON-RPC protocol on stdio (the protocol Codex's own IDE integration
uses): ``initialize``, ``thread/start`` (or ``thread/resume`` of the turn's stored thread), one
``turn/start`` with the operator's message, its notifications mapped onto our events, and its
approval questions answered from our gate and Inbox.

How modes map (``core.transports.CODEX`` says what holds):

- a read-only mode under the OS layer: Codex runs inside our sandbox (the worktree read-only, a
  network of its own reaching only the model gateway and the turn's MCP server). Codex's own
  sandbox does not nest inside it (its bubblewrap needs a user namespace our layer does not
  give), so Codex is told ``danger-full-access``: ours is the boundary. Approval policy
  ``never``.
- a read-only mode without the OS layer: Codex's own ``read-only`` sandbox, policy ``never``.
- Agent mode: Codex's ``workspace-write`` sandbox with policy ``untrusted``: every command it
  does not itself know as read-only is asked of us, and becomes a ``tool_call`` Inbox item for
  ``run_command`` (decided by the space's autonomy and our guardrail), answered accept/decline.

The mode's verbs reach Codex as the turn's MCP server (``turn_mcp``); the model endpoint is the
mode's OpenAI provider, always through the host's gateway (``model_gateway.RESPONSES``): Codex
holds a stand-in key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import shutil
import signal
import socket
import sys
import tempfile
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
from control_center.core.records import Turn
from control_center.core.surface import materialize_surface
from control_center.core.transports import CODEX
from control_center.harness import sandbox
from control_center.harness.agent_processes import mark
from control_center.harness.calls import ExternalCalls, external_calls
from control_center.harness.cli_check import locate_cli
from control_center.harness.credentials import resolve_api_key
from control_center.harness.driver import DriverHost, TurnRun, contract_nudge
from control_center.harness.environment import scrubbed_environ
from control_center.harness.errors import HarnessError
from control_center.harness.pricing import cost_usd
from control_center.harness.recorder import TurnRecorder, Usage
from control_center.harness.tools.base import ToolOutput
from control_center.harness.transports.claude_home import home_key
from control_center.harness.transports.codex_home import keep_rollout, prepare_home
from control_center.harness.transports.codex_rpc import CodexRpc, RpcError
from control_center.harness.transports.egress import EgressGate, HostGateway, relay_command
from control_center.harness.transports.model_gateway import RESPONSES
from control_center.harness.transports.turn_mcp import SERVER_NAME, TurnMcpServer

if TYPE_CHECKING:
    from collections.abc import Callable

    from control_center.core.events import TurnEvent
    from control_center.harness.providers.base import ModelSettings

log = logging.getLogger(__name__)

CLI_NOT_FOUND = "Codex CLI not found: set codex_cli in Settings or put `codex` on PATH"
NO_API_KEY = (
    "Codex needs an OpenAI API key: add one in Settings or set OPENAI_API_KEY "
    "(the Codex transport uses the OpenAI provider's key and endpoint)"
)
GUIDANCE_NOTE = (
    "No OS layer on this host (bubblewrap is missing or does not work): on the Codex transport "
    "the read-only mode rests on Codex's own read-only sandbox."
)
TEMP_HOME_NOTE = (
    "Codex's home ({home}) is under the temporary folder, where Codex does not set up its own "
    "sandbox: the commands it runs there fail. Keep the workspace outside the temporary folder."
)
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The provider id in Codex's config, and the variables it reads the stand-in key and the MCP
#: token from (commands Codex runs do not get them: shell_environment_policy excludes them).
PROVIDER_ID = "control_center"
KEY_ENV = "CONTROL_CENTER_CODEX_KEY"
MCP_TOKEN_ENV = "CONTROL_CENTER_MCP_TOKEN"
#: What a resumed thread is told (its own rollout holds the rest).
RESUME_MESSAGE = "The previous turn was interrupted. Continue where you left off."
#: Codex's own tool for shell commands, and its patches, as our events name them.
COMMAND_TOOL = "exec_command"
PATCH_TOOL = "apply_patch"
_LINE_LIMIT = 64 * 1024 * 1024
_KILL_WAIT_S = 5.0
_START_TIMEOUT_S = 60.0


def find_codex_cli(setting: str | None) -> tuple[str | None, str | None]:
    """(path, None) or (None, the operator-facing error): the setting, else ``codex`` on PATH,
    resolved through symlinks (``cli_check.locate_cli``)."""
    return locate_cli(setting, "codex", CLI_NOT_FOUND)


def model_base_url(host: DriverHost, settings: ModelSettings) -> str:
    return settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def _toml(value: Any) -> str:
    # JSON strings, numbers and booleans are valid TOML basic values.
    return json.dumps(value)


def codex_config(base_url: str, model: str | None, mcp_url: str) -> str:
    """Codex's ``config.toml``: our gateway as its only provider, our MCP server, no telemetry."""
    lines = [f"model_provider = {_toml(PROVIDER_ID)}"]
    if model:
        lines.append(f"model = {_toml(model)}")
    lines += [
        "check_for_update_on_startup = false",
        "",
        f"[model_providers.{PROVIDER_ID}]",
        'name = "Control Center gateway"',
        f"base_url = {_toml(base_url)}",
        f"env_key = {_toml(KEY_ENV)}",
        'wire_api = "responses"',
        "",
        "[shell_environment_policy]",
        f"exclude = [{_toml(KEY_ENV)}, {_toml(MCP_TOKEN_ENV)}]",
        "",
        "[analytics]",
        "enabled = false",
        "",
        f"[mcp_servers.{SERVER_NAME}]",
        f"url = {_toml(mcp_url)}",
        f"bearer_token_env_var = {_toml(MCP_TOKEN_ENV)}",
        "startup_timeout_sec = 30",
        # A verb may wait for the operator's decision as long as it takes.
        "tool_timeout_sec = 31536000",
        "",
    ]
    return "\n".join(lines)


def thread_options(read_only: bool, os_layer: bool) -> dict[str, Any]:
    """``sandbox`` and ``approvalPolicy`` of the thread (see the module's docstring)."""
    if read_only:
        return {"sandbox": "danger-full-access" if os_layer else "read-only", "approvalPolicy": "never"}
    return {"sandbox": "workspace-write", "approvalPolicy": "untrusted"}


def _command_text(params: dict[str, Any]) -> str:
    """The command line Codex asks about, exactly as it will run: its ``command`` (Codex's own
    ``commandActions`` are a parse for display and could hide part of it). Only Codex's
    ``/bin/bash -lc '<line>'`` wrapper is taken off, when what follows is one quoted word."""
    command = str(params.get("command") or "")
    for wrapper in ("/bin/bash -lc ", "bash -lc ", "/bin/sh -c "):
        if command.startswith(wrapper):
            try:
                words = shlex.split(command[len(wrapper) :])
            except ValueError:
                return command
            return words[0] if len(words) == 1 else command
    if command:
        return command
    actions = params.get("commandActions")
    parts = [str(a.get("command")) for a in actions or [] if isinstance(a, dict) and a.get("command")]
    return " && ".join(parts)


class CodexDriver:
    """One turn is one ``codex app-server`` process: one thread, one or two turns on it (the
    completion contract's reminder), resumed by its stored thread id."""

    def __init__(self, host: DriverHost, settings: ModelSettings, script: list[Any] | None) -> None:
        self.host = host
        self.settings = settings

    def check_start(self) -> None:
        if self.settings.provider not in CODEX.providers:
            raise HarnessError(
                f"the Codex transport talks to an OpenAI (Responses API) endpoint only, but this "
                f"mode's provider is {self.settings.provider!r}: set modes.<mode>.provider to openai, "
                "or run the space on another transport"
            )
        _path, problem = find_codex_cli(self.host.settings.codex_cli)
        if problem is None and not resolve_api_key("openai")[0]:
            problem = NO_API_KEY
        if problem is not None:
            raise HarnessError(problem)

    def check_resume(self, turn: Turn) -> None:
        _thread_of(turn)

    async def drive(self, run: TurnRun) -> TurnEnded:
        turn, space, profile, recorder = run.turn, run.space, run.profile, run.recorder
        ws = self.host.ws
        thread_id = _thread_of(turn) if run.resumed else None
        autonomy = space.autonomy if space else Autonomy.ASK
        surface = materialize_surface(profile, autonomy, Transport.CODEX)
        os_layer = profile.read_only and sandbox.sandbox_available()
        recorder.started(
            TurnStarted(
                turn.id,
                space.id if space else None,
                profile.mode.value,
                Transport.CODEX.value,
                tuple(t.name for t in surface),
                provider=turn.settings.get("provider"),
                model=turn.settings.get("model"),
                resumed=run.resumed,
                guarantee=guarantee_for(profile, Transport.CODEX, os_layer).to_json(),
            )
        )
        if profile.read_only and not os_layer:
            recorder.note("note", GUIDANCE_NOTE)
        calls = external_calls(self.host.calls, turn, space, profile, recorder)
        usage = Usage.of(turn)

        def finish(status: TurnStatus, error: str | None = None) -> TurnEnded:
            calls.close(final=status in (TurnStatus.COMPLETED, TurnStatus.FAILED))
            return recorder.end(status, delivered=calls.delivered, usage=usage, error=error)

        cli, problem = find_codex_cli(self.host.settings.codex_cli)
        if cli is None:
            return finish(TurnStatus.FAILED, problem)
        api_key, _source = resolve_api_key("openai")
        if not api_key:
            return finish(TurnStatus.FAILED, NO_API_KEY)
        key = home_key(space.id if space else None, turn.id)
        try:
            home, left = prepare_home(ws.root, key, thread_id)
        except OSError as exc:
            return finish(TurnStatus.FAILED, f"could not prepare Codex's home: {exc}")
        if left is not None:
            _background(asyncio.to_thread(shutil.rmtree, left, True))
        if not os_layer and _under_temp(home):
            # Codex will not put its sandbox helper in a home under the temporary folder: every
            # command it runs in its own sandbox then fails (closed, but useless).
            recorder.note("note", TEMP_HOME_NOTE.format(home=home))
        base_url = model_base_url(self.host, self.settings)
        async with contextlib.AsyncExitStack() as stack:
            try:
                mcp = await stack.enter_async_context(TurnMcpServer(calls.verbs, calls.call))
            except OSError as exc:
                return finish(TurnStatus.FAILED, f"could not serve the mode's verbs to Codex: {exc}")
            egress: EgressGate | None = None
            gateway: HostGateway | None = None
            try:
                if os_layer:
                    assert mcp.port is not None
                    egress = await stack.enter_async_context(
                        EgressGate(base_url, mcp.port, api_key, RESPONSES)
                    )
                else:
                    gateway = await stack.enter_async_context(HostGateway(base_url, api_key, RESPONSES))
            except (OSError, ValueError) as exc:
                return finish(TurnStatus.FAILED, f"could not open Codex's model gateway: {exc}")
            launch = _Launch(
                self.host, turn, profile.read_only, recorder, calls, cli, home, os_layer, mcp, egress, gateway
            )
            try:
                status, error = await _run_app_server(launch, run.message, thread_id, usage, profile)
            except asyncio.CancelledError:
                finish(TurnStatus.INTERRUPTED, "cancelled by the operator")
                raise
            finally:
                # The app-server has exited: the host's copy of this run's thread, as it ended.
                thread = calls.state.get("thread_id")
                if isinstance(thread, str) and thread:
                    try:
                        keep_rollout(ws.root, key, thread)
                    except OSError:
                        log.exception("could not keep Codex's rollout of thread %s", thread)
            return finish(status, error)
        raise AssertionError("unreachable")  # pragma: no cover


def _under_temp(path: Path) -> bool:
    return path.resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())


_BACKGROUND: set[asyncio.Task[Any]] = set()


def _background(work: Any) -> None:
    """Housekeeping that must not delay the turn (kept referenced until it ends)."""
    task = asyncio.ensure_future(work)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


def _thread_of(turn: Turn) -> str:
    thread = turn.state.get("thread_id")
    if turn.status in (TurnStatus.COMPLETED, TurnStatus.FAILED):
        raise HarnessError(f"turn {turn.id} has ended ({turn.status.value}); start a new turn instead")
    if not isinstance(thread, str) or not thread:
        raise HarnessError(f"turn {turn.id} stopped before Codex started a thread; start a new turn instead")
    return thread


@dataclass(frozen=True)
class _Launch:
    host: DriverHost
    turn: Turn
    read_only: bool
    recorder: TurnRecorder
    calls: ExternalCalls
    cli: str
    home: Path
    os_layer: bool
    mcp: TurnMcpServer
    egress: EgressGate | None
    gateway: HostGateway | None


def _argv_and_env(launch: _Launch, model: str | None) -> tuple[list[str], dict[str, str]]:
    """The app-server's command line (under the OS layer where it runs) and environment; writes
    its config."""
    ws, turn = launch.host.ws, launch.turn
    env = scrubbed_environ(allow=launch.host.settings.allowed_env)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"):
        env.pop(name, None)
    env["CODEX_HOME"] = str(launch.home)
    env["HOME"] = str(launch.home)
    env[MCP_TOKEN_ENV] = launch.mcp.secret
    mark(env)
    argv = [launch.cli, "app-server"]
    if launch.egress is not None:
        assert launch.egress.gateway is not None
        base_url, key = launch.egress.inside_base_url, launch.egress.gateway.placeholder
        mcp_url = launch.egress.mcp_url
        env.update(dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"), ""))
        readable = (Path(launch.cli).parent, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable))
        hidden = (ws.root, *launch.host.settings.workspace_roots(), *_operator_home())
        box = sandbox.ClaudeSandbox(
            Path(turn.worktree),
            launch.home,
            hidden=hidden,
            readable=readable,
            egress=sandbox.Egress(
                launch.egress.folder or Path(),
                tuple(relay_command()),
                tuple((r.port, r.socket) for r in launch.egress.routes),
            ),
        )
        wrapped = sandbox.claude_sandbox_argv(argv, box)
        if wrapped is None:
            raise OSError("bubblewrap stopped working since it was probed")
        argv = wrapped
    else:
        assert launch.gateway is not None
        assert launch.gateway.gateway is not None
        base_url, key = launch.gateway.inside_base_url, launch.gateway.gateway.placeholder
        mcp_url = launch.mcp.url
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env[KEY_ENV] = key
    config = launch.home / "config.toml"
    fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(codex_config(base_url, model, mcp_url))
    return argv, env


def _operator_home() -> tuple[Path, ...]:
    home = os.environ.get("HOME")
    if not home:
        return ()
    path = Path(home).resolve()
    return (path,) if path != Path("/") and path.is_dir() else ()


@dataclass
class _Keeper:
    """Keeps the host's copy of the running thread's rollout current while the run goes on (a
    copy in a worker thread after each completed item, one at a time), so a turn whose process
    was killed outright still resumes from what its thread had done."""

    root: Path
    key: str
    thread_id: str | None = None
    _busy: bool = False
    _again: bool = False

    def soon(self) -> None:
        if self.thread_id is None:
            return
        if self._busy:
            self._again = True
            return
        self._busy = True
        _background(self._keep())

    async def _keep(self) -> None:
        try:
            while True:
                self._again = False
                assert self.thread_id is not None
                with contextlib.suppress(OSError):
                    await asyncio.to_thread(keep_rollout, self.root, self.key, self.thread_id)
                if not self._again:
                    return
        finally:
            self._busy = False


@dataclass
class _Stream:
    """Maps the app-server's notifications onto our events and stored messages."""

    recorder: TurnRecorder
    emit: Callable[[TurnEvent], None]
    #: Called after each completed item (the rollout has grown).
    on_item: Callable[[], None] = lambda: None
    thread_id: str | None = None
    turn_id: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    status: str | None = None
    error: str | None = None
    #: The changes of each file-change item (what a patch approval is about).
    changes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def notify(self, method: str, params: dict[str, Any]) -> None:
        if params.get("threadId") not in (None, self.thread_id):
            return  # another thread's (a subagent's): not this turn's stream
        if method == "item/agentMessage/delta":
            self.emit(TextDelta(str(params.get("delta", ""))))
        elif method in ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta"):
            self.emit(ThinkingDelta(str(params.get("delta", ""))))
        elif method == "item/started":
            self._item(params.get("item"), done=False)
        elif method == "item/completed":
            self._item(params.get("item"), done=True)
            self.on_item()
        elif method == "thread/tokenUsage/updated":
            usage = params.get("tokenUsage")
            last = usage.get("last") if isinstance(usage, dict) else None
            if isinstance(last, dict):
                self.model_calls += 1
                self.input_tokens += int(last.get("inputTokens") or 0)
                self.output_tokens += int(last.get("outputTokens") or 0)
        elif method == "error":
            err = params.get("error")
            message = err.get("message") if isinstance(err, dict) else err
            if not params.get("willRetry"):
                self.error = str(message or "Codex reported an error")
        elif method == "turn/completed":
            given = params.get("turn")
            turn: dict[str, Any] = given if isinstance(given, dict) else {}
            if self.turn_id is not None and turn.get("id") not in (None, self.turn_id):
                return
            self.status = str(turn.get("status") or "completed")
            err = turn.get("error")
            if isinstance(err, dict) and err.get("message"):
                self.error = str(err["message"])
            self.done.set()

    def _item(self, item: Any, *, done: bool) -> None:
        if not isinstance(item, dict):
            return
        kind, item_id = item.get("type"), str(item.get("id", ""))
        if kind == "agentMessage" and done:
            text = str(item.get("text") or "")
            if text:
                self.recorder.assistant(text, [{"type": "text", "text": text}])
        elif kind == "commandExecution":
            args = {"command": _command_text(item) or str(item.get("command") or "")}
            self._tool(item_id, COMMAND_TOOL, args, item, done)
        elif kind == "mcpToolCall":
            name = f"mcp__{item.get('server')}__{item.get('tool')}"
            given = item.get("arguments")
            self._tool(item_id, name, given if isinstance(given, dict) else {}, item, done)
        elif kind == "fileChange":
            given = item.get("changes")
            changes = [c for c in given if isinstance(c, dict)] if isinstance(given, list) else []
            self.changes[item_id] = changes
            paths = [str(c.get("path")) for c in changes]
            self._tool(item_id, PATCH_TOOL, {"paths": paths}, item, done)

    def _tool(self, item_id: str, name: str, args: dict[str, Any], item: dict[str, Any], done: bool) -> None:
        if not done:
            self.emit(ToolCallEvent(item_id, name, args))
            return
        status = item.get("status")
        text, is_error = _item_output(item)
        is_error = is_error or status in ("failed", "declined")
        self.recorder.assistant("", [{"type": "tool_use", "id": item_id, "name": name, "input": args}])
        self.emit(ToolResultEvent(item_id, name, is_error, text))
        self.recorder.tool_result(item_id, name, ToolOutput(text, is_error=is_error))


def _item_output(item: dict[str, Any]) -> tuple[str, bool]:
    if item.get("type") == "commandExecution":
        code = item.get("exitCode")
        text = str(item.get("aggregatedOutput") or "")
        if item.get("status") == "declined":
            return text or "declined", True
        return text, code not in (0, None)
    if item.get("type") == "mcpToolCall":
        error = item.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"]), True
        result = item.get("result")
        parts = []
        content = result.get("content") if isinstance(result, dict) else None
        for block in content or []:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        is_error = bool(result.get("isError")) if isinstance(result, dict) else False
        return "\n".join(parts), is_error
    return str(item.get("status") or ""), False


async def _run_app_server(
    launch: _Launch, message: str, thread_id: str | None, usage: Usage, profile: Any
) -> tuple[TurnStatus, str | None]:
    turn, recorder, calls = launch.turn, launch.recorder, launch.calls
    model = turn.settings.get("model")
    model_name = model if isinstance(model, str) and model else None
    try:
        argv, env = _argv_and_env(launch, model_name)
    except OSError as exc:
        return TurnStatus.FAILED, f"could not prepare Codex: {exc}"
    # stdin and stdout are one socket: a pipe can be opened again through /proc/<pid>/fd by any
    # process of the same user (a command Codex runs could forge protocol lines); a socket cannot.
    ours, theirs = socket.socketpair()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(turn.worktree),
            env=env,
            stdin=theirs.fileno(),
            stdout=theirs.fileno(),
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=_LINE_LIMIT,
            preexec_fn=_die_with_parent,
        )
    except OSError as exc:
        ours.close()
        theirs.close()
        return TurnStatus.FAILED, f"could not start Codex ({launch.cli}): {exc}"
    theirs.close()
    state = calls.state
    state["codex_pid"] = proc.pid
    recorder.progress(status=TurnStatus.RUNNING, error=None, state=state)
    keeper = _Keeper(launch.host.ws.root, launch.home.name)
    stream = _Stream(recorder, recorder.emit, on_item=keeper.soon)
    stderr_tail: list[str] = []
    stderr_task = asyncio.create_task(_drain(proc.stderr, stderr_tail))
    reader, writer = await asyncio.open_unix_connection(sock=ours, limit=_LINE_LIMIT)

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await _answer_question(launch, stream, method, params)

    rpc = CodexRpc(reader, writer, stream.notify, on_request)
    rpc_task = asyncio.create_task(rpc.run())
    try:
        await asyncio.wait_for(
            rpc.request(
                "initialize",
                {
                    "clientInfo": {"name": "control_center", "title": "Control Center", "version": "1"},
                    "capabilities": {"experimentalApi": False, "requestAttestation": False},
                },
            ),
            _START_TIMEOUT_S,
        )
        await rpc.notify("initialized")
        options = {"cwd": str(turn.worktree), **thread_options(launch.read_only, launch.os_layer)}
        if model_name:
            options["model"] = model_name
        if thread_id:
            started = await rpc.request("thread/resume", {"threadId": thread_id, **options})
            prompt = RESUME_MESSAGE
        else:
            started = await rpc.request("thread/start", options)
            prompt = message
        thread = started.get("thread")
        stream.thread_id = str(thread.get("id")) if isinstance(thread, dict) else thread_id
        keeper.thread_id = stream.thread_id
        # Kept at once: an interrupted turn resumes this thread.
        state["thread_id"] = stream.thread_id
        recorder.progress(state=state)
        nudged = turn.nudged
        while True:
            stream.done.clear()
            stream.status = stream.error = None
            answer = await rpc.request(
                "turn/start",
                {
                    "threadId": stream.thread_id,
                    "input": [{"type": "text", "text": prompt, "text_elements": []}],
                },
            )
            given = answer.get("turn")
            stream.turn_id = str(given.get("id")) if isinstance(given, dict) else None
            waiter = asyncio.create_task(stream.done.wait())
            await asyncio.wait({waiter, rpc_task}, return_when=asyncio.FIRST_COMPLETED)
            if not stream.done.is_set():
                waiter.cancel()
                detail = "".join(stderr_tail).strip()[-2000:] or "no output"
                return TurnStatus.FAILED, f"Codex exited before the turn completed: {detail}"
            if stream.status != "completed":
                return TurnStatus.FAILED, f"Codex: {stream.error or stream.status}"
            nudge = contract_nudge(profile, delivered=calls.delivered, nudged=nudged)
            if nudge is None:
                return TurnStatus.COMPLETED, None
            nudged = True
            recorder.nudge(nudge)
            prompt = nudge
    except RpcError as exc:
        detail = "".join(stderr_tail).strip()[-2000:]
        return TurnStatus.FAILED, f"Codex: {exc}" + (f" ({detail})" if detail else "")
    except TimeoutError:
        return TurnStatus.FAILED, "Codex's app-server did not answer initialize in time"
    finally:
        step = Usage(
            stream.model_calls,
            stream.input_tokens,
            stream.output_tokens,
            cost_usd(model_name or "", stream.input_tokens, stream.output_tokens, "openai"),
        )
        if step.model_calls:
            usage.add(step.model_calls, step.input_tokens, step.output_tokens, step.cost_usd)
            recorder.usage(usage, step)
        writer.close()
        await _kill_group(proc)
        rpc_task.cancel()
        stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await rpc_task


def _patch_call(worktree: Path, changes: list[dict[str, Any]]) -> tuple[str, dict[str, Any], str | None]:
    """The tool call a patch is for the gate and the Inbox: ``delete_file`` when it deletes,
    else ``write_file`` (of its first file; the preview shows every file), with the patch's own
    diff as the preview. Paths outside the worktree stay absolute (the path check refuses them)."""
    if not changes:
        return "write_file", {"path": ".", "content": ""}, None
    root = Path(worktree).resolve()
    rel: list[str] = []
    parts: list[str] = []
    deletes = False
    for change in changes:
        path = Path(str(change.get("path") or ""))
        try:
            name = path.resolve().relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
        except ValueError:
            name = str(path)
        rel.append(name)
        given = change.get("kind")
        kind = given.get("type") if isinstance(given, dict) else given
        diff = str(change.get("diff") or "")
        if kind == "add":
            body = "".join(f"+{line}\n" for line in diff.splitlines())
            parts.append(f"--- /dev/null\n+++ b/{name}\n{body}")
        elif kind == "delete":
            deletes = True
            parts.append(f"--- a/{name}\n+++ /dev/null\n")
        else:
            parts.append(f"--- a/{name}\n+++ b/{name}\n{diff}")
    preview = "".join(parts)
    if deletes:
        return "delete_file", {"path": rel[0]}, preview
    first = changes[0].get("diff")
    return "write_file", {"path": rel[0], "content": str(first or "")}, preview


async def _answer_question(
    launch: _Launch, stream: _Stream, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Codex asks before it runs a command or applies a patch: our gate and Inbox decide."""
    calls = launch.calls
    if method in ("item/commandExecution/requestApproval", "execCommandApproval"):
        command = _command_text(params)
        out = await calls.consent(
            "run_command", {"command": command}, call_id=str(params.get("itemId") or "")
        )
    elif method in ("item/fileChange/requestApproval", "applyPatchApproval"):
        # Codex asks about the patch of an item it announced (its changes came with the item).
        item_id = str(params.get("itemId") or "")
        name, args, preview = _patch_call(launch.turn.worktree, stream.changes.get(item_id) or [])
        out = await calls.consent(name, args, call_id=item_id, preview=preview)
    elif method == "mcpServer/elicitation/request":
        meta = params.get("_meta")
        tool = meta.get("tool_name") if isinstance(meta, dict) else None
        ours = {spec.name for spec in calls.verbs}
        if (
            params.get("serverName") == SERVER_NAME
            and isinstance(meta, dict)
            and meta.get("codex_approval_kind") == "mcp_tool_call"
            and tool in ours
        ):
            # Codex asks before it calls one of our verbs: the call itself passes our surface,
            # gate and guardrail inside our MCP server, so there is nothing to ask here.
            return {"action": "accept", "content": {}, "_meta": None}
        log.info("codex: declined an MCP elicitation from %.100s", params.get("serverName"))
        return {"action": "decline", "content": None, "_meta": None}
    else:
        # Questions we have no Inbox kind for (permissions, user input): an error answer, which
        # Codex takes as a refusal.
        raise RpcError(f"Control Center does not answer {method} requests")
    if out is not None:
        launch.recorder.note("note", f"Codex was refused: {out.content}")
        return {"decision": "decline"}
    return {"decision": "accept"}


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the process that started it dies (the app killed
    outright leaves no app-server running on as an orphan; its PID namespace, where it has one,
    ends the commands it started)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


async def _drain(reader: asyncio.StreamReader | None, tail: list[str]) -> None:
    if reader is None:
        return
    while chunk := await reader.read(65536):
        tail.append(chunk.decode("utf-8", errors="replace"))
        while sum(map(len, tail)) > 8000 and len(tail) > 1:
            tail.pop(0)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), _KILL_WAIT_S)
