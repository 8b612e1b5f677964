"""The turn loop. ``Harness`` is every turn's entry (run, resume, compact): it claims the turn,
stores the operator's message, reads the mode from the space's row at the start of every run
and hands the run to the driver of the turn's transport (``DRIVERS``; the seam is
``harness/driver.py``). ``BuiltinDriver`` is the built-in step machine over (call the model, run
the calls, wait for an approval, nudge, end), whose steps return a typed ``NextStep``.

No Qt here: the CLI runs it directly, the GUI on a worker thread. The prompt, tool surface and
model handler are rebuilt from the mode's capability profile at the start of every run."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, assert_never

from control_center.core.approvals import ApprovalStatus
from control_center.core.errors import OperatorError
from control_center.core.events import (
    ModelRetry,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnded,
    TurnStarted,
    TurnStatus,
)
from control_center.core.guarantees import guarantee_for
from control_center.core.mentions import mentioned_paths
from control_center.core.modes import Autonomy, Transport
from control_center.core.profiles import profile_for
from control_center.core.records import MessageRecord, Space, Turn
from control_center.core.surface import build_system_prompt, materialize_surface
from control_center.core.transports import transport_spec
from control_center.harness import call_journal, sandbox
from control_center.harness.attachments import (
    MAX_IMAGES,
    AttachmentError,
    StoredImage,
    image_path,
    resolve_mentions,
    stored_image_block,
    with_image_data,
)
from control_center.harness.calls import (
    GATE_TIMEOUT_S,
    CallPath,
    CallScope,
    Needs,
    preview_diff,
)
from control_center.harness.comment_tracking import after_run
from control_center.harness.context import (
    CompactionDone,
    ConversationHistory,
    compact_by_hand,
    history_for_call,
)
from control_center.harness.driver import (
    BudgetCheck,
    DriverFactory,
    DriverHost,
    TurnDriver,
    TurnRun,
    contract_nudge,
)
from control_center.harness.errors import HarnessError
from control_center.harness.history import model_history
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
from control_center.harness.providers.registry import provider_spec
from control_center.harness.recorder import EventSink, TurnRecorder, Usage
from control_center.harness.review_revisions import human_comments_prompt, previous_findings_prompt
from control_center.harness.rewind import checkpoint_after_turn, checkpoint_before_turn, checkpoint_on_resume
from control_center.harness.settings import AppSettings
from control_center.harness.suspensions import missing_outcome, suspension_for
from control_center.harness.tools.base import ToolOutput
from control_center.harness.turn_claim import claim_for_resume, free_dead_turns, owner_state, refuse_busy
from control_center.store.store import SpaceBusy, new_id
from control_center.workspace import Workspace, resolved_mode

__all__ = [
    "GATE_TIMEOUT_S",
    "SCRIPT_META_PREFIX",
    "BuiltinDriver",
    "Harness",
    "HarnessError",
    "RunRequest",
    "preview_diff",
]

log = logging.getLogger(__name__)

FALLBACK_SCRIPT: list[list[dict[str, Any]]] = [
    [
        {
            "type": "text",
            "text": "This is Control Center's built-in scripted model: no API key is set and this space has "
            "no script. Add a key in Settings (or ANTHROPIC_API_KEY) to talk to a real model.",
        }
    ]
]
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
    #: Where ``message`` comes from when the operator did not write it (a plan step's task): the
    #: conversation shows it as that, not as the operator's bubble.
    prompt_from: str | None = None
    #: A pipeline's budget: called before each model call after the first of a run with the
    #: tokens and USD this run has used; a reason ends the turn ``interrupted`` (resumable).
    budget_check: BudgetCheck | None = None
    #: Images pasted into the message (``StoredImage.to_json()``; harness/attachments.py).
    images: tuple[dict[str, Any], ...] = ()
    #: A model for this turn only (a custom command's ``model``); None: the mode's model.
    model: str | None = None


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

    @property
    def calls(self) -> CallPath:
        """The per-call path every transport's calls run on."""
        return CallPath(
            self.ws,
            self.settings.allowed_env,
            agent_network=self.settings.agent_network,
            agent_writable=self.settings.agent_writable,
            other_workspaces=self.settings.workspace_roots(),
        )

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
        if req.model:
            settings = replace(settings, model=req.model)
        script = req.script
        if settings.provider == "scripted" and script is None:
            script = self._space_script(space)
        driver = DRIVERS[transport](self, settings, script)
        driver.check_start()  # a run that cannot start stores nothing: before the turn row exists
        images = self._check_images(req, driver, settings)
        if space is not None:
            worktree, conversation_id = space.worktree, req.conversation_id or space.conversation_id
        else:
            worktree = self.ws.scratch_worktree(new_id())
            conversation_id = req.conversation_id or store.create_conversation(space_id=None)
        # git check-ignore per mention: off the loop (most messages mention nothing)
        attached = (
            await asyncio.to_thread(_attachment_blocks, req.message, Path(worktree), images)
            if images or mentioned_paths(req.message)
            else []
        )
        # The message rides in the turn row too: a crash between the row and the message row
        # must not lose what the operator asked (resume restores it).
        recorded = {
            **settings.to_json(),
            "agent": req.author,
            "script": script,
            "message": req.message,
            "attached": attached,
        }
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
        recorder = TurnRecorder(self.ws, turn, emit, has_space=space is not None)
        if space is not None:
            store.touch_space(space.id)
            await self._checkpoint(space, turn, recorder)
        recorder.user_message(req.message, attached, source=req.prompt_from)
        run = TurnRun(
            store.turn(turn.id) or turn, space, profile, recorder, req.message, False, req.budget_check
        )
        return await self._drive_then_mark(driver, run, space)

    async def resume(
        self, turn_id: str, emit: EventSink | None = None, *, budget_check: BudgetCheck | None = None
    ) -> TurnEnded:
        emit = emit or (lambda _e: None)
        store = self.ws.store
        turn = store.turn(turn_id)
        if turn is None:
            raise HarnessError(f"no turn {turn_id!r} in this workspace")
        driver = DRIVERS[turn.transport](
            self, ModelSettings.from_json(turn.settings), turn.settings.get("script")
        )
        driver.check_resume(turn)  # refusals write nothing
        turn = claim_for_resume(store, turn)  # nothing is written before the claim succeeds
        # The mode is re-read at the start of the resumed run, like any turn.
        space = store.space(turn.space_id) if turn.space_id else None
        mode = resolved_mode(space) if turn.space_id else turn.mode
        if space is not None and space.mode != turn.mode:
            store.write_turn(turn.id, mode=space.mode)
        turn = store.turn(turn.id) or turn
        recorder = TurnRecorder(self.ws, turn, emit, has_space=space is not None)
        if space is not None:
            await self._checkpoint(space, turn, recorder, resumed=True)
        run = TurnRun(turn, space, profile_for(mode), recorder, "", True, budget_check)
        return await self._drive_then_mark(driver, run, space)

    async def _checkpoint(
        self, space: Space, turn: Turn, recorder: TurnRecorder, *, resumed: bool = False
    ) -> None:
        """The worktree before the turn (harness/checkpoints.py), so the turn can be rewound, or
        before a resumed run of it (what it changes next is still its own). A checkpoint that
        cannot be taken does not stop the turn; the conversation says so."""
        take = checkpoint_on_resume if resumed else checkpoint_before_turn
        try:
            await asyncio.to_thread(take, self.ws, space, turn)
        except OperatorError as exc:
            what = "its changes from here may show as nobody's" if resumed else "it cannot be rewound"
            recorder.note("note", f"no checkpoint before this run of the turn ({what}): {exc}")

    async def _drive_then_mark(self, driver: TurnDriver, run: TurnRun, space: Space | None) -> TurnEnded:
        """Drive the turn, then snapshot where its changes end: edits made between turns (by
        hand) are then nobody's turn in the changes view."""
        try:
            return await driver.drive(run)
        finally:
            if space is not None:
                try:
                    end = await asyncio.to_thread(checkpoint_after_turn, self.ws, space, run.turn)
                except OperatorError:
                    end = None  # the attribution is coarser without it; the turn's outcome stands
                if end is not None:
                    with contextlib.suppress(OperatorError):  # comments then wait for a later run
                        # The operator's comments on lines this run changed are resolved by it.
                        await asyncio.to_thread(after_run, self.ws, space, run.turn.id, end.commit)

    def forget_history(self, conversation_id: str) -> None:
        """Drop the cached model view of a conversation (a rewind changed what it holds)."""
        self._histories.pop(conversation_id, None)

    # -- set-up ---------------------------------------------------------------------------------

    def _check_images(self, req: RunRequest, driver: Any, settings: ModelSettings) -> list[StoredImage]:
        """The message's images, or a one-line refusal (before anything is stored) when this
        transport and provider cannot send them or one of them is not in the workspace."""
        if not req.images:
            return []
        if not driver.takes_images:
            label = provider_spec(settings.provider).label
            raise HarnessError(
                f"this space's model ({label}) does not take images: remove the image "
                "or pick a provider that does (Anthropic, OpenAI-compatible) on the built-in harness"
            )
        if len(req.images) > MAX_IMAGES:
            raise HarnessError(f"a message carries at most {MAX_IMAGES} images")
        try:
            images = [StoredImage.from_json(dict(i)) for i in req.images]
        except AttachmentError as exc:
            raise HarnessError(str(exc)) from None
        if any(not image_path(self.ws.root, i).is_file() for i in images):
            raise HarnessError("an attached image is not in this workspace any more; paste it again")
        return images

    def _settings_for(self, mode: Any, provider: str | None) -> ModelSettings:
        # Resolved from the mode's own settings at the start of each turn (SPEC §8).
        return self.settings.resolve(mode, provider)

    def _space_script(self, space: Space | None) -> list[Any]:
        if space is not None:
            path = self.ws.store.get_meta(SCRIPT_META_PREFIX + space.id)
            if path:
                from control_center.harness.providers.scripted import load_script

                p = Path(path)
                return load_script(p if p.is_absolute() else self.ws.root / p)
        return FALLBACK_SCRIPT


