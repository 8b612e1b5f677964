"""The turn loop: a step machine over (call the model, run tools, wait for an approval, nudge,
finish). No Qt here: the CLI runs it directly, the GUI on a worker thread.

At the start of every turn (and every resume) the mode is read from the space's row and the
prompt, tool surface and model handler are rebuilt from that mode's capability profile."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import (
    ModelRetry,
    NudgeEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    TurnStatus,
    UsageEvent,
)
from control_center.core.guarantees import guarantee_for
from control_center.core.modes import Autonomy, Transport
from control_center.core.profiles import CapabilityProfile, profile_for
from control_center.core.records import Space, Turn
from control_center.core.review import AxisResult, AxisStatus
from control_center.core.schema import validate
from control_center.core.surface import (
    Deny,
    build_system_prompt,
    guardrail,
    materialize_surface,
    needs_approval,
)
from control_center.core.tools import ToolSpec
from control_center.harness import call_journal, extra_tools, sandbox
from control_center.harness.context import (
    CompactionDone,
    ConversationHistory,
    compact_by_hand,
    history_for_call,
)
from control_center.harness.errors import HarnessError
from control_center.harness.history import model_history
from control_center.harness.preflight import claude_code_problem
from control_center.harness.pricing import cost_usd, unknown_price_note
from control_center.harness.providers.base import (
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    TextChunk,
    ThinkingChunk,
)
from control_center.harness.providers.factory import make_provider
from control_center.harness.providers.scripted import ScriptedProvider
from control_center.harness.settings import AppSettings
from control_center.harness.suspensions import WaitingCall, missing_outcome, suspension_for
from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput
from control_center.harness.tools.bounded import run_bounded
from control_center.harness.tools.registry import PURE_TOOLS
from control_center.harness.tools.shell import run_gate, tool_output_path
from control_center.harness.turn_claim import claim_for_resume, free_dead_turns, owner_state, refuse_busy
from control_center.harness.verbs import VERBS, VerbContext
from control_center.store.store import SpaceBusy, StoreError, new_id
from control_center.workspace import Workspace, WorkspaceError, resolved_mode

log = logging.getLogger(__name__)

EventSink = Callable[[TurnEvent], None]
BudgetCheck = Callable[[int, float], "str | None"]

FALLBACK_SCRIPT: list[list[dict[str, Any]]] = [
    [
        {
            "type": "text",
            "text": "This is Control Center's built-in scripted model: no API key is set and this space has "
            "no script. Add a key in Settings (or ANTHROPIC_API_KEY) to talk to a real model.",
        }
    ]
]
GATE_TIMEOUT_S = 600.0
SCRIPT_META_PREFIX = "script:"


@dataclass
class RunRequest:
    message: str
    space_ref: str | None = None
    #: "scripted" / "anthropic"; None uses the settings ("auto": anthropic when a key exists).
    provider: str | None = None
    script: list[Any] | None = None
    transport: Transport | None = None
    #: A thread: the conversation to post into (defaults to the space's main conversation).
    conversation_id: str | None = None
    #: The agent's name (authorship of findings, tickets; peers confirm each other's findings).
    author: str = "agent"
    #: A pipeline's budget: called before each model call after the first of a run with the
    #: tokens and USD this run has used; a reason ends the turn ``interrupted`` (resumable).
    budget_check: BudgetCheck | None = None


@dataclass
class _Needs:
    """A call that waits for the operator (an approval, an answer)."""

    kind: ApprovalKind = ApprovalKind.TOOL_CALL


@dataclass
class _TurnCtx:
    turn: Turn
    space: Space | None
    profile: CapabilityProfile
    autonomy: Autonomy
    transport: Transport
    surface: dict[str, ToolSpec]
    system: str
    settings: ModelSettings
    provider: ModelProvider
    conversation_id: str
    author: str
    state: dict[str, Any] = field(default_factory=dict)
    delivered: bool = False
    nudged: bool = False
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cancel_event: threading.Event = field(default_factory=threading.Event)
    emit: EventSink = field(default=lambda _e: None)
    #: The surface as the model request carries it, built once per run (schemas are frozen).
    tool_defs: list[dict[str, Any]] = field(default_factory=list)
    history: ConversationHistory | None = None
    #: On resume: calls whose result is already in the conversation (never answered twice).
    answered_calls: frozenset[str] = frozenset()
    #: ``state`` changed in a way that may wait for the next turn-row write (see _process_calls).
    state_dirty: bool = False
    budget_check: BudgetCheck | None = None


class Harness:
    """Runs turns of one workspace. ``emit`` receives every event as it happens."""

    def __init__(
        self,
        ws: Workspace,
        settings: AppSettings | None = None,
        *,
        provider_factory: Callable[..., ModelProvider] = make_provider,
    ) -> None:
        self.ws = ws
        self.settings = settings or AppSettings()
        self.provider_factory = provider_factory
        #: The model's view of each conversation, kept across turns (harness/context.py).
        self._histories: dict[str, ConversationHistory] = {}

    async def compact(self, space_ref: str) -> CompactionDone:
        """Compact the space's conversation by hand, with its mode's model (harness/context.py)."""
        space = self.ws.resolve_dispatch(space_ref)
        if space is None:
            raise HarnessError(f"no space {space_ref!r} in this workspace")
        free_dead_turns(self.ws.store, space.id)
        if self.ws.store.turns(status=TurnStatus.RUNNING, space_id=space.id):
            raise HarnessError(f"a turn is running in space {space.name!r}; compact when it has finished")
        settings = self._settings_for(resolved_mode(space), None)
        script = self._space_script(space) if settings.provider == "scripted" else None
        provider = self.provider_factory(settings, script=script, start=0)
        history = self.history_of(space.conversation_id)
        return await compact_by_hand(self.ws.store, history, provider, settings)

    def history_of(self, conversation_id: str) -> ConversationHistory:
        """The conversation's cached history (the most recently used 32 are kept)."""
        history = self._histories.pop(conversation_id, None) or ConversationHistory(conversation_id)
        self._histories[conversation_id] = history
        while len(self._histories) > 32:
            self._histories.pop(next(iter(self._histories)))
        return history

    # -- entry points ---------------------------------------------------------------------------

    async def run(self, req: RunRequest, emit: EventSink | None = None) -> TurnEnded:
        emit = emit or (lambda _e: None)
        store = self.ws.store
        # SPEC §8: the mode is read from the space's row at the start of each turn.
        space = self.ws.resolve_dispatch(req.space_ref)
        mode = resolved_mode(space)
        if space is not None:
            free_dead_turns(store, space.id)
        profile = profile_for(mode)
        transport = req.transport or (space.transport if space else self.settings.default_transport)
        settings = self._settings_for(mode, req.provider)
        script = req.script
        if settings.provider == "scripted" and script is None:
            script = self._space_script(space)
        # A run that cannot start stores nothing: check before the turn row exists.
        provider: ModelProvider | None = None
        if transport is Transport.CLAUDE_CODE:
            problem = claude_code_problem(self.settings.claude_cli)
            if problem is not None:
                raise HarnessError(problem)
        else:
            try:
                provider = self.provider_factory(settings, script=script, start=0)
            except ProviderError as exc:
                raise HarnessError(str(exc)) from None
        if space is not None:
            worktree, conversation_id = space.worktree, req.conversation_id or space.conversation_id
        else:
            worktree = self.ws.scratch_worktree(new_id())
            conversation_id = req.conversation_id or store.create_conversation(space_id=None)
        # The message rides in the turn row too: a crash between the row and the message row
        # must not lose what the operator asked (resume restores it).
        recorded = {**settings.to_json(), "agent": req.author, "script": script, "message": req.message}
        try:
            # The claim: one INSERT that only one turn per space can win (SPEC §11).
            turn = store.create_turn(
                space_id=space.id if space else None,
                conversation_id=conversation_id,
                mode=mode,
                transport=transport,
                settings=recorded,
                worktree=worktree,
                state=owner_state(),
            )
        except SpaceBusy as exc:
            raise refuse_busy(space, exc.turn, store) from None
        try:
            if space is not None:
                store.touch_space(space.id)
            store.add_message(
                conversation_id,
                role="user",
                kind="user",
                text=req.message,
                blocks=[{"type": "text", "text": req.message}],
                turn_id=turn.id,
            )
            if transport is Transport.CLAUDE_CODE:
                return await self._run_external(turn, space, profile, req.message, emit)
            ctx = self._context(
                store.turn(turn.id) or turn, space, profile, settings, script, 0, req.author, provider
            )
            ctx.budget_check = req.budget_check
        except ProviderError as exc:
            return self._finish_early(turn, space, mode.value, transport, emit, str(exc))
        except asyncio.CancelledError:
            # Cancelled while setting up: never leave the row "running" under a live pid.
            store.write_turn(
                turn.id, status=TurnStatus.INTERRUPTED, error="cancelled before the first model call"
            )
            raise
        emit(
            TurnStarted(
                turn.id,
                ctx.space.id if ctx.space else None,
                mode.value,
                transport.value,
                tuple(ctx.surface),
                provider=settings.provider,
                model=settings.model,
                guarantee=guarantee_for(profile, transport, sandbox.sandbox_available()).to_json(),
            )
        )
        self._price_note(ctx)
        return await self._drive(ctx, emit)

    async def resume(
        self, turn_id: str, emit: EventSink | None = None, *, budget_check: BudgetCheck | None = None
    ) -> TurnEnded:
        emit = emit or (lambda _e: None)
        store = self.ws.store
        turn = store.turn(turn_id)
        if turn is None:
            raise HarnessError(f"no turn {turn_id!r} in this workspace")
        if turn.transport is Transport.CLAUDE_CODE:
            session = _claude_session(turn)  # refusals write nothing
            turn = claim_for_resume(store, turn)
            return await self._resume_external(turn, session, emit)
        turn = claim_for_resume(store, turn)  # nothing is written before the claim succeeds
        # The mode is re-read at the start of the resumed run, like any turn.
        space = store.space(turn.space_id) if turn.space_id else None
        mode = resolved_mode(space) if turn.space_id else turn.mode
        profile = profile_for(mode)
        settings = ModelSettings.from_json(turn.settings)
        if space is not None and space.mode != turn.mode:
            store.write_turn(turn.id, mode=space.mode)
        turn = store.turn(turn.id) or turn
        self._restore_lost_message(turn)
        answered = self._settle_unfinished_calls(turn)
        try:
            ctx = self._context(
                turn,
                space,
                profile,
                settings,
                turn.settings.get("script"),
                turn.cursor,
                turn.settings.get("agent", "agent"),
            )
        except ProviderError as exc:
            return self._finish_early(turn, space, mode.value, turn.transport, emit, str(exc))
        ctx.budget_check = budget_check
        ctx.answered_calls = answered
        emit(
            TurnStarted(
                turn.id,
                space.id if space else None,
                mode.value,
                turn.transport.value,
                tuple(ctx.surface),
                resumed=True,
                provider=settings.provider,
                model=settings.model,
                guarantee=guarantee_for(profile, turn.transport, sandbox.sandbox_available()).to_json(),
            )
        )
        return await self._drive(ctx, emit)

    def _restore_lost_message(self, turn: Turn) -> None:
        """The operator's message, when the run that created the turn died before storing it."""
        message = turn.settings.get("message")
        if not turn.conversation_id or not isinstance(message, str):
            return
        store = self.ws.store
        if any(m.turn_id == turn.id and m.kind == "user" for m in store.messages(turn.conversation_id)):
            return
        store.add_message(
            turn.conversation_id,
            role="user",
            kind="user",
            text=message,
            blocks=[{"type": "text", "text": message}],
            turn_id=turn.id,
        )

    def _settle_unfinished_calls(self, turn: Turn) -> frozenset[str]:
        """Journaled calls whose result never reached the conversation get one now: the recorded
        result, or "may have run, outcome unknown" — never a second run (call_journal). Returns
        the ids of the calls of this turn whose result is in the conversation (a crash after the
        result and before the turn row moved on must not answer them twice)."""
        store = self.ws.store
        pending = turn.state.get("pending") or {}
        if not turn.conversation_id or not (pending or store.call_records(turn.id)):
            return frozenset()
        waiting = {u.get("id") for u in (pending.get("uses") or [])[pending.get("index", 0) :]}
        answered = {
            str(m.meta.get("call_id"))
            for m in store.messages(turn.conversation_id)
            if m.turn_id == turn.id and m.kind == "tool_result"
        }
        for record, out in call_journal.settle_unfinished(store, turn.id, answered | waiting):
            self._record_result(turn.conversation_id, turn.id, record.call_id, record.name, out)
            answered.add(record.call_id)
        return frozenset(answered)

    def _record_result(
        self,
        conversation_id: str,
        turn_id: str,
        call_id: str,
        name: str,
        out: ToolOutput,
        status_note: str | None = None,
    ) -> None:
        self.ws.store.add_message(
            conversation_id,
            role="user",
            kind="tool_result",
            text=out.content,
            blocks=[
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": out.content,
                    "is_error": out.is_error,
                }
            ],
            meta={
                "call_id": call_id,
                "name": name,
                "is_error": out.is_error,
                "diff": out.data.get("diff"),
                "full_output": out.data.get("full_output"),
                # A rejected call is the operator's decision, not a failure of the tool.
                **({"status": status_note} if status_note else {}),
            },
            turn_id=turn_id,
        )

    # -- set-up ---------------------------------------------------------------------------------

    def _settings_for(self, mode: Any, provider: str | None) -> ModelSettings:
        # Resolved from the mode's own settings at the start of each turn (SPEC §8).
        return self.settings.resolve(mode, provider)

    def _price_note(self, ctx: _TurnCtx) -> None:
        note = unknown_price_note(ctx.settings.provider, ctx.settings.model)
        if note:
            self._note(ctx.conversation_id, ctx.turn.id, "note", note)

    def _space_script(self, space: Space | None) -> list[Any]:
        if space is not None:
            path = self.ws.store.get_meta(SCRIPT_META_PREFIX + space.id)
            if path:
                from control_center.harness.providers.scripted import load_script

                p = Path(path)
                return load_script(p if p.is_absolute() else self.ws.root / p)
        return FALLBACK_SCRIPT

    def _context(
        self,
        turn: Turn,
        space: Space | None,
        profile: CapabilityProfile,
        settings: ModelSettings,
        script: list[Any] | None,
        cursor: int,
        author: str,
        provider: ModelProvider | None = None,
    ) -> _TurnCtx:
        autonomy = space.autonomy if space else Autonomy.ASK
        transport = turn.transport
        tools = materialize_surface(profile, autonomy, transport)
        system = build_system_prompt(profile, tools, autonomy, transport)
        if provider is None:
            provider = self.provider_factory(settings, script=script, start=cursor)
        return _TurnCtx(
            turn=turn,
            space=space,
            profile=profile,
            autonomy=autonomy,
            transport=transport,
            surface={t.name: t for t in tools},
            system=system,
            settings=settings,
            provider=provider,
            conversation_id=turn.conversation_id or "",
            author=author,
            state=dict(turn.state),
            delivered=turn.delivered,
            nudged=turn.nudged,
            model_calls=turn.model_calls,
            input_tokens=turn.input_tokens,
            output_tokens=turn.output_tokens,
            cost=turn.cost_usd,
            tool_defs=[
                {"name": t.name, "description": t.description, "input_schema": t.schema_dict()} for t in tools
            ],
            history=self.history_of(turn.conversation_id or ""),
        )

    def _finish_early(
        self, turn: Turn, space: Space | None, mode: str, transport: Transport, emit: EventSink, error: str
    ) -> TurnEnded:
        emit(
            TurnStarted(
                turn.id,
                space.id if space else None,
                mode,
                transport.value,
                (),
                provider=turn.settings.get("provider"),
                model=turn.settings.get("model"),
            )
        )
        self.ws.store.write_turn(turn.id, status=TurnStatus.FAILED, error=error)
        self._note(turn.conversation_id, turn.id, "error", error)
        ended = TurnEnded(turn.id, TurnStatus.FAILED, False, error)
        emit(ended)
        return ended

    def _note(self, conversation_id: str | None, turn_id: str, kind: str, text: str, **meta: Any) -> None:
        if conversation_id:
            self.ws.store.add_message(
                conversation_id, role="system", kind=kind, text=text, meta=meta, turn_id=turn_id
            )

    # -- the step machine -----------------------------------------------------------------------

    async def _drive(self, ctx: _TurnCtx, emit: EventSink) -> TurnEnded:
        store = self.ws.store
        ctx.emit = emit
        calls_this_run = 0
        tokens_at_start = ctx.input_tokens + ctx.output_tokens
        cost_at_start = ctx.cost
        # The operator's per-mode limits, else the mode's defaults; each run gets a fresh allowance.
        max_steps = ctx.settings.max_steps or ctx.profile.max_model_calls
        max_tokens = ctx.settings.max_tokens_per_run or ctx.profile.max_turn_tokens
        try:
            pending = ctx.state.get("pending")
            if pending:
                outcome = await self._process_calls(
                    ctx, pending["uses"], pending["index"], emit, resumed=True
                )
                if outcome == "awaiting":
                    return self._end(ctx, TurnStatus.AWAITING_APPROVAL, emit)
                if outcome == "end_run" and not self._nudge(ctx, emit):
                    return self._end(ctx, TurnStatus.COMPLETED, emit)
            while True:
                if calls_this_run >= max_steps:
                    return self._end(
                        ctx,
                        TurnStatus.INTERRUPTED,
                        emit,
                        f"step limit reached: {calls_this_run} model calls this run "
                        f"(max_steps {max_steps}); resume to continue",
                    )
                used = ctx.input_tokens + ctx.output_tokens - tokens_at_start
                over = ctx.budget_check(used, ctx.cost - cost_at_start) if ctx.budget_check else None
                if over and calls_this_run:
                    # The pipeline's budget ran out: this node stops after its current model call.
                    return self._end(ctx, TurnStatus.INTERRUPTED, emit, over)
                if used >= max_tokens:
                    return self._end(
                        ctx,
                        TurnStatus.INTERRUPTED,
                        emit,
                        f"token limit reached: {used} tokens this run (max_tokens_per_run {max_tokens}); "
                        "resume to continue",
                    )
                response = await self._call_model(ctx, emit)
                calls_this_run += 1
                uses = response.tool_uses
                if not uses:
                    if self._nudge(ctx, emit):
                        continue
                    return self._end(ctx, TurnStatus.COMPLETED, emit)
                outcome = await self._process_calls(ctx, uses, 0, emit)
                if outcome == "awaiting":
                    return self._end(ctx, TurnStatus.AWAITING_APPROVAL, emit)
                if outcome == "end_run":
                    if self._nudge(ctx, emit):
                        continue
                    return self._end(ctx, TurnStatus.COMPLETED, emit)
        except asyncio.CancelledError:
            ctx.cancel_event.set()
            self._end(ctx, TurnStatus.INTERRUPTED, emit, "cancelled by the operator; resume to continue")
            raise
        except ProviderError as exc:
            return self._end(ctx, TurnStatus.FAILED, emit, str(exc))
        except Exception as exc:  # a bug must end the turn visibly, never leave it "running"
            log.exception("turn %s failed", ctx.turn.id)
            return self._end(ctx, TurnStatus.FAILED, emit, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            store.write_turn(ctx.turn.id, cursor=ctx.provider.cursor)

    def _nudge(self, ctx: _TurnCtx, emit: EventSink) -> bool:
        """One reminder when a run with a completion contract ends without its output verb."""
        if not ctx.profile.has_completion_contract or ctx.delivered or ctx.nudged or not ctx.profile.nudge:
            return False
        ctx.nudged = True
        self.ws.store.add_message(
            ctx.conversation_id,
            role="user",
            kind="nudge",
            text=ctx.profile.nudge,
            blocks=[{"type": "text", "text": ctx.profile.nudge}],
            turn_id=ctx.turn.id,
        )
        self.ws.store.write_turn(ctx.turn.id, nudged=True)
        emit(NudgeEvent(ctx.profile.nudge))
        return True

    async def _call_model(self, ctx: _TurnCtx, emit: EventSink) -> ModelResponse:
        store = self.ws.store
        if ctx.history is not None:
            messages, compacted = await history_for_call(
                ctx.history, store, ctx.provider, ctx.settings, ctx.system, ctx.tool_defs, ctx.turn.id
            )
            if compacted is not None:  # the summary call is the turn's cost too
                ctx.input_tokens += compacted.input_tokens
                ctx.output_tokens += compacted.output_tokens
        else:
            messages = model_history(store.messages(ctx.conversation_id))
        request = ModelRequest(
            system=ctx.system, messages=messages, tools=ctx.tool_defs, settings=ctx.settings
        )
        response: ModelResponse | None = None
        streamed: list[str] = []
        try:
            async for item in ctx.provider.stream(request):
                if isinstance(item, TextChunk):
                    streamed.append(item.text)
                    emit(TextDelta(item.text))
                elif isinstance(item, ThinkingChunk):
                    emit(ThinkingDelta(item.text))
                elif isinstance(item, ModelResponse):
                    response = item
                elif isinstance(item, ModelRetry):  # the provider waits, then calls again
                    emit(item)
        except asyncio.CancelledError:
            if streamed:  # keep what the operator already saw
                text = "".join(streamed)
                store.add_message(
                    ctx.conversation_id,
                    role="assistant",
                    kind="assistant",
                    text=text,
                    blocks=[{"type": "text", "text": text}],
                    turn_id=ctx.turn.id,
                )
            raise
        if response is None:
            raise ProviderError("the model stream ended without a response")
        ctx.model_calls += 1
        ctx.input_tokens += response.input_tokens
        ctx.output_tokens += response.output_tokens
        call_cost = cost_usd(
            ctx.settings.model, response.input_tokens, response.output_tokens, ctx.settings.provider
        )
        ctx.cost += call_cost
        emit(UsageEvent(response.input_tokens, response.output_tokens, call_cost))
        text = "".join(b.get("text", "") for b in response.content if b.get("type") == "text")
        blocks = [_clean_block(b) for b in response.content]
        store.add_message(
            ctx.conversation_id,
            role="assistant",
            kind="assistant",
            text=text,
            blocks=blocks,
            turn_id=ctx.turn.id,
        )
        store.write_turn(
            ctx.turn.id,
            model_calls=ctx.model_calls,
            input_tokens=ctx.input_tokens,
            output_tokens=ctx.output_tokens,
            cost_usd=ctx.cost,
            cursor=ctx.provider.cursor,
            **({"state": ctx.state} if ctx.state_dirty else {}),
        )
        ctx.state_dirty = False
        return response

    async def _process_calls(
        self, ctx: _TurnCtx, uses: list[dict[str, Any]], start: int, emit: EventSink, *, resumed: bool = False
    ) -> str:
        """Run the calls of one model response from ``start``; returns "continue", "end_run" or
        "awaiting" (a call waits for a decision; its place is saved for resume)."""
        store = self.ws.store
        end_run = False
        delivered_before = ctx.delivered
        for index in range(start, len(uses)):
            use = uses[index]
            call_id, name, args = use.get("id") or new_id(), use.get("name", ""), use.get("input") or {}
            if resumed and call_id in ctx.answered_calls:
                continue  # its result reached the conversation before the last crash
            settled: ToolOutput | None = None
            approved = False
            status_note: str | None = None
            if resumed and index == start:
                approval = store.approval(ctx.state["pending"]["approval_id"])
                settled = suspension_for(approval.kind).outcome(approval) if approval else missing_outcome()
                approved = settled is None
                if approval is not None and approval.status is ApprovalStatus.REJECTED:
                    status_note = "rejected"
            else:
                emit(ToolCallEvent(call_id, name, args if isinstance(args, dict) else {"_": args}))
            if settled is not None:
                out, end_flag = settled, False
            else:
                result = await self._dispatch(ctx, name, args, approved=approved, call_id=call_id)
                if isinstance(result, _Needs):
                    self._suspend(ctx, result.kind, uses, index, call_id, name, args, emit)
                    return "awaiting"
                out, end_flag = result
            ctx.state["last_tool"] = name
            end_run = end_run or end_flag
            self._record_result(ctx.conversation_id, ctx.turn.id, call_id, name, out, status_note)
            emit(ToolResultEvent(call_id, name, out.is_error, out.content))
        had_pending = ctx.state.pop("pending", None) is not None
        if had_pending or ctx.delivered != delivered_before:
            store.write_turn(ctx.turn.id, state=ctx.state, delivered=ctx.delivered)
        else:
            # Only last_tool moved: it rides on the next turn-row write (the next model call's, or
            # the end's), one write fewer per step. A crash in between forgets only which tool ran
            # last (the report_progress rule), never a delivery or a pending call.
            ctx.state_dirty = True
        return "end_run" if end_run else "continue"

    def _suspend(
        self,
        ctx: _TurnCtx,
        kind: ApprovalKind,
        uses: list[dict[str, Any]],
        index: int,
        call_id: str,
        name: str,
        args: dict[str, Any],
        emit: EventSink,
    ) -> None:
        """The call waits for the operator: its Inbox item opens and its place is saved."""
        approval = suspension_for(kind).open(
            WaitingCall(
                store=self.ws.store,
                space_id=ctx.space.id if ctx.space else None,
                turn_id=ctx.turn.id,
                conversation_id=ctx.conversation_id,
                worktree=ctx.turn.worktree,
                call_id=call_id,
                name=name,
                args=args,
                emit=emit,
            )
        )
        ctx.state["pending"] = {"uses": uses, "index": index, "approval_id": approval.id}
        self.ws.store.write_turn(ctx.turn.id, state=ctx.state)

    async def _dispatch(
        self, ctx: _TurnCtx, name: str, args: Any, *, approved: bool, call_id: str = ""
    ) -> tuple[ToolOutput, bool] | _Needs:
        spec = ctx.surface.get(name)
        if spec is None:
            # Off the surface: invisible, so answered exactly like a tool that does not exist.
            return ToolOutput(f"unknown tool {name!r}", is_error=True), False
        if not isinstance(args, dict):
            return ToolOutput(f"invalid input for {name}: input must be an object", is_error=True), False
        problems = validate(spec.input_schema, args)
        if problems:
            return ToolOutput(f"invalid input for {name}: " + "; ".join(problems), is_error=True), False
        if name == "report_progress" and ctx.state.get("last_tool") == "report_progress":
            return ToolOutput(
                "report_progress refused: it was the previous call too; never call it twice in a row. "
                "Do some work, or end your turn with your answer.",
                is_error=True,
            ), False
        escape = _path_problem(ctx.turn.worktree, name, args)
        if escape is not None:
            # Refused before the gate: the operator is never asked to approve a path that leaves
            # the worktree.
            return ToolOutput(escape, is_error=True), False
        if not approved and needs_approval(spec, ctx.profile, ctx.autonomy):
            return _Needs()
        verdict = guardrail(spec, ctx.profile)
        if isinstance(verdict, Deny):
            return ToolOutput(verdict.reason, is_error=True), False
        try:
            if name in VERBS:
                vctx = VerbContext(
                    ws=self.ws,
                    space=ctx.space,
                    turn_id=ctx.turn.id,
                    conversation_id=ctx.conversation_id,
                    profile=ctx.profile,
                    author=ctx.author,
                    emit=ctx.emit,
                    run_gates=self._run_gates,
                )
                res = await VERBS[name](vctx, args)
                if res.suspend is not None:
                    return _Needs(res.suspend)
                if res.delivered and name == ctx.profile.output_verb:
                    ctx.delivered = True
                return res.output, res.end_run
            tool_ctx = ToolContext(
                worktree=ctx.turn.worktree,
                read_only=ctx.profile.read_only,
                env_allow=self.settings.allowed_env,
                extras={
                    "cancel_event": ctx.cancel_event,
                    "output_file": tool_output_path(self.ws.root, call_id),
                    **({"base": ctx.space.pr_base, "head": "HEAD"} if ctx.space and ctx.space.is_pr else {}),
                },
            )
            fn = PURE_TOOLS.get(name) or extra_tools.EXTRA_TOOLS.get(name)
            if fn is None:
                return ToolOutput(
                    f"tool {name} has no implementation on this transport", is_error=True
                ), False
            extra = (self.ws,) if name in extra_tools.WORKSPACE_TOOLS else ()
            if not (call_id and call_journal.is_effectful(spec)):
                return await run_bounded(name, fn, tool_ctx, args, *extra), False

            async def run_journaled(spool: Path) -> ToolOutput:
                # The command's output goes to the spool as it arrives: after a crash it is what the
                # model is shown of a call that may have run.
                spooled = replace(tool_ctx, extras={**tool_ctx.extras, "output_file": spool})
                try:
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
            )
            return out, False
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True), False
        except WorkspaceError as exc:
            return ToolOutput(str(exc), is_error=True), False

    async def _run_gates(self, space: Space) -> list[AxisResult]:
        results = []
        for gate in space.gates:
            outcome = await asyncio.to_thread(
                run_gate,
                gate.command,
                space.worktree,
                GATE_TIMEOUT_S,
                network=gate.network,
                env_allow=self.settings.allowed_env,
            )
            results.append(AxisResult(gate.name, AxisStatus(outcome.status), outcome.detail))
        return results

    def _end(self, ctx: _TurnCtx, status: TurnStatus, emit: EventSink, error: str | None = None) -> TurnEnded:
        store = self.ws.store
        store.write_turn(
            ctx.turn.id,
            status=status,
            delivered=ctx.delivered,
            error=error,
            state=ctx.state,
            cursor=ctx.provider.cursor,
        )
        if error:
            kind = "error" if status is TurnStatus.FAILED else "note"
            self._note(ctx.conversation_id, ctx.turn.id, kind, error)
        usage = {
            "input_tokens": ctx.input_tokens,
            "output_tokens": ctx.output_tokens,
            "cost_usd": round(ctx.cost, 6),
            "model_calls": ctx.model_calls,
        }
        ended = TurnEnded(ctx.turn.id, status, ctx.delivered, error, usage)
        emit(ended)
        # A one-shot run's scratch worktree goes once nothing can resume the turn.
        if ctx.space is None and status in (TurnStatus.COMPLETED, TurnStatus.FAILED):
            self.ws.remove_scratch(ctx.turn.worktree)
        return ended

    def external_calls(
        self, turn: Turn, space: Space | None, profile: CapabilityProfile, emit: EventSink
    ) -> ExternalCalls:
        """The built-in per-call path for calls that arrive from another transport (Claude
        Code's MCP verbs): the same surface, schema check, gate, guardrail, verbs and delivery."""
        autonomy = space.autonomy if space else Autonomy.ASK
        tools = materialize_surface(profile, autonomy, turn.transport)
        ctx = _TurnCtx(
            turn=turn,
            space=space,
            profile=profile,
            autonomy=autonomy,
            transport=turn.transport,
            surface={t.name: t for t in tools},
            system="",
            settings=ModelSettings.from_json(turn.settings),
            provider=ScriptedProvider([]),  # never called: the other transport owns the model
            conversation_id=turn.conversation_id or "",
            author="agent",
            state=dict(turn.state),
            delivered=turn.delivered,
            emit=emit,
        )
        return ExternalCalls(self, ctx)

    async def _run_external(
        self,
        turn: Turn,
        space: Space | None,
        profile: CapabilityProfile,
        message: str,
        emit: EventSink,
        resume_session: str | None = None,
    ) -> TurnEnded:
        from control_center.harness.transports.claude_code import run_claude_code_turn

        return await run_claude_code_turn(
            self, turn, space, profile, message, emit, resume_session=resume_session
        )

    async def _resume_external(self, turn: Turn, session: str, emit: EventSink) -> TurnEnded:
        """An interrupted Claude Code turn continues Claude's own session (``--resume``)."""
        space = self.ws.store.space(turn.space_id) if turn.space_id else None
        mode = resolved_mode(space) if turn.space_id else turn.mode
        if space is not None and space.mode != turn.mode:
            self.ws.store.write_turn(turn.id, mode=space.mode)
        return await self._run_external(
            turn, space, profile_for(mode), RESUME_MESSAGE, emit, resume_session=session
        )


