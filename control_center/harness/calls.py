"""The per-call path every transport shares: a call is checked against the turn's surface and
the tool's schema, refused when its path leaves the worktree, stopped at the approval gate,
checked by the mode's guardrail, and then run (a verb, or a tool with a wall-clock limit and, for
calls with an effect, at most once). ``ExternalCalls`` runs the calls that arrive from another
transport's process (Claude Code's MCP verbs) on the same path, waiting for the operator where
the built-in loop would suspend the turn."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from control_center.core.approvals import SYSTEM_ACTOR, Approval, ApprovalKind, ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.core.grants import GrantRule
from control_center.core.modes import Autonomy
from control_center.core.profiles import CapabilityProfile
from control_center.core.records import Space, Turn
from control_center.core.review import AxisResult, AxisStatus
from control_center.core.schema import MAX_TOOL_INPUT_DEPTH, validate
from control_center.core.surface import Deny, guardrail, materialize_surface, needs_approval
from control_center.core.tools import ToolSpec, find
from control_center.harness import call_journal
from control_center.harness.grants import RuleIndex
from control_center.harness.output_stream import OutputStream
from control_center.harness.recorder import EventSink, TurnRecorder
from control_center.harness.suspensions import WaitingCall, missing_outcome, suspension_for
from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput
from control_center.harness.tools.bounded import run_bounded
from control_center.harness.tools.registry import implementation
from control_center.harness.tools.shell import run_gate, tool_output_path
from control_center.harness.turn_claim import LIVE_WAIT
from control_center.harness.verbs import VerbContext
from control_center.store.db import StoreError
from control_center.store.store import new_id, now_iso
from control_center.workspace import Workspace, WorkspaceError

GATE_TIMEOUT_S = 600.0


@dataclass
class Needs:
    """A call that waits for the operator (an approval, an answer)."""

    kind: ApprovalKind = ApprovalKind.TOOL_CALL


#: What a call comes to: its result and whether it ends the run, or a wait for the operator.
CallOutcome = tuple[ToolOutput, bool] | Needs


@dataclass(kw_only=True)
class CallScope:
    """One turn, as its calls see it: the surface, the mode, where it runs, what it delivered."""

    turn: Turn
    space: Space | None
    profile: CapabilityProfile
    autonomy: Autonomy
    surface: dict[str, ToolSpec]
    conversation_id: str
    author: str = "agent"
    state: dict[str, Any] = field(default_factory=dict)
    delivered: bool = False
    emit: EventSink = field(default=lambda _e: None)
    cancel_event: threading.Event = field(default_factory=threading.Event)


class CallPath:
    """Runs one call of a turn (see the module's docstring)."""

    def __init__(
        self,
        ws: Workspace,
        env_allow: tuple[str, ...],
        *,
        agent_network: bool = True,
        agent_writable: tuple[str, ...] = (),
        other_workspaces: tuple[Path, ...] = (),
    ) -> None:
        self.ws = ws
        #: What a sandboxed process must not see: this workspace and the operator's others.
        self.hidden = (ws.root, *other_workspaces)
        self.env_allow = env_allow
        #: The grant rules' index and the store's rules version it was built at.
        self._rules: tuple[str, RuleIndex] | None = None
        self.agent_network = agent_network
        self.agent_writable = tuple(Path(p) for p in agent_writable)

    async def dispatch(
        self,
        ctx: CallScope,
        name: str,
        args: Any,
        *,
        approved: bool,
        call_id: str = "",
        approval_id: str | None = None,
    ) -> CallOutcome:
        spec = ctx.surface.get(name)
        if spec is None:
            # Off the surface: invisible, so answered exactly like a tool that does not exist.
            return ToolOutput(f"unknown tool {name!r}", is_error=True), False
        if not isinstance(args, dict):
            return ToolOutput(
                f"invalid input for {name}: input must be a JSON object, nested at most "
                f"{MAX_TOOL_INPUT_DEPTH} levels deep",
                is_error=True,
            ), False
        problems = validate(spec.input_schema, args)
        if problems:
            return ToolOutput(f"invalid input for {name}: " + "; ".join(problems), is_error=True), False
        if spec.not_twice_in_a_row and ctx.state.get("last_tool") == name:
            return ToolOutput(
                f"{name} refused: it was the previous call too; never call it twice in a row. "
                "Do some work, or end your turn with your answer.",
                is_error=True,
            ), False
        escape = path_problem(ctx.turn.worktree, name, args)
        if escape is not None:
            # Refused before the gate: the operator is never asked to approve a path that leaves
            # the worktree.
            return ToolOutput(escape, is_error=True), False
        # What lets the call run (the decision ledger's link in the call journal).
        allowed: tuple[str, str]
        if approved:
            allowed = ("approval", approval_id or "")
        elif needs_approval(spec, ctx.profile, ctx.autonomy):
            rule = self.rule_for(ctx, spec, args)
            if rule is None:
                return Needs()
            allowed = ("rule", rule.id)
            self._granted_by_rule(ctx, rule, call_id, name)
        else:
            allowed = ("autonomy", ctx.autonomy.value)
        verdict = guardrail(spec, ctx.profile)
        if isinstance(verdict, Deny):
            return ToolOutput(verdict.reason, is_error=True), False
        try:
            fn = implementation(spec)
            if fn is None:
                return ToolOutput(
                    f"tool {name} has no implementation on this transport", is_error=True
                ), False
            if spec.verb:
                vctx = VerbContext(
                    ws=self.ws,
                    space=ctx.space,
                    turn_id=ctx.turn.id,
                    conversation_id=ctx.conversation_id,
                    profile=ctx.profile,
                    author=ctx.author,
                    emit=ctx.emit,
                    run_gates=self.run_gates,
                )
                res = await fn(vctx, args)
                if res.suspend is not None:
                    return Needs(res.suspend)
                if res.delivered and name == ctx.profile.output_verb:
                    ctx.delivered = True
                return res.output, res.end_run
            tool_ctx = ToolContext(
                worktree=ctx.turn.worktree,
                read_only=ctx.profile.read_only,
                env_allow=self.env_allow,
                hidden=self.hidden,
                network=self.agent_network,
                writable=self.agent_writable,
                extras={
                    "cancel_event": ctx.cancel_event,
                    "output_file": tool_output_path(self.ws.root, call_id),
                    **({"base": ctx.space.pr_base, "head": "HEAD"} if ctx.space and ctx.space.is_pr else {}),
                },
            )
            extra = (self.ws,) if spec.workspace else ()
            if not (call_id and call_journal.is_effectful(spec)):
                return await run_bounded(name, fn, tool_ctx, args, *extra), False

            async def run_journaled(spool: Path) -> ToolOutput:
                # The command's output goes to the spool as it arrives: after a crash it is what the
                # model is shown of a call that may have run.
                spooled = replace(tool_ctx, extras={**tool_ctx.extras, "output_file": spool})
                try:
                    # ... and to the window as it is printed.
                    async with OutputStream(spool, call_id, name, ctx.emit):
                        return await run_bounded(name, fn, spooled, args, *extra)
                except (ToolError, WorkspaceError) as exc:
                    return ToolOutput(str(exc), is_error=True)

            out = await call_journal.run_at_most_once(
                self.ws.store,
                self.ws.root,
                turn_id=ctx.turn.id,
                call_id=call_id,
                name=name,
                args=args,
                run=run_journaled,
                allowed=allowed,
            )
            return out, False
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True), False
        except WorkspaceError as exc:
            return ToolOutput(str(exc), is_error=True), False

    def writes_before_result(self, ctx: CallScope, name: str) -> bool:
        """Whether ``dispatch`` may write before the call's result: a journal claim (an effect),
        an Inbox item or a rule's note (the gate), or a verb's own writes. A model reply whose
        calls all say no may ride on the first result's write (``TurnRecorder.model_reply``)."""
        spec = ctx.surface.get(name)
        if spec is None:
            return False  # answered "unknown tool", nothing written
        return (
            spec.verb
            or spec.workspace
            or call_journal.is_effectful(spec)
            or needs_approval(spec, ctx.profile, ctx.autonomy)
        )

    def rule_for(self, ctx: CallScope, spec: ToolSpec, args: dict[str, Any]) -> GrantRule | None:
        """The stored grant rule that answers this call at the gate (harness/grants.py), if any:
        read from the store at every call, so a rule revoked a moment ago answers nothing."""
        version = self.ws.store.rules_version()
        if self._rules is None or self._rules[0] != version:
            # Read again only after a rule was made or revoked (by any process): one key
            # lookup per gated call otherwise.
            self._rules = (version, RuleIndex(self.ws.store.active_rules()))
        index = self._rules[1]
        if not index:
            return None
        return index.match(
            spec,
            ctx.profile,
            args,
            ctx.turn.worktree,
            space_id=ctx.space.id if ctx.space else None,
            turn_id=ctx.turn.id,
            now=now_iso(),
        )

    def _granted_by_rule(self, ctx: CallScope, rule: GrantRule, call_id: str, name: str) -> None:
        if not ctx.conversation_id:
            return
        self.ws.store.add_message(
            ctx.conversation_id,
            role="system",
            kind="note",
            text=f"{name} granted by rule {rule.id}: {rule.describe()}",
            meta={"rule_id": rule.id, "call_id": call_id, "tool": name},
            turn_id=ctx.turn.id,
        )

    def open_wait(
        self,
        scope: CallScope,
        needs: Needs,
        call_id: str,
        name: str,
        args: dict[str, Any],
        preview: str | None = None,
    ) -> Approval:
        """The durable Inbox item a call waits on (and its conversation card), announced."""
        return suspension_for(needs.kind).open(
            WaitingCall(
                store=self.ws.store,
                space_id=scope.space.id if scope.space else None,
                turn_id=scope.turn.id,
                conversation_id=scope.conversation_id,
                worktree=scope.turn.worktree,
                call_id=call_id,
                name=name,
                args=args,
                emit=scope.emit,
                preview=preview,
            )
        )

    async def run_gates(self, space: Space) -> list[AxisResult]:
        results = []
        for gate in space.gates:
            outcome = await asyncio.to_thread(
                run_gate,
                gate.command,
                space.worktree,
                GATE_TIMEOUT_S,
                network=gate.network,
                env_allow=self.env_allow,
                hidden=self.hidden,
            )
            results.append(AxisResult(gate.name, AxisStatus(outcome.status), outcome.detail))
        return results