def _attachment_blocks(message: str, worktree: Path, images: list[StoredImage]) -> list[dict[str, Any]]:
    """The blocks the operator's message carries after its text: the mentioned files (harness/
    attachments.py decides which and how much) and the images."""
    blocks = [m.block() for m in resolve_mentions(message, worktree)] if worktree.is_dir() else []
    return [*blocks, *(stored_image_block(i) for i in images)]


# -- the built-in driver: a step machine over typed steps ----------------------------------------


@dataclass(frozen=True)
class CallModel:
    """Call the model (after the run's limits allow it)."""


@dataclass(frozen=True)
class RunCalls:
    """Run the calls of one model response from ``start`` (``resumed``: the first of them waited
    for the operator, whose decision is now its outcome)."""

    uses: list[dict[str, Any]]
    start: int = 0
    resumed: bool = False


@dataclass(frozen=True)
class CheckContract:
    """The run would end: nudge once when the mode's output verb is missing, else complete."""


@dataclass(frozen=True)
class End:
    """The turn stops: completed, waiting for the operator, interrupted or failed."""

    status: TurnStatus
    error: str | None = None


NextStep = CallModel | RunCalls | CheckContract | End


@dataclass(kw_only=True)
class _TurnCtx(CallScope):
    """One run of a built-in turn: the calls' scope plus the model side."""

    transport: Transport
    system: str
    settings: ModelSettings
    provider: ModelProvider
    recorder: TurnRecorder
    nudged: bool = False
    usage: Usage = field(default_factory=Usage)
    #: The surface as the model request carries it, built once per run (schemas are frozen).
    tool_defs: list[dict[str, Any]] = field(default_factory=list)
    history: ConversationHistory | None = None
    #: On resume: calls whose result is already in the conversation (never answered twice).
    answered_calls: frozenset[str] = frozenset()
    #: The run being resumed had stored its final answer (a crash came before the turn ended).
    ended_on_answer: bool = False
    #: ``state`` changed in a way that may wait for the next turn-row write (see _run_calls).
    state_dirty: bool = False
    budget_check: BudgetCheck | None = None
    #: This run's allowance (the operator's per-mode limits, else the mode's defaults).
    calls_this_run: int = 0
    tokens_at_start: int = 0
    cost_at_start: float = 0.0