#: How often a call from another transport looks for the operator's decision (any process may
#: record it: the app, ``control-center approvals decide``).
DECISION_POLL_S = 0.25
#: Who withdraws an approval nobody can act on any more.
SYSTEM_ACTOR = "control-center"
#: Turn-state key: approvals opened over another transport that a call has already used.
_USED_APPROVALS = "used_approvals"


@dataclass
class ExternalCalls:
    """One turn's calls from another transport, run as the built-in harness runs them. A call
    that needs the operator opens the same durable Inbox item and WAITS for the decision (the
    other transport's process waits for the call's result); ``close`` ends every wait."""

    harness: Harness
    ctx: _TurnCtx
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    #: Approvals calls of this run are waiting on.
    waiting: set[str] = field(default_factory=set)

    @property
    def verbs(self) -> list[ToolSpec]:
        """The verbs on this turn's surface (what the turn's MCP server lists)."""
        return [spec for name, spec in self.ctx.surface.items() if name in VERBS]

    @property
    def delivered(self) -> bool:
        return self.ctx.delivered

    def close(self, *, final: bool) -> None:
        """End every wait. ``final`` (the turn cannot be resumed): an item still pending would
        wait for nothing, so it is withdrawn with the reason; otherwise it stays for the resume."""
        self.closed.set()
        if not final:
            return
        store = self.harness.ws.store
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
        result = await self.harness._dispatch(self.ctx, name, args, approved=False, call_id=call_id)
        if isinstance(result, _Needs):
            approval = self._waiting_approval(result.kind, name, args) or suspension_for(result.kind).open(
                WaitingCall(
                    store=self.harness.ws.store,
                    space_id=self.ctx.space.id if self.ctx.space else None,
                    turn_id=self.ctx.turn.id,
                    conversation_id=self.ctx.conversation_id,
                    worktree=self.ctx.turn.worktree,
                    call_id=call_id,
                    name=name,
                    args=args,
                    emit=self.ctx.emit,
                )
            )
            self.waiting.add(approval.id)
            decided = await self._decision(approval.id)
            self.waiting.discard(approval.id)
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
            result = await self.harness._dispatch(self.ctx, name, args, approved=True, call_id=call_id)
            if isinstance(result, _Needs):
                return ToolOutput(f"{name} cannot wait twice in one call", is_error=True)
        out, _end = result
        self.ctx.state["last_tool"] = name
        if self.ctx.delivered:
            self.harness.ws.store.write_turn(self.ctx.turn.id, delivered=True)
        return out

    def _waiting_approval(self, kind: ApprovalKind, name: str, args: dict[str, Any]) -> Any:
        """The same call's Inbox item from before an interruption (pending, or decided and not
        yet used): a resumed session that repeats the call waits on it, never opens a second."""
        used = set(self.ctx.state.get(_USED_APPROVALS) or ())
        for approval in self.harness.ws.store.approvals(kind=kind, turn_id=self.ctx.turn.id):
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
        store = self.harness.ws.store
        while True:
            approval = store.approval(approval_id)
            if approval is None or approval.status.settled:
                return approval
            if self.closed.is_set():
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.closed.wait(), DECISION_POLL_S)

    def _mark_used(self, approval_id: str) -> None:
        used = [*(self.ctx.state.get(_USED_APPROVALS) or ()), approval_id]
        self.ctx.state[_USED_APPROVALS] = used
        self.harness.ws.store.write_turn(self.ctx.turn.id, state=self._turn_state())

    def _turn_state(self) -> dict[str, Any]:
        # The other transport keeps its own keys in the row (its session id, its process):
        # merged, never replaced.
        row = self.harness.ws.store.turn(self.ctx.turn.id)
        return {**(row.state if row else {}), _USED_APPROVALS: self.ctx.state[_USED_APPROVALS]}