#: How often a call from another transport looks for the operator's decision (any process may
#: record it: the app, ``control-center approvals decide``).
DECISION_POLL_S = 0.25


class _DecisionBell:
    """Wakes the calls of this process waiting on an approval as soon as it is decided in this
    process (``decision_made``, from any thread); the poll above still sees other processes'."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    def listen(self, approval_id: str, event: asyncio.Event) -> None:
        with self._lock:
            self._waiting.setdefault(approval_id, []).append((asyncio.get_running_loop(), event))

    def forget(self, approval_id: str, event: asyncio.Event) -> None:
        with self._lock:
            rest = [(lp, ev) for lp, ev in self._waiting.get(approval_id, []) if ev is not event]
            if rest:
                self._waiting[approval_id] = rest
            else:
                self._waiting.pop(approval_id, None)

    def ring(self, approval_id: str) -> None:
        with self._lock:
            waiting = list(self._waiting.get(approval_id, ()))
        for loop, event in waiting:
            with contextlib.suppress(RuntimeError):  # its loop has closed
                loop.call_soon_threadsafe(event.set)


DECISION_BELL = _DecisionBell()


def decision_made(approval_id: str) -> None:
    """An approval was decided or answered in this process: its waiting calls look now."""
    DECISION_BELL.ring(approval_id)


#: Turn-state key: approvals opened over another transport that a call has already used.
_USED_APPROVALS = "used_approvals"
#: Turn-state key: the Inbox item a waiting turn waits on (as a suspended built-in turn has it).
_PENDING = "pending"


def external_calls(
    path: CallPath, turn: Turn, space: Space | None, profile: CapabilityProfile, recorder: TurnRecorder
) -> ExternalCalls:
    """The calls of one turn driven by another transport, on the built-in per-call path."""
    autonomy = space.autonomy if space else Autonomy.ASK
    tools = materialize_surface(profile, autonomy, turn.transport)
    scope = CallScope(
        turn=turn,
        space=space,
        profile=profile,
        autonomy=autonomy,
        surface={t.name: t for t in tools},
        conversation_id=turn.conversation_id or "",
        author=str(turn.settings.get("agent") or "agent"),
        # A wait's marks left by a run that died mid-wait: this run decides its own waits.
        state={k: v for k, v in turn.state.items() if k not in (_PENDING, LIVE_WAIT)},
        delivered=turn.delivered,
        emit=recorder.emit,
    )
    return ExternalCalls(path, scope, recorder)


@dataclass
class ExternalCalls:
    """One turn's calls from another transport, run as the built-in harness runs them. A call
    that needs the operator opens the same durable Inbox item and WAITS for the decision (the
    other transport's process waits for the call's result); ``close`` ends every wait. ``state``
    is the turn row's state, shared with the driver (its own keys ride in it)."""

    path: CallPath
    scope: CallScope
    recorder: TurnRecorder
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    #: Approvals calls of this run are waiting on.
    waiting: set[str] = field(default_factory=set)

    @property
    def verbs(self) -> list[ToolSpec]:
        """The verbs on this turn's surface (what the turn's MCP server lists)."""
        return [spec for spec in self.scope.surface.values() if spec.verb]

    @property
    def delivered(self) -> bool:
        return self.scope.delivered

    @property
    def state(self) -> dict[str, Any]:
        return self.scope.state

    def close(self, *, final: bool) -> None:
        """End every wait. ``final`` (the turn cannot be resumed): an item still pending would
        wait for nothing, so it is withdrawn with the reason; otherwise it stays for the resume."""
        self.closed.set()
        if self._clear_wait_marks():
            self.recorder.progress(state=self.scope.state)
        if not final:
            return
        store = self.path.ws.store
        for approval_id in self.waiting:
            approval = store.approval(approval_id)
            if approval is not None and approval.status is ApprovalStatus.PENDING:
                question = approval.kind is ApprovalKind.QUESTION
                with contextlib.suppress(StoreError):
                    store.decide_approval(
                        approval_id,
                        ApprovalStatus.ANSWERED if question else ApprovalStatus.REJECTED,
                        by=SYSTEM_ACTOR,
                        reason="the turn ended before a decision",
                    )

    async def call(self, name: str, args: dict[str, Any], call_id: str = "") -> ToolOutput:
        call_id = call_id or new_id()
        scope = self.scope
        result = await self.path.dispatch(scope, name, args, approved=False, call_id=call_id)
        if isinstance(result, Needs):
            approval = self._waiting_approval(result.kind, name, args) or self.path.open_wait(
                scope, result, call_id, name, args
            )
            self._wait_begins(approval.id)
            try:
                decided = await self._decision(approval.id)
            finally:
                self._wait_ends(approval.id)
            if decided is None and not self.closed.is_set():
                return missing_outcome()
            if decided is None:
                return ToolOutput(
                    f"{name} waited for the operator's decision and the turn ended first; it did not run.",
                    is_error=True,
                )
            self._mark_used(decided.id)
            settled = suspension_for(decided.kind).outcome(decided)
            if settled is not None:
                return settled
            result = await self.path.dispatch(
                scope, name, args, approved=True, call_id=call_id, approval_id=decided.id
            )
            if isinstance(result, Needs):
                return ToolOutput(f"{name} cannot wait twice in one call", is_error=True)
        out, _end = result
        scope.state["last_tool"] = name
        if scope.delivered:
            self.recorder.progress(delivered=True)
        return out

    async def consent(
        self, name: str, args: dict[str, Any], call_id: str = "", *, preview: str | None = None
    ) -> ToolOutput | None:
        """For a call the other agent runs itself (a command Codex asks to run): None when it may
        run now (after the operator's grant where the gate asks, as for ``call``), else why not.
        Nothing runs here; the same Inbox item, gate and guardrail decide."""
        scope = self.scope
        spec = scope.surface.get(name)
        if spec is None:
            return ToolOutput(f"{name} is not allowed in {scope.profile.label} mode", is_error=True)
        escape = path_problem(scope.turn.worktree, name, args)
        if escape is not None:
            return ToolOutput(escape, is_error=True)
        rule = (
            self.path.rule_for(scope, spec, args)
            if needs_approval(spec, scope.profile, scope.autonomy)
            else None
        )
        if rule is not None:
            # A stored rule answers the gate as on the built-in harness (same matching, same
            # refusals), recorded in the conversation; the guardrail below still decides.
            self.path._granted_by_rule(scope, rule, call_id, name)
        elif needs_approval(spec, scope.profile, scope.autonomy):
            call_id = call_id or new_id()
            approval = self._waiting_approval(ApprovalKind.TOOL_CALL, name, args) or self.path.open_wait(
                scope, Needs(), call_id, name, args, preview
            )
            self._wait_begins(approval.id)
            try:
                decided = await self._decision(approval.id)
            finally:
                self._wait_ends(approval.id)
            if decided is None:
                return ToolOutput(
                    f"{name} waited for the operator's decision and the turn ended first; it did not run.",
                    is_error=True,
                )
            self._mark_used(decided.id)
            settled = suspension_for(decided.kind).outcome(decided)
            if settled is not None:
                return settled
        verdict = guardrail(spec, scope.profile)
        if isinstance(verdict, Deny):
            return ToolOutput(verdict.reason, is_error=True)
        return None

    def _wait_begins(self, approval_id: str) -> None:
        """The turn row says it waits (as a suspended built-in turn's does), on which item, and
        that this process continues it after the decision (``turn_claim.waiting_in_its_process``)."""
        first = not self.waiting
        self.waiting.add(approval_id)
        if first and not self.closed.is_set():
            self.scope.state.update({_PENDING: {"approval_id": approval_id}, LIVE_WAIT: True})
            self.recorder.progress(status=TurnStatus.AWAITING_APPROVAL, state=self.scope.state)

    def _wait_ends(self, approval_id: str) -> None:
        self.waiting.discard(approval_id)
        if self.closed.is_set():
            return  # the turn's end writes its status (close() cleared the marks)
        if self.waiting:
            # Another call of this run still waits: the row names that one.
            self.scope.state[_PENDING] = {"approval_id": next(iter(self.waiting))}
            self.recorder.progress(state=self.scope.state)
            return
        self._clear_wait_marks()
        self.recorder.progress(status=TurnStatus.RUNNING, state=self.scope.state)

    def _clear_wait_marks(self) -> bool:
        had = _PENDING in self.scope.state or LIVE_WAIT in self.scope.state
        self.scope.state.pop(_PENDING, None)
        self.scope.state.pop(LIVE_WAIT, None)
        return had

    def _waiting_approval(self, kind: ApprovalKind, name: str, args: dict[str, Any]) -> Any:
        """The same call's Inbox item from before an interruption (pending, or decided and not
        yet used): a resumed session that repeats the call waits on it, never opens a second."""
        used = set(self.scope.state.get(_USED_APPROVALS) or ())
        for approval in self.path.ws.store.approvals(kind=kind, turn_id=self.scope.turn.id):
            if approval.id in used or approval.status is ApprovalStatus.SUPERSEDED:
                continue
            payload = approval.payload
            same = (
                payload.get("question") == args.get("question")
                if kind is ApprovalKind.QUESTION
                else payload.get("tool") == name and payload.get("input") == args
            )
            if same:
                return approval
        return None

    async def _decision(self, approval_id: str) -> Any:
        store = self.path.ws.store
        bell = asyncio.Event()
        DECISION_BELL.listen(approval_id, bell)
        try:
            while True:
                approval = store.approval(approval_id)
                if approval is None or approval.status.settled:
                    return approval
                if self.closed.is_set():
                    return None
                # A decision made in this process rings at once; one from another process
                # (``control-center approvals decide``) is seen by the next poll.
                waits = {asyncio.ensure_future(self.closed.wait()), asyncio.ensure_future(bell.wait())}
                _done, pending = await asyncio.wait(
                    waits, timeout=DECISION_POLL_S, return_when=asyncio.FIRST_COMPLETED
                )
                for task in pending:
                    task.cancel()
                bell.clear()
        finally:
            DECISION_BELL.forget(approval_id, bell)

    def _mark_used(self, approval_id: str) -> None:
        self.scope.state[_USED_APPROVALS] = [*(self.scope.state.get(_USED_APPROVALS) or ()), approval_id]
        self.recorder.progress(state=self.scope.state)