class BuiltinDriver:
    """The built-in harness: our model provider, our tools, our loop."""

    def __init__(self, host: DriverHost, settings: ModelSettings, script: list[Any] | None) -> None:
        self.host = host
        self.ws = host.ws
        self.settings = settings
        self.script = script
        self.provider: ModelProvider | None = None
        self.calls = host.calls

    @property
    def takes_images(self) -> bool:
        return provider_spec(self.settings.provider).images

    def check_start(self) -> None:
        try:
            self.provider = self.host.provider_factory(self.settings, script=self.script, start=0)
        except ProviderError as exc:
            raise HarnessError(str(exc)) from None

    def check_resume(self, turn: Turn) -> None:
        return None

    async def drive(self, run: TurnRun) -> TurnEnded:
        answered: frozenset[str] = frozenset()
        ended_on_answer = False
        if run.resumed:
            self._restore_lost_message(run)
            answered = self._settle_unfinished_calls(run)
            rows = self.ws.store.turn_messages(run.turn.id)
            run = self._recover_dangling_calls(run, answered, rows)
            ended_on_answer = not run.turn.state.get("pending") and _ended_on_answer(rows)
        try:
            ctx = self._context(run)
        except ProviderError as exc:
            return self._finish_early(run, str(exc))
        ctx.budget_check = run.budget_check
        ctx.answered_calls = answered
        ctx.ended_on_answer = ended_on_answer
        space = run.space
        run.recorder.started(
            TurnStarted(
                run.turn.id,
                space.id if space else None,
                run.profile.mode.value,
                run.turn.transport.value,
                tuple(ctx.surface),
                resumed=run.resumed,
                provider=self.settings.provider,
                model=self.settings.model,
                guarantee=guarantee_for(
                    run.profile, run.turn.transport, sandbox.sandbox_available()
                ).to_json(),
            )
        )
        if not run.resumed:
            note = unknown_price_note(self.settings.provider, self.settings.model)
            if note:
                run.recorder.note("note", note)
        return await self._drive(ctx)

    def _restore_lost_message(self, run: TurnRun) -> None:
        """The operator's message, when the run that created the turn died before storing it."""
        turn = run.turn
        message = turn.settings.get("message")
        if not turn.conversation_id or not isinstance(message, str):
            return
        if any(m.kind == "user" for m in self.ws.store.turn_messages(turn.id)):
            return
        attached = turn.settings.get("attached")
        run.recorder.user_message(message, attached if isinstance(attached, list) else [])

    def _settle_unfinished_calls(self, run: TurnRun) -> frozenset[str]:
        """Journaled calls whose result never reached the conversation get one now: the recorded
        result, or "may have run, outcome unknown" — never a second run (call_journal). Returns
        the ids of the calls of this turn whose result is in the conversation (a crash after the
        result and before the turn row moved on must not answer them twice)."""
        store = self.ws.store
        turn = run.turn
        pending = turn.state.get("pending") or {}
        if not turn.conversation_id or not (pending or store.call_records(turn.id)):
            return frozenset()
        waiting = {u.get("id") for u in (pending.get("uses") or [])[pending.get("index", 0) :]}
        answered = {
            str(m.meta.get("call_id")) for m in store.turn_messages(turn.id) if m.kind == "tool_result"
        }
        for record, out in call_journal.settle_unfinished(store, turn.id, answered | waiting):
            run.recorder.tool_result(record.call_id, record.name, out)
            answered.add(record.call_id)
        return frozenset(answered)

    def _recover_dangling_calls(
        self, run: TurnRun, answered: frozenset[str], rows: list[MessageRecord]
    ) -> TurnRun:
        """A crash between storing the model's tool calls and saving their place (the turn's
        ``pending`` state) leaves calls without a result. They become the pending calls again,
        bound to the Inbox item already opened for the first one if there is one: the model never
        sees a call without its result, and no call gets a second approval."""
        store = self.ws.store
        turn = run.turn
        if turn.state.get("pending") or not turn.conversation_id:
            return run
        last = next((i for i in range(len(rows) - 1, -1, -1) if rows[i].kind == "assistant"), None)
        if last is None:
            return run
        uses = [b for b in rows[last].blocks if b.get("type") == "tool_use"]
        done = answered | {str(m.meta.get("call_id")) for m in rows[last:] if m.kind == "tool_result"}
        open_at = next((i for i, u in enumerate(uses) if u.get("id") not in done), None)
        if open_at is None:
            return run
        call_id = uses[open_at].get("id")
        opened = next(
            (a for a in store.approvals(turn_id=turn.id) if a.payload.get("call_id") == call_id), None
        )
        pending = {"uses": uses, "index": open_at, "approval_id": opened.id if opened else None}
        run.recorder.progress(state={**turn.state, "pending": pending})
        return replace(run, turn=store.turn(turn.id) or turn)

    def _context(self, run: TurnRun) -> _TurnCtx:
        turn, space, profile = run.turn, run.space, run.profile
        autonomy = space.autonomy if space else Autonomy.ASK
        transport = turn.transport
        tools = materialize_surface(profile, autonomy, transport)
        system = build_system_prompt(profile, tools, autonomy, transport)
        if space is not None and space.is_pr:
            system += human_comments_prompt(self.ws.store.review(space.id))
            system += previous_findings_prompt(self.ws, space.id)
        provider = self.provider or self.host.provider_factory(
            self.settings, script=self.script, start=turn.cursor
        )
        usage = Usage.of(turn)
        return _TurnCtx(
            turn=turn,
            space=space,
            profile=profile,
            autonomy=autonomy,
            transport=transport,
            surface={t.name: t for t in tools},
            system=system,
            settings=self.settings,
            provider=provider,
            recorder=run.recorder,
            conversation_id=turn.conversation_id or "",
            author=str(turn.settings.get("agent", "agent")),
            state=dict(turn.state),
            delivered=turn.delivered,
            emit=run.recorder.emit,
            nudged=turn.nudged,
            usage=usage,
            tool_defs=[
                {"name": t.name, "description": t.description, "input_schema": t.schema_dict()} for t in tools
            ],
            history=self.host.history_of(turn.conversation_id or ""),
            tokens_at_start=usage.input_tokens + usage.output_tokens,
            cost_at_start=usage.cost_usd,
        )

    def _finish_early(self, run: TurnRun, error: str) -> TurnEnded:
        turn = run.turn
        run.recorder.started(
            TurnStarted(
                turn.id,
                run.space.id if run.space else None,
                run.profile.mode.value,
                turn.transport.value,
                (),
                provider=turn.settings.get("provider"),
                model=turn.settings.get("model"),
            )
        )
        return run.recorder.end(TurnStatus.FAILED, delivered=False, error=error)

    # -- the step machine -----------------------------------------------------------------------

    async def _drive(self, ctx: _TurnCtx) -> TurnEnded:
        pending = ctx.state.get("pending")
        waiting = self.ws.store.approval(pending.get("approval_id")) if pending else None
        step: NextStep
        if waiting is not None and waiting.status is ApprovalStatus.PENDING:
            # Still undecided (a crash came before the turn said it waits): it waits again.
            step = End(TurnStatus.AWAITING_APPROVAL)
        elif pending:
            step = RunCalls(pending["uses"], pending["index"], resumed=True)
        elif ctx.ended_on_answer:
            # The model had given its final answer when the process died: the run ends as it
            # would have, instead of asking the model to go on past its own answer.
            step = CheckContract()
        else:
            step = CallModel()
        try:
            while True:
                match step:
                    case CallModel():
                        step = await self._call_model_step(ctx)
                    case RunCalls(uses=uses, start=start, resumed=resumed):
                        step = await self._run_calls(ctx, uses, start, resumed=resumed)
                    case CheckContract():
                        step = self._check_contract(ctx)
                    case End(status=status, error=error):
                        return self._end(ctx, status, error)
                    case _:
                        assert_never(step)
        except asyncio.CancelledError:
            ctx.cancel_event.set()
            self._end(ctx, TurnStatus.INTERRUPTED, "cancelled by the operator; resume to continue")
            raise
        except (ProviderError, OperatorError) as exc:
            # A provider refusal, or the store saying no (a full disk): one line, no traceback.
            return self._end(ctx, TurnStatus.FAILED, str(exc))
        except Exception as exc:  # a bug must end the turn visibly, never leave it "running"
            log.exception("turn %s failed", ctx.turn.id)
            return self._end(ctx, TurnStatus.FAILED, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            ctx.recorder.progress(cursor=ctx.provider.cursor)

    def _check_contract(self, ctx: _TurnCtx) -> NextStep:
        """One reminder when a run with a completion contract ends without its output verb."""
        nudge = contract_nudge(ctx.profile, delivered=ctx.delivered, nudged=ctx.nudged)
        if nudge is None:
            return End(TurnStatus.COMPLETED)
        ctx.nudged = True
        ctx.recorder.nudge(nudge)
        return CallModel()

    def _limit_reached(self, ctx: _TurnCtx) -> End | None:
        max_steps = ctx.settings.max_steps or ctx.profile.max_model_calls
        max_tokens = ctx.settings.max_tokens_per_run or ctx.profile.max_turn_tokens
        if ctx.calls_this_run >= max_steps:
            return End(
                TurnStatus.INTERRUPTED,
                f"step limit reached: {ctx.calls_this_run} model calls this run "
                f"(max_steps {max_steps}); resume to continue",
            )
        used = ctx.usage.input_tokens + ctx.usage.output_tokens - ctx.tokens_at_start
        over = ctx.budget_check(used, ctx.usage.cost_usd - ctx.cost_at_start) if ctx.budget_check else None
        if over and ctx.calls_this_run:
            # The pipeline's budget ran out: this node stops after its current model call.
            return End(TurnStatus.INTERRUPTED, over)
        if used >= max_tokens:
            return End(
                TurnStatus.INTERRUPTED,
                f"token limit reached: {used} tokens this run (max_tokens_per_run {max_tokens}); "
                "resume to continue",
            )
        return None

    async def _call_model_step(self, ctx: _TurnCtx) -> NextStep:
        limit = self._limit_reached(ctx)
        if limit is not None:
            return limit
        response = await self._call_model(ctx)
        ctx.calls_this_run += 1
        return RunCalls(response.tool_uses) if response.tool_uses else CheckContract()

    async def _call_model(self, ctx: _TurnCtx) -> ModelResponse:
        store = self.ws.store
        emit = ctx.emit
        if ctx.history is not None:
            messages, compacted = await history_for_call(
                ctx.history, store, ctx.provider, ctx.settings, ctx.system, ctx.tool_defs, ctx.turn.id
            )
            if compacted is not None:  # the summary call is the turn's cost too
                ctx.usage.add(0, compacted.input_tokens, compacted.output_tokens, 0.0)
        else:
            messages = model_history(store.messages(ctx.conversation_id))
        request = ModelRequest(
            system=ctx.system,
            messages=with_image_data(messages, self.ws.root)
            if ctx.history is None or ctx.history.has_images
            else messages,
            tools=ctx.tool_defs,
            settings=ctx.settings,
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
                ctx.recorder.assistant(text, [{"type": "text", "text": text}], partial=True)
            raise
        if response is None:
            raise ProviderError("the model stream ended without a response")
        call_cost = cost_usd(
            ctx.settings.model, response.input_tokens, response.output_tokens, ctx.settings.provider
        )
        step = Usage(1, response.input_tokens, response.output_tokens, call_cost)
        ctx.usage.add(step.model_calls, step.input_tokens, step.output_tokens, step.cost_usd)
        text = "".join(b.get("text", "") for b in response.content if b.get("type") == "text")
        uses = response.tool_uses
        # The reply rides on its first result's write when no call writes before its result.
        quiet = bool(uses) and not any(self.calls.writes_before_result(ctx, u.get("name", "")) for u in uses)
        ctx.recorder.model_reply(
            text,
            [_clean_block(b) for b in response.content],
            ctx.usage,
            step,
            hold=quiet,
            cursor=ctx.provider.cursor,
            **({"state": ctx.state} if ctx.state_dirty else {}),
        )
        ctx.state_dirty = False
        return response

    async def _run_calls(
        self, ctx: _TurnCtx, uses: list[dict[str, Any]], start: int, *, resumed: bool = False
    ) -> NextStep:
        """Run the calls of one model response from ``start``: the model goes on, the run would
        end (a call ended it), or a call waits for a decision (its place is saved for resume)."""
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
            approval_id = ctx.state["pending"].get("approval_id") if resumed else None
            if resumed and index == start and approval_id:
                approval = store.approval(approval_id)
                settled = suspension_for(approval.kind).outcome(approval) if approval else missing_outcome()
                approved = settled is None
                if approval is not None and approval.status is ApprovalStatus.REJECTED:
                    status_note = "withdrawn" if approval.withdrawn else "rejected"
                elif approval is not None and approval.status is ApprovalStatus.EXPIRED:
                    status_note = "expired"
            else:
                ctx.emit(ToolCallEvent(call_id, name, args if isinstance(args, dict) else {"_": args}))
            if settled is not None:
                out, end_flag = settled, False
            else:
                result = await self.calls.dispatch(
                    ctx, name, args, approved=approved, call_id=call_id, approval_id=approval_id
                )
                if isinstance(result, Needs):
                    self._suspend(ctx, result, uses, index, call_id, name, args)
                    return End(TurnStatus.AWAITING_APPROVAL)
                out, end_flag = result
            ctx.state["last_tool"] = name
            end_run = end_run or end_flag
            ctx.recorder.tool_result(call_id, name, out, status_note)
            ctx.emit(ToolResultEvent(call_id, name, out.is_error, out.content))
        had_pending = ctx.state.pop("pending", None) is not None
        if had_pending or ctx.delivered != delivered_before:
            ctx.recorder.progress(state=ctx.state, delivered=ctx.delivered)
        else:
            # Only last_tool moved: it rides on the next turn-row write (the next model call's, or
            # the end's), one write fewer per step. A crash in between forgets only which tool ran
            # last (the report_progress rule), never a delivery or a pending call.
            ctx.state_dirty = True
        return CheckContract() if end_run else CallModel()

    def _suspend(
        self,
        ctx: _TurnCtx,
        needs: Needs,
        uses: list[dict[str, Any]],
        index: int,
        call_id: str,
        name: str,
        args: dict[str, Any],
    ) -> None:
        """The call waits for the operator: its Inbox item opens and its place is saved."""
        approval = self.calls.open_wait(ctx, needs, call_id, name, args)
        ctx.state["pending"] = {"uses": uses, "index": index, "approval_id": approval.id}
        ctx.recorder.progress(state=ctx.state)

    def _end(self, ctx: _TurnCtx, status: TurnStatus, error: str | None = None) -> TurnEnded:
        return ctx.recorder.end(
            status,
            delivered=ctx.delivered,
            usage=ctx.usage,
            error=error,
            state=ctx.state,
            cursor=ctx.provider.cursor,
        )


def _ended_on_answer(rows: list[MessageRecord]) -> bool:
    """Whether a turn's last model-facing message is a complete reply with no tool call."""
    last = next((m for m in reversed(rows) if m.role in ("user", "assistant")), None)
    return (
        last is not None
        and last.kind == "assistant"
        and not last.meta.get("partial")
        and not any(b.get("type") == "tool_use" for b in last.blocks)
    )


def _clean_block(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if v is not None}


class _Drivers(dict[Transport, DriverFactory]):
    """The driver of each transport, imported on first use from its declaration
    (``core.transports``: ``driver = "module:Class"``); tests may set a row."""

    def __missing__(self, transport: Transport) -> DriverFactory:
        module, _, name = transport_spec(transport).driver.partition(":")
        factory: DriverFactory = getattr(importlib.import_module(module), name)
        self[transport] = factory
        return factory


#: The driver of each transport: a new transport is its declaration and its module.
DRIVERS = _Drivers()