def _claude_session(turn: Turn) -> str:
    session = turn.state.get("session_id")
    if turn.status in (TurnStatus.COMPLETED, TurnStatus.FAILED):
        raise HarnessError(f"turn {turn.id} has ended ({turn.status.value}); start a new turn instead")
    if not isinstance(session, str) or not session:
        raise HarnessError(
            f"turn {turn.id} stopped before Claude Code started a session; start a new turn instead"
        )
    return session


#: What a resumed Claude Code session is told (its own transcript holds the rest).
RESUME_MESSAGE = "The previous turn was interrupted. Continue where you left off."


def _clean_block(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if v is not None}


#: Tools whose "path" argument names a file of the worktree.
_PATH_TOOLS = frozenset({"read_file", "list_files", "search_files", "write_file", "edit_file", "delete_file"})


def _path_problem(worktree: Path, name: str, args: dict[str, Any]) -> str | None:
    if name not in _PATH_TOOLS or not isinstance(args.get("path"), str):
        return None
    from control_center.harness.tools.paths import resolve_in_worktree

    try:
        resolve_in_worktree(worktree, args["path"], must_exist=False)
    except ToolError as exc:
        return str(exc)
    return None


def preview_diff(worktree: Path, name: str, args: dict[str, Any]) -> str | None:
    """What a write would change, computed without writing (for the approval's preview)."""
    if name not in ("write_file", "edit_file", "delete_file") or not isinstance(args.get("path"), str):
        return None
    rel = args["path"]
    try:
        from control_center.harness.tools.paths import resolve_in_worktree

        path = resolve_in_worktree(worktree, rel, must_exist=False)
        old = path.read_text(errors="replace") if path.is_file() else ""
    except (ToolError, OSError):
        return None
    if name == "write_file":
        new = str(args.get("content", ""))
    elif name == "edit_file":
        new = old.replace(str(args.get("old", "")), str(args.get("new", "")), 1)
    else:
        new = ""
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
    )
    return "".join(diff) or None