def path_problem(worktree: Path, name: str, args: dict[str, Any]) -> str | None:
    """Why the call is refused before the gate: a path input (as its declaration names them)
    that leaves the worktree; None when none does."""
    spec = find(name)
    if spec is None or not spec.paths:
        return None
    from control_center.harness.tools.paths import resolve_in_worktree

    for arg in spec.paths:
        raw = args.get(arg.key)
        if not isinstance(raw, str):
            continue
        try:
            resolve_in_worktree(worktree, raw, must_exist=False)
        except ToolError as exc:
            return str(exc)
    return None


def preview_diff(worktree: Path, name: str, args: dict[str, Any]) -> str | None:
    """What a write would change, computed without writing (for the approval's preview): the
    declaration's preview says how the file's text becomes after the call."""
    spec = find(name)
    after = spec.preview.after if spec is not None and spec.preview is not None else None
    key = spec.written_path if spec is not None else None
    if after is None or key is None or not isinstance(args.get(key), str):
        return None
    rel = args[key]
    try:
        from control_center.harness.tools.paths import resolve_in_worktree

        path = resolve_in_worktree(worktree, rel, must_exist=False)
        old = path.read_text(errors="replace") if path.is_file() else ""
    except (ToolError, OSError):
        return None
    new = after(old, args)
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
    )
    return "".join(diff) or None
