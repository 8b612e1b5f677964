"""The workspace runtime: one worker thread with its own asyncio loop that runs every turn,
decision, pipeline and disk-heavy load for the desktop app. Qt-free: the UI submits requests and
receives results through listener callbacks (called on the worker thread), which the Qt bridge
turns into signals.

Every public method is safe to call from any thread and never blocks on work: it returns a
``concurrent.futures.Future``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from control_center.core.approvals import (
    Approval,
    ApprovalCounts,
    ApprovalKind,
    ApprovalQuery,
    ApprovalStatus,
    Decision,
)
from control_center.core.errors import OperatorError
from control_center.core.events import (
    ApprovalRequested,
    QuestionAsked,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    TurnStatus,
)
from control_center.core.grants import GrantRule
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.op_changes import EVERY, Changes, Done, OperationFailed, keys
from control_center.core.records import Presence, Space, Turn
from control_center.core.space_state import SpaceState, TurnSnapshot, fold_space_state
from control_center.core.transcript import TranscriptItem, items_from_rows
from control_center.harness.settings import AppSettings, operator_identity
from control_center.store.store import new_id, now_iso
from control_center.workspace import Workspace, WorkspaceError

if TYPE_CHECKING:
    from control_center.harness.loop import Harness
    from control_center.pipeline.decisions import DecisionOutcome
    from control_center.store.changes import ChangeBatch
    from control_center.workers import TurnExecution

# The harness, decisions and pipeline modules load on the worker thread at first use, so the
# first window paints without them.

log = logging.getLogger(__name__)

#: How many of a conversation's newest messages a space opens with.
TRANSCRIPT_PAGE = 400
#: Mode changes run one at a time (rapid Shift+Tab): each rewrites the one note of the run.
_MODE_CHANGES = threading.Lock()
#: How long Stop waits for a cancelled turn to record its own end before it withdraws what the
#: turn waited on.
STOP_WAIT_S = 10.0


@dataclass(frozen=True)
class TurnNotStarted:
    """A turn that never began (no Claude Code CLI, a turn already running there, the workspace
    refused it): why, in one line. Nothing of it was stored, so the caller must say so."""

    reason: str


@dataclass(frozen=True)
class RuleShown:
    """A grant rule as the Rules view shows it."""

    rule: GrantRule
    uses: int
    space_name: str
    status: str


#: How often the app looks for approvals past their time-out.
EXPIRY_SWEEP_S = 2.0


class RuntimeListener(Protocol):
    """What the runtime tells (on its worker thread): the live stream of a turn, and one
    :class:`Changes` value for everything else (spaces, turns, approvals, conversations,
    pipelines, rules, presence, a failure)."""

    def turn_event(self, space_id: str | None, event: TurnEvent) -> None: ...
    def turn_finished(self, space_id: str | None, ended: TurnEnded) -> None: ...
    def changed(self, changes: Changes) -> None: ...


@dataclass(frozen=True)
class PlanVersion:
    id: str
    version: int
    graph: Any  # PlanGraph
    status: str
    approval_id: str | None
    approval_status: str | None
    content_hash: str
    #: The operator's comments on its nodes (core.plan_review.PlanComment), oldest first.
    comments: tuple[Any, ...] = ()
    #: Node keys approved so far (a subset approval leaves the others waiting).
    approved_nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeRun:
    """The agent turn that ran (or runs) one plan node: what Plan Studio shows beside the node."""

    turn_id: str
    space_id: str | None
    mode: Mode
    status: str
    started_at: str
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class NodeActual:
    """What a plan node's run actually took (all its turns), beside its forecast."""

    tokens: int = 0
    usd: float = 0.0
    seconds: float | None = None
    #: The latest result of each acceptance check: {"command", "passed", "verdict", ...}.
    checks: tuple[dict[str, Any], ...] = ()
    fix_turns: int = 0
    #: Files its merge into the plan's branch conflicts in (a parallel plan).
    conflicts: tuple[str, ...] = ()
    #: The worktree's space it ran in (a parallel plan's node), else None.
    space_id: str | None = None


def _node_actuals(spec: dict[str, Any]) -> dict[str, NodeActual]:
    from control_center.pipeline.runner import RUN_KEY

    run: dict[str, Any] = spec.get(RUN_KEY) or {}
    keys = {str(n.get("key")) for n in spec.get("nodes") or [] if isinstance(n, dict)}
    out: dict[str, NodeActual] = {}
    for key in keys:
        used = (run.get("spend") or {}).get(key) or {}
        seconds = ((run.get("timing") or {}).get(key) or {}).get("seconds")
        checks = (run.get("check_results") or {}).get(key) or []
        fixes = max(
            int((run.get("fix_turns") or {}).get(key, 0)), int((run.get("fix_turns_used") or {}).get(key, 0))
        )
        if not used and seconds is None and not checks:
            continue
        out[key] = NodeActual(
            int(used.get("tokens", 0)),
            float(used.get("usd", 0.0)),
            float(seconds) if isinstance(seconds, int | float) else None,
            tuple(c for c in checks if isinstance(c, dict)),
            fixes,
            tuple(str(f) for f in (run.get("conflicts") or {}).get(key) or ()),
            (run.get("node_spaces") or {}).get(key),
        )
    return out


@dataclass(frozen=True)
class SideData:
    space_id: str
    plans: tuple[PlanVersion, ...]
    #: plan id -> node key -> status, for plans that run as a pipeline
    node_status: dict[str, dict[str, str]]
    pipeline_of: dict[str, str]
    review: Any  # ReviewSnapshot | None
    #: file -> the PR's diff of that file, for every file a finding anchors to (read off the GUI
    #: thread so selecting a finding never waits on git)
    pr_diffs: dict[str, str] = field(default_factory=dict)
    #: plan id -> node key -> the turn that ran that node (nodes that have not run are absent)
    node_runs: dict[str, dict[str, NodeRun]] = field(default_factory=dict)
    #: Every pipeline the space started (PipelineView values), oldest first, and each one's
    #: budget use including what its running node has spent so far.
    pipelines: tuple[Any, ...] = ()
    budget_use: dict[str, Any] = field(default_factory=dict)
    #: plan id -> its forecast (PlanForecast): the one made at approval once it runs, else the
    #: one its approval shows; and plan id -> node key -> what the node actually took.
    forecasts: dict[str, Any] = field(default_factory=dict)
    actuals: dict[str, dict[str, NodeActual]] = field(default_factory=dict)
    #: the whole pull request's diff (the review panel's Whole PR view, where the operator adds
    #: findings of their own)
    pr_diff_full: str = ""
    #: plan id -> node key -> the pipeline running that node (a plan approved in subsets has
    #: several); Retry of a node goes to its own pipeline.
    node_pipeline: dict[str, dict[str, str]] = field(default_factory=dict)
    #: pipeline id -> its steps (pipeline.service.StepView) for the Pipelines tab's live view
    pipeline_steps: dict[str, tuple[Any, ...]] = field(default_factory=dict)


def _node_runs(store: Any, spec: dict[str, Any]) -> dict[str, NodeRun]:
    """Node key -> its turn, from the run record the pipeline runner keeps in its spec."""
    from control_center.pipeline.runner import RUN_KEY

    turns = (spec.get(RUN_KEY) or {}).get("node_turns") or {}
    runs: dict[str, NodeRun] = {}
    for key, turn_id in turns.items():
        turn = store.turn(str(turn_id))
        if turn is not None:
            runs[str(key)] = NodeRun(
                turn.id,
                turn.space_id,
                turn.mode,
                turn.status.value,
                turn.created_at,
                turn.input_tokens + turn.output_tokens,
                turn.cost_usd,
            )
    return runs


@dataclass(frozen=True)
class TranscriptPage:
    space_id: str
    items: list[TranscriptItem]
    #: Whether older messages exist beyond this page.
    truncated: bool
    #: The seq of the page's oldest message: the key of the next older page.
    oldest_seq: int | None = None
    #: An older page (to prepend), not the newest one.
    older: bool = False
    #: The seq of the page's newest message: a tail read asks for what came after it.
    newest_seq: int | None = None


class WorkspaceRuntime:
    def __init__(self, ws: Workspace, settings: AppSettings | None = None) -> None:
        self.ws = ws
        self.settings = settings or AppSettings.load()
        self.listeners: list[RuntimeListener] = []
        self._harness: Harness | None = None
        self._execution: TurnExecution | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="control-center-harness", daemon=True)
        self._turn_tasks: dict[str, asyncio.Task[Any]] = {}  # space id (or "") -> running turn task
        self._pipeline_tasks: dict[str, asyncio.Task[Any]] = {}
        self._pipeline_space: dict[str, str | None] = {}
        #: Merged node spaces the operator opened anyway (a step's "Conversation"): listed again.
        self.revealed_spaces: set[str] = set()
        from control_center.pipeline.service import PipelineIndex

        #: Which runs work in which spaces, kept across reads (the Pipelines tab, the space list).
        self.pipeline_index = PipelineIndex()
        self._closed = False
        #: The Inbox's reads (pages, counts, one approval): one kept thread, called directly. A
        #: read through the loop (``_call``) hops GUI -> loop -> pool -> loop -> GUI; here it is
        #: GUI -> reader -> GUI, and reads are answered in the order asked (a page before the
        #: counts asked after it). Made on the first read.
        self._inbox_reader: concurrent.futures.ThreadPoolExecutor | None = None
        self._inbox_reader_lock = threading.Lock()
        #: Team mode (a PostgreSQL workspace): other operators' changes arrive live, and this
        #: app says what it shows (presence).
        self.team = ws.store.dialect.name == "postgresql"
        #: Opened read-only: the operator browses; nothing is written (the store refuses writes,
        #: and what this runtime would write on its own — presence, "last active" — is skipped).
        self.read_only = ws.read_only
        self.viewer_id = new_id()
        self.operator = operator_identity(self.settings)
        self._shown: tuple[str | None, str | None] = (None, None)
        self._others: list[Presence] = []
        #: Approvals already announced as about to expire (one notification each).
        self._warned: set[str] = set()
        self._thread.start()
        if not self.read_only:
            self._submit(self._expiry_sweeps())
        from control_center.land import LandRequests

        #: Landing the spaces' work (the Land dialog's requests), each on a worker thread.
        self.landing = LandRequests(ws, self.settings, self._off_loop, self._spaces_moved)
        if self.team:
            self._submit(self._watch_changes())
            self._submit(self._follow_pipeline_steps())
            if not self.read_only:
                self._submit(self._presence_heartbeat())
        elif ws.store.path is not None:
            # One machine, several processes (a second window, a terminal's `approvals decide`,
            # a `run`): their commits reach this app within a poll.
            self._submit(self._watch_sqlite(ws.store.path))

    @property
    def harness(self) -> Harness:
        if self._harness is None:
            from control_center.harness.loop import Harness

            self._harness = Harness(self.ws, self.settings)
        return self._harness

    @property
    def execution(self) -> TurnExecution:
        """Where this app's turns and pipeline steps run: in this process, or (a team workspace
        whose execution is ``workers``) queued to the workers, their events followed live. The
        one place that decides; everything below asks it."""
        if self._execution is None:
            from control_center.workers import turn_execution

            self._execution = turn_execution(self.ws, lambda: self.harness)
        return self._execution

    # -- plumbing -------------------------------------------------------------------------------

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            # Closed on its own thread once stopped: async generators finalized, the worker
            # threads of to_thread joined, and no "unclosed event loop" left for the GC.
            try:
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
                self._loop.run_until_complete(self._loop.shutdown_default_executor())
            finally:
                self._loop.close()

    def _submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        if self._closed:  # after shutdown nothing new starts
            coro.close()
            future: concurrent.futures.Future[Any] = concurrent.futures.Future()
            future.cancel()
            return future
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _call(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        async def run() -> Any:
            try:
                return await asyncio.to_thread(fn, *args)
            except Exception as exc:
                self._failed(str(exc))
                raise

        return self._submit(run())

    def _inbox_read(self, fn: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """``fn()`` on the Inbox's reader thread. A future not started yet can be cancelled (a
        newer filter made it useless); a failure is also told to the listeners, as ``_call``
        does."""
        with self._inbox_reader_lock:
            if self._closed:
                future: concurrent.futures.Future[Any] = concurrent.futures.Future()
                future.cancel()
                return future
            if self._inbox_reader is None:
                self._inbox_reader = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="inbox-read"
                )
            future = self._inbox_reader.submit(fn)

        def failed(f: concurrent.futures.Future[Any]) -> None:
            if f.cancelled() or f.exception() is None or self._closed:
                return
            try:  # told from the loop's thread, as a failed ``_call`` is
                self._loop.call_soon_threadsafe(self._failed, str(f.exception()))
            except RuntimeError:  # the loop is already closed: nobody to tell
                pass

        future.add_done_callback(failed)
        return future

    def _tell(self, name: str, *args: Any) -> None:
        for listener in list(self.listeners):
            try:
                getattr(listener, name)(*args)
            except Exception:  # a listener bug must not kill a turn
                log.exception("listener %s failed", name)

    def _publish(self, changes: Changes) -> Changes:
        """Tell every listener what changed (one value, whoever made the change); when turns
        moved, every space's state read after the change travels with it. Returns the value
        told (what the operation returns)."""
        if changes.turns and changes.states is None:
            try:
                changes = replace(changes, states=self.space_states_now())
            except Exception:  # a read failing must not break a turn; the next change retries
                log.exception("space states could not be read")
        if changes:
            self._tell("changed", changes)
        return changes

    def use_settings(self, settings: AppSettings) -> Changes:
        """Run with ``settings`` from now on (a new value in place of the old one: settings are
        never changed in place, so a turn reading them on the worker thread sees one whole
        value). Called by their one owner, the GUI thread."""
        self.settings = settings
        if self._harness is not None:
            self._harness.settings = settings
        self.landing.settings = settings
        self.operator = operator_identity(settings)
        return self._publish(Changes(settings=True))

    def _spaces_moved(self) -> None:
        self._publish(Changes(spaces=EVERY))

    def _tell_pipeline_moved(self, space_id: str | None) -> None:
        self._publish(_pipeline_moved(space_id))

    def _failed(self, message: str) -> Changes:
        """The one route of a failure: a value whose ``error`` the status area shows."""
        return self._publish(Changes(error=message))

    def add_listener(self, listener: RuntimeListener) -> None:
        self.listeners.append(listener)

    # -- the live state of every space (one source for the whole UI) -----------------------------

    def space_states_now(self) -> dict[str, SpaceState]:
        """Each space's live state, folded from the store (its newest turn, its waiting items)
        and the pipelines this process runs."""
        latest, waiting = self.ws.store.space_overview()
        pipelines = self.pipeline_spaces()
        states: dict[str, SpaceState] = {}
        for space in self.ws.store.spaces():
            turn = latest.get(space.id)
            count, first = waiting.get(space.id, (0, ""))
            states[space.id] = fold_space_state(
                space.id,
                latest=TurnSnapshot(*turn) if turn else None,
                waiting=count,
                first_waiting=first,
                pipeline_running=space.id in pipelines,
            )
        return states

    def publish_states(self) -> concurrent.futures.Future[Changes]:
        """Recompute and push every space's state (a value whose ``turns`` are every space)."""

        async def run() -> Changes:
            return self._publish(Changes(turns=EVERY))

        return self._submit(run())

    def _turn_event(self, key: str | None, event: TurnEvent) -> None:
        self._tell("turn_event", key, event)
        space_id = key.split("#", 1)[0] if key else None
        if isinstance(event, ApprovalRequested | QuestionAsked):
            # The item is in the store now; a turn that waits for it inside its own process (a
            # Claude Code call) does not end first, so the Inbox must hear of it here.
            self._publish(Changes(approvals=keys(event.approval) or EVERY, turns=keys(space_id) or EVERY))
        elif isinstance(event, TurnStarted):
            self._publish(Changes(turns=keys(space_id) or EVERY))

    # -- reads (off the GUI thread) -------------------------------------------------------------

    def probe_os_layer(self) -> concurrent.futures.Future[Any]:
        """Whether bubblewrap works on this host (a trial run, once per process)."""
        from control_center.harness.sandbox import sandbox_available

        return self._call(sandbox_available)

    def check_cli(self, transport: Transport) -> concurrent.futures.Future[Any]:
        """The transport's CLI, found and asked its version (``harness.cli_check``): the one-line
        problem, or None when a turn on it can start."""
        from control_center.core.transports import transport_spec
        from control_center.harness.cli_check import check_cli

        spec = transport_spec(transport)
        if spec.cli_setting is None:
            return self._call(lambda: None)
        setting = getattr(self.settings, spec.cli_setting, None)
        return self._call(lambda: check_cli(spec, setting).problem)

    def load_transcript(
        self,
        space_id: str,
        limit: int | None = TRANSCRIPT_PAGE,
        *,
        before_seq: int | None = None,
        after_seq: int | None = None,
    ) -> concurrent.futures.Future[Any]:
        return self._call(
            lambda: self.transcript_now(space_id, limit, before_seq=before_seq, after_seq=after_seq)
        )

    def transcript_now(
        self,
        space_id: str,
        limit: int | None = TRANSCRIPT_PAGE,
        *,
        before_seq: int | None = None,
        after_seq: int | None = None,
    ) -> TranscriptPage:
        """The newest ``limit`` messages, or (``before_seq``) the ``limit`` before that seq: a
        keyset page, so scrolling up costs one page per step, however long the conversation.
        With ``after_seq`` (a tail read: what was stored since the rows shown), a result whose
        call is shown already comes as an update of that call's row."""
        space = self.ws.store.space(space_id)
        if space is None:
            return TranscriptPage(space_id, [], False)
        if limit is None and before_seq is None:
            rows = self.ws.store.messages(space.conversation_id)
        else:
            rows = self.ws.store.messages_page(
                space.conversation_id,
                after_seq=after_seq,
                before_seq=before_seq,
                limit=(limit + 1) if limit else None,
                newest_first=True,
            )
        truncated = limit is not None and len(rows) > limit
        if truncated:
            rows = rows[1:]
        counts = self.ws.store.thread_counts(space.conversation_id, [r.id for r in rows])
        items = items_from_rows(rows, counts, updates=after_seq is not None)
        decided = self.ws.store.approvals_by_id(
            [i.data["approval_id"] for i in items if i.data and i.data.get("approval_id")]
        )
        by_call = {str(a.payload["call_id"]): a for a in decided.values() if a.payload.get("call_id")}
        items = [_with_approval_status(i, decided, by_call) for i in items]
        active = self.ws.store.active_turn(space_id)
        items = self._with_kept_output([_settled_tool(i, active) for i in items])
        oldest = rows[0].seq if rows else None
        newest = rows[-1].seq if rows else after_seq
        return TranscriptPage(
            space_id, items, truncated, oldest, older=before_seq is not None, newest_seq=newest
        )

    def _with_kept_output(self, items: list[TranscriptItem]) -> list[TranscriptItem]:
        """A call stopped while it ran shows what it printed (its spool, kept on Stop), as the
        live row did, until its result reaches the conversation on resume."""
        from dataclasses import replace

        from control_center.harness.output_stream import STREAM_MAX_BYTES, SpoolTail

        stopped = [i for i in items if i.tool is not None and i.tool.status == "stopped" and i.turn_id]
        if not stopped:
            return items
        spools: dict[str, str] = {}
        for turn_id in {i.turn_id for i in stopped if i.turn_id}:
            for record in self.ws.store.call_records(turn_id):
                if record.spool and Path(record.spool).is_file():
                    spools[record.call_id] = record.spool
        out = []
        for item in items:
            spool = spools.get(item.tool.call_id) if item in stopped and item.tool is not None else None
            if spool is not None and item.tool is not None and item.tool.result is None:
                tail = SpoolTail(Path(spool))
                tail.pos = max(0, Path(spool).stat().st_size - STREAM_MAX_BYTES)
                text, _ = tail.read()
                item = replace(item, tool=replace(item.tool, result=text or None, full_output=spool))
            out.append(item)
        return out

    def search_messages(self, query: str, space_id: str | None = None) -> concurrent.futures.Future[Any]:
        """Messages of every conversation holding every word of ``query`` (store full-text index)."""
        return self._call(lambda: self.ws.store.search_messages(query, space_id=space_id))

    def first_message_of_turn(self, turn_id: str) -> concurrent.futures.Future[str | None]:
        """The id of the first message turn ``turn_id`` wrote (None: it wrote none)."""
        return self._call(lambda: next((m.id for m in self.ws.store.turn_messages(turn_id)), None))

    def messages_from(self, message_id: str) -> concurrent.futures.Future[int]:
        return self._call(lambda: self.ws.store.messages_from(message_id))

    def load_approvals(self, changed_since: str | None = None) -> concurrent.futures.Future[list[Approval]]:
        return self._call(lambda: self.ws.store.approvals(changed_since=changed_since))

    # The Inbox is a window onto the approval history: pages, counts and changes, never all of it.

    def load_approval_page(
        self, query: ApprovalQuery, before: tuple[str, str] | None, limit: int
    ) -> concurrent.futures.Future[list[Approval]]:
        return self._inbox_read(lambda: self.ws.store.approval_page(query, before=before, limit=limit))

    def load_approval_counts(self, query: ApprovalQuery) -> concurrent.futures.Future[ApprovalCounts]:
        return self._inbox_read(lambda: self.ws.store.approval_counts(query))

    def load_approval_space_ids(self) -> concurrent.futures.Future[list[str]]:
        return self._inbox_read(self.ws.store.approval_space_ids)

    def load_approval(self, approval_id: str) -> concurrent.futures.Future[Approval | None]:
        return self._inbox_read(lambda: self.ws.store.approval(approval_id))

    def load_approval_baseline(self) -> concurrent.futures.Future[tuple[str, list[Approval]]]:
        """Where a live Inbox starts: the newest change's time (later changes are read from it)
        and the questions that wait (the composer answers them)."""

        def read() -> tuple[str, list[Approval]]:
            store = self.ws.store
            watermark = store.approval_watermark()
            return watermark, store.approvals(status=ApprovalStatus.PENDING, kind=ApprovalKind.QUESTION)

        return self._call(read)

    def running_spaces(self) -> set[str]:
        return {k for k, t in list(self._turn_tasks.items()) if not t.done()}

    def pipeline_spaces(self) -> set[str]:
        """Spaces whose generated work (a pipeline) is running now."""
        return {sid for sid in list(self._pipeline_space.values()) if sid}

    # -- turns ----------------------------------------------------------------------------------

    def send_message(
        self,
        space_id: str,
        text: str,
        *,
        provider: str | None = None,
        thread: str | None = None,
        author: str = "agent",
        images: tuple[dict[str, Any], ...] = (),
        model: str | None = None,
    ) -> concurrent.futures.Future[Any]:
        """Run a turn in the space's conversation, or in ``thread`` (a thread's conversation id).
        A thread's events are keyed ``SPACE#THREAD`` so the main conversation does not show them."""
        from control_center.harness.loop import RunRequest

        key = f"{space_id}#{thread}" if thread else space_id

        async def run() -> TurnEnded | TurnNotStarted | None:
            if key in self.running_spaces():
                reason = "a turn is already running here; stop it or wait"
                self._failed(reason)
                return TurnNotStarted(reason)
            req = RunRequest(
                message=text,
                space_ref=space_id,
                provider=provider,
                conversation_id=thread,
                author=author,
                images=images,
                model=model,
            )
            return await self._track(key, self.execution.run(req, lambda e: self._turn_event(key, e)))

        return self._submit(run())

    # -- the composer's data (ui/composer_popups.py); a refusal is the future's one-line error --

    def _quiet(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        """``fn`` off the GUI thread, its error left to the caller (no error dialog)."""

        async def run() -> Any:
            return await asyncio.to_thread(fn, *args)

        return self._submit(run())

    def list_files(self, space_id: str) -> concurrent.futures.Future[list[str]]:
        """The space's worktree files for ``@`` completion (gitignore-aware)."""
        from control_center.harness.attachments import list_worktree_files

        def work() -> list[str]:
            space = self.ws.store.space(space_id)
            return list_worktree_files(Path(space.worktree)) if space is not None else []

        return self._quiet(work)

    def store_image(self, data: bytes | Path) -> concurrent.futures.Future[Any]:
        """Keep a pasted image (or a dropped file) in the workspace (harness/attachments.py)."""
        from control_center.harness.attachments import store_image

        return self._quiet(store_image, self.ws.root, data)

    def load_commands(self, space_id: str | None) -> concurrent.futures.Future[Any]:
        """The custom ``/`` commands of the space's repository and the operator's config folder."""
        from control_center.harness.custom_commands import load_commands

        def work() -> Any:
            space = self.ws.store.space(space_id) if space_id else None
            configured = frozenset(self.settings.model_for(mode).model for mode in Mode)
            worktree = Path(space.worktree) if space is not None else None
            return load_commands(worktree, allowed_models=configured)

        return self._quiet(work)

    def sent_messages(self, space_id: str, limit: int = 100) -> concurrent.futures.Future[list[str]]:
        """The operator's earlier messages in the space, oldest first (Up recalls them)."""

        def work() -> list[str]:
            space = self.ws.store.space(space_id)
            if space is None or not space.conversation_id:
                return []
            rows = self.ws.store.messages(space.conversation_id, limit=limit * 20)
            return [r.text for r in rows if r.kind == "user" and r.text][-limit:]

        return self._quiet(work)

    def load_drafts(self) -> concurrent.futures.Future[dict[str, str]]:
        from control_center.harness.drafts import load_drafts

        return self._quiet(load_drafts, self.ws.root)

    def save_draft(self, space_id: str, text: str) -> concurrent.futures.Future[Any]:
        from control_center.harness.drafts import save_draft

        return self._quiet(save_draft, self.ws.root, space_id, text)

    def open_thread(self, space_id: str, message_id: str) -> concurrent.futures.Future[str]:
        """The conversation id of the thread hanging off ``message_id`` (created on first use)."""

        def work() -> str:
            existing = self.ws.store.thread_of(message_id)
            return existing or self.ws.store.create_conversation(
                space_id=space_id, parent_message_id=message_id
            )

        return self._call(work)

    def thread_transcript(self, conversation_id: str) -> concurrent.futures.Future[list[TranscriptItem]]:
        return self._call(lambda: items_from_rows(self.ws.store.messages(conversation_id)))

    def load_thread_tail(
        self, conversation_id: str, after_seq: int | None
    ) -> concurrent.futures.Future[TranscriptPage]:
        """A thread's rows stored after ``after_seq`` (all of them first), as the thread shows
        them: folded by id into what it shows, live and on reopening alike."""

        def work() -> TranscriptPage:
            if after_seq is None:
                rows = self.ws.store.messages(conversation_id)
            else:
                rows = self.ws.store.messages_page(conversation_id, after_seq=after_seq)
            items = items_from_rows(rows, updates=after_seq is not None)
            newest = rows[-1].seq if rows else after_seq
            return TranscriptPage(conversation_id, items, False, newest_seq=newest)

        return self._call(work)

    async def _track(
        self, space_id: str, coro: Coroutine[Any, Any, TurnEnded]
    ) -> TurnEnded | TurnNotStarted | None:
        """The turn's end; None when it was cancelled, TurnNotStarted when it could not begin."""
        from control_center.harness.loop import HarnessError

        task = asyncio.ensure_future(coro)
        self._turn_tasks[space_id] = task
        outcome: TurnEnded | TurnNotStarted | None
        try:
            outcome = await task
        except asyncio.CancelledError:
            outcome = None
        except (HarnessError, WorkspaceError) as exc:  # the turn could not start (here or on a worker)
            self._failed(str(exc))
            outcome = TurnNotStarted(str(exc) or type(exc).__name__)
        finally:
            # Only this run's entry: a grant's resume may start while the run that stopped to
            # wait is still finishing, and its end must not untrack the resumed run (Stop would
            # no longer reach it).
            if self._turn_tasks.get(space_id) is task:
                del self._turn_tasks[space_id]
        if isinstance(outcome, TurnEnded):
            self._tell("turn_finished", space_id, outcome)
            await self._continue_pipelines_after(outcome)
        of_space = keys(space_id.split("#", 1)[0] or None)
        self._publish(Changes(approvals=EVERY, spaces=of_space or EVERY, turns=of_space or EVERY))
        return outcome

    def resume_turn(self, turn_id: str) -> concurrent.futures.Future[Any]:
        async def run() -> TurnEnded | TurnNotStarted | None:
            turn = self.ws.store.turn(turn_id)
            space_id = turn.space_id if turn else None
            key = space_id or ""
            return await self._track(
                key, self.execution.resume(turn_id, lambda e: self._turn_event(space_id, e))
            )

        return self._submit(run())

    def cancel(self, space_id: str) -> concurrent.futures.Future[Changes]:
        """Stop the space's turn (it becomes interrupted, resumable) and its pipelines. A turn
        waiting for the operator (suspended, or inside its own process) has what it waits on
        withdrawn with the reason, so no Inbox item is left waiting for a turn that stopped."""

        async def run() -> Changes:
            from control_center.harness.stop_wait import stop_waiting_turn
            from control_center.pipeline.service import cancel_pipeline

            holder = await asyncio.to_thread(self.ws.store.active_turn, space_id)
            task = self._turn_tasks.get(space_id)
            if task is not None:
                task.cancel()
                await asyncio.wait({task}, timeout=STOP_WAIT_S)  # its own end is recorded first
            changes = Changes(turns=keys(space_id)) if task is not None or holder is not None else Changes()
            if holder is not None:
                withdrawn = await asyncio.to_thread(stop_waiting_turn, self.ws, holder.id)
                if withdrawn or task is None:
                    changes = self._publish(
                        Changes(approvals=EVERY, spaces=keys(space_id), turns=keys(space_id))
                    )
            stopped_pipelines = False
            for pid, ptask in list(self._pipeline_tasks.items()):
                row = self.ws.store.pipeline(pid)
                if row is not None and row.space_id == space_id:
                    # The operator's stop is recorded first, so the pipeline does not come back
                    # as "interrupted" at the next start.
                    await asyncio.to_thread(cancel_pipeline, self.ws, pid)
                    ptask.cancel()
                    stopped_pipelines = True
            if self.execution.queued:  # the space's pipeline runs on the workers
                for row in self.ws.store.pipelines(space_id=space_id, status="running"):
                    await asyncio.to_thread(cancel_pipeline, self.ws, row.id)
                    await self.execution.stop_pipeline(row.id)
                    stopped_pipelines = True
            if stopped_pipelines:
                changes |= self._publish(Changes(pipelines=keys(space_id), turns=keys(space_id)))
            return changes

        return self._submit(run())

    def compact(self, space_id: str) -> concurrent.futures.Future[Any]:
        """The operator's "compact now": the mode's model summarises the conversation before its
        current task (harness/context.py); errors reach the operator as one line."""

        async def run() -> Any:
            try:
                return await self.execution.compact(space_id)  # on a worker in team mode
            except Exception as exc:
                self._failed(f"compaction failed: {exc}")
                return None

        return self._submit(run())

    def clear_context(self, space_id: str) -> concurrent.futures.Future[str]:
        """The operator's /clear (harness/context.py ``clear_context``): refused while a turn
        runs or waits in the space (its history is in use); the line to show comes back."""
        from control_center.harness.context import clear_context

        def work() -> str:
            space = self.ws.store.space(space_id)
            if space is None:
                raise OperatorError(f"no space {space_id!r}")
            if space_id in self.running_spaces() or self.ws.store.active_turn(space_id) is not None:
                raise OperatorError("a turn is running or waiting here: /clear when it has ended")
            if clear_context(self.ws.store, space.conversation_id, by=self.operator) is None:
                return "nothing to clear: the conversation is empty"
            return "context cleared: the next message starts the model's history afresh"

        return self._call(work)

    def turn_back(self, space_id: str, back: int) -> concurrent.futures.Future[tuple[str, str] | str]:
        """The turn ``back`` turns before now that a rewind can take back (1: the newest one not
        rewound yet): its id and message, or the line that says why there is none."""

        def read() -> tuple[str, str] | str:
            found: list[tuple[str, str]] = []
            for turn in reversed(self.ws.store.turns(space_id=space_id)):
                first = next((m for m in self.ws.store.turn_messages(turn.id) if m.kind == "user"), None)
                if first is not None and not first.meta.get("rewound"):
                    found.append((turn.id, first.text))
                    if len(found) == back:
                        return found[-1]
            shown = f"{len(found)} turn{'s' if len(found) != 1 else ''}"
            return f"/rewind {back}: this conversation has {shown} to rewind"

        return self._call(read)

    def load_replaced(self, space_id: str, from_seq: int, to_seq: int) -> concurrent.futures.Future[Any]:
        """What a compaction replaced: messages ``from_seq``..``to_seq`` (the newest page of them)."""
        return self._call(
            lambda: self.transcript_now(
                space_id, TRANSCRIPT_PAGE, before_seq=to_seq + 1, after_seq=from_seq - 1
            )
        )

    def answer(self, approval_id: str, text: str) -> concurrent.futures.Future[Done[DecisionOutcome]]:
        """Record the operator's answer to an agent's question, then resume the waiting turn.
        A refusal raises :class:`OperationFailed` (its line already told, once)."""
        from control_center.harness.verbs import OPERATOR
        from control_center.pipeline.decisions import answer

        async def run() -> Done[DecisionOutcome]:
            try:
                outcome = await asyncio.to_thread(answer, self.ws, approval_id, text, by=OPERATOR)
            except Exception as exc:
                raise OperationFailed(self._failed(str(exc) or type(exc).__name__)) from exc
            changes = self._publish(_decided(outcome))
            self._resume_if_waiting(outcome.resume_turn)
            return Done(outcome, changes)

        return self._submit(run())

    def _resume_if_waiting(self, turn_id: str | None) -> None:
        turn = self.ws.store.turn(turn_id) if turn_id else None
        if turn is not None and turn.status is TurnStatus.AWAITING_APPROVAL:
            from control_center.harness.turn_claim import waiting_in_its_process

            if not waiting_in_its_process(turn):  # else its own process continues it
                self.resume_turn(turn.id)

    # -- decisions ------------------------------------------------------------------------------

    def decide(
        self,
        approval_id: str,
        decision: Decision,
        reason: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> concurrent.futures.Future[Done[DecisionOutcome]]:
        """Record the operator's decision, then continue what waited on it: a tool-call turn is
        resumed, an approved plan or orchestration runs its pipeline. ``options`` are a grant's
        numbers as its kind declares them (``raise_tokens``, ``raise_usd`` for a budget). A
        refusal raises :class:`OperationFailed` (its line already told, once)."""

        from control_center.harness.settings import operator_identity
        from control_center.pipeline.decisions import decide

        operator = operator_identity(self.settings)

        async def run() -> Done[DecisionOutcome]:
            try:
                outcome = await asyncio.to_thread(
                    decide,
                    self.ws,
                    approval_id,
                    decision,
                    by=operator,
                    reason=reason,
                    plan_budget=self.settings.plan_budget(),
                    plan_concurrency=self.settings.plan_concurrency,
                    plan_check_retries=self.settings.plan_check_retries,
                    **dict(options or {}),
                )
            except Exception as exc:
                raise OperationFailed(self._failed(str(exc) or type(exc).__name__)) from exc
            changes = self._publish(_decided(outcome))
            approval = outcome.approval
            if approval.kind is ApprovalKind.TOOL_CALL:
                self._resume_if_waiting(outcome.resume_turn)
            if outcome.pipeline_id:
                self.run_pipeline(outcome.pipeline_id)
            return Done(outcome, changes)

        return self._submit(run())

    # -- scoped grants' rules (the Inbox's Rules view) ------------------------------------------

    def load_rules(self, include_revoked: bool = False) -> concurrent.futures.Future[list[RuleShown]]:
        """Every rule (newest first) with how many calls it let run and the space's name."""

        def read() -> list[RuleShown]:
            from control_center.store.store import now_iso

            store = self.ws.store
            uses = store.rule_uses()
            names = {s.id: s.name for s in store.spaces(include_archived=True)}
            now = now_iso()
            return [
                RuleShown(r, uses.get(r.id, 0), names.get(r.space_id or "", ""), r.status(now))
                for r in store.rules(include_inactive=include_revoked)
            ]

        return self._inbox_read(read)

    def revoke_rule(self, rule_id: str) -> concurrent.futures.Future[Changes]:
        from control_center.store.store import now_iso

        def work() -> Changes:
            self.ws.store.revoke_rule(rule_id, by=self.operator, at=now_iso())
            return self._publish(Changes(rules=True))

        return self._call(work)

    # -- approvals that expire (pipeline/expiry.py) ---------------------------------------------

    async def _expiry_sweeps(self) -> None:
        """Every few seconds (and at once on start: what fell due while the app was closed):
        expire what is past its time-out, continue the turns that waited on it with the denial,
        and announce once what is about to expire."""
        from control_center.pipeline.expiry import sweep

        while not self._closed:
            timeouts = dict(self.settings.approval_timeouts)
            if timeouts:
                try:
                    done = await asyncio.to_thread(sweep, self.ws, timeouts)
                except Exception as exc:  # a full disk, a lost server: said, and tried again
                    log.warning("approval expiry sweep failed: %s", exc)
                else:
                    self._after_sweep(done)
            await asyncio.sleep(EXPIRY_SWEEP_S)

    def _after_sweep(self, done: Any) -> None:
        if done.expired:
            self._publish(Changes(approvals=EVERY, spaces=EVERY, turns=EVERY))
            for item in done.expired:
                self._resume_if_waiting(item.resume_turn)
        fresh = [(a, c.text) for a, c in done.expiring if a.id not in self._warned]
        if fresh:
            self._warned.update(a.id for a, _ in fresh)
            self._publish(Changes(expiring=tuple(fresh)))

    # -- pipelines ------------------------------------------------------------------------------

    def run_pipeline(self, pipeline_id: str) -> concurrent.futures.Future[Any]:
        from control_center.pipeline.runner import PipelineRunner

        async def run() -> Any:
            if pipeline_id in self._pipeline_tasks and not self._pipeline_tasks[pipeline_id].done():
                return None
            row = self.ws.store.pipeline(pipeline_id)
            space_id = row.space_id if row else None
            if await self.execution.queue_pipeline(pipeline_id):
                # The workers run its steps; their changes come back through the change feed.
                self._publish(_pipeline_moved(space_id))
                return None
            runner = PipelineRunner(
                self.ws,
                self.harness,
                on_state=lambda _pid, _s: self._tell_pipeline_moved(space_id),
                on_event=lambda e: self._on_pipeline_event(pipeline_id, space_id, e),
                on_step_event=lambda sid, e: self._on_pipeline_event(pipeline_id, space_id, e, sid),
            )
            task = asyncio.ensure_future(runner.run(pipeline_id))
            self._pipeline_tasks[pipeline_id] = task
            self._pipeline_space[pipeline_id] = space_id
            self._publish(
                _pipeline_moved(space_id) | Changes(spaces=keys(space_id), turns=keys(space_id) or EVERY)
            )
            try:
                return await task
            except asyncio.CancelledError:
                return None
            except Exception as exc:
                self._failed(f"pipeline {pipeline_id}: {exc}")
                return None
            finally:
                self._pipeline_tasks.pop(pipeline_id, None)
                self._pipeline_space.pop(pipeline_id, None)
                self._publish(
                    _pipeline_moved(space_id)
                    | Changes(spaces=keys(space_id) or EVERY, approvals=EVERY, turns=keys(space_id) or EVERY)
                )

        return self._submit(run())

    async def _continue_pipelines_after(self, ended: TurnEnded) -> None:
        """A pipeline waiting on a node turn continues once that turn completes (on workers, the
        worker that ran the turn queues the pipeline's next step)."""
        if self.execution.queued:
            return
        for row in self.ws.store.pipelines(status="waiting"):
            node_turns = row.spec.get("_run", {}).get("node_turns", {})
            if ended.turn in node_turns.values() and ended.status is not TurnStatus.AWAITING_APPROVAL:
                self.run_pipeline(row.id)

    def _on_pipeline_event(
        self, pipeline_id: str, space_id: str | None, event: Any, shown_in: str | None = None
    ) -> None:
        """A pipeline's event; a step turn's goes to the space its turn is stored in
        (``shown_in``: a room, a parallel step's space), so what shows live is what a reload
        of that space shows."""
        from control_center.core.events import ApprovalRequested, TurnStarted, UsageEvent

        self._tell("turn_event", shown_in or space_id, event)
        if isinstance(event, TurnStarted):
            # A step may work in a room the run just opened: the space list shows it now, not
            # when the whole run ends (the Pipelines tab's "Conversation" selects it).
            self._publish(Changes(spaces=EVERY) | _pipeline_moved(space_id))
        elif isinstance(event, UsageEvent):
            # Budget use is shown live: after every model call of a node, not only per node.
            self._publish(_pipeline_moved(space_id))
        elif isinstance(event, ApprovalRequested):
            self._publish(Changes(approvals=keys(event.approval), turns=keys(space_id) or EVERY))

    def resume_pipelines(self) -> concurrent.futures.Future[Any]:
        """At start-up: pipelines that were running, interrupted or waiting continue where they
        stopped (a waiting one whose approval was decided meanwhile resumes its turn)."""
        if self.read_only:
            return _done()

        async def run() -> None:
            from control_center.pipeline.service import RESUMABLE_STATUSES

            if self.execution.queued:  # the workers recover their own jobs
                return

            # Each resumes through run_pipeline, so it is tracked (and stopped cleanly on close).
            for row in self.ws.store.pipelines():
                if row.status in RESUMABLE_STATUSES:
                    self.run_pipeline(row.id)

        return self._submit(run())

    # -- spaces ---------------------------------------------------------------------------------

    def create_space(
        self,
        name: str,
        mode: Mode,
        autonomy: Autonomy,
        *,
        transport: Transport = Transport.BUILTIN,
        base: str = "HEAD",
    ) -> concurrent.futures.Future[Done[Space]]:
        def work() -> Done[Space]:
            space = self.ws.create_space(
                name, mode=mode, autonomy=autonomy, transport=transport, start_point=base
            )
            return Done(space, self._publish(Changes(spaces=keys(space.id), turns=keys(space.id))))

        return self._call(work)

    def list_branches(self) -> concurrent.futures.Future[list[str]]:
        """The repository's local branches (where a new space may start)."""
        from control_center.workspace import git

        def work() -> list[str]:
            out = git(self.ws.repo, "for-each-ref", "--format=%(refname:short)", "refs/heads", check=False)
            return [b for b in out.stdout.split() if b]

        return self._call(work)

    def set_mode(self, space_id: str, mode: Mode) -> concurrent.futures.Future[Done[Space]]:
        """The space's mode; a change writes (or rewrites) the conversation's note that says so."""

        def work() -> Done[Space]:
            with _MODE_CHANGES:  # one at a time: the note says the mode finally chosen
                return change()

        def change() -> Done[Space]:
            old = self.ws.require_space(space_id)
            space = self.ws.set_mode(space_id, mode)
            if old.mode is not mode:
                from control_center.core.profiles import profile_for

                store = self.ws.store
                text = f"Mode changed to {profile_for(mode).label}; it takes effect from the next turn."
                # Shift+Tab through the modes writes one note: the newest message, when it is
                # the note of the previous change, says the mode now chosen instead.
                last = store.messages(space.conversation_id, limit=1)
                if last and last[0].kind == "note" and last[0].meta.get("mode_change"):
                    store.update_message_text(last[0].id, text, mode=mode.value)
                else:
                    store.add_message(
                        space.conversation_id,
                        role="system",
                        kind="note",
                        text=text,
                        meta={"mode_change": True, "mode": mode.value},
                    )
            noted = keys(space_id) if old.mode is not mode else frozenset()
            return Done(space, self._publish(Changes(spaces=keys(space_id), messages=noted)))

        return self._call(work)

    def update_space(self, space_id: str, **fields: Any) -> concurrent.futures.Future[Done[Space]]:
        """Rename, archive or restore, or set the space's autonomy or transport."""

        def work() -> Done[Space]:
            space = self.ws.store.update_space(space_id, **fields)
            return Done(space, self._publish(Changes(spaces=keys(space_id))))

        return self._call(work)

    def import_pull_request(
        self, reference: str, name: str | None = None
    ) -> concurrent.futures.Future[Done[Space]]:
        """A GitHub pull request (URL or OWNER/REPO#N) fetched and opened as a review space."""

        def work() -> Done[Space]:
            from control_center.github_import import import_pull_request

            space = import_pull_request(self.ws, reference, name=name)
            return Done(space, self._publish(Changes(spaces=keys(space.id), turns=keys(space.id))))

        return self._call(work)

    # -- landing a space's work and opening its worktree (land.py, launch.py) ------------------

    def _off_loop(self, fn: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """``fn()`` on a worker thread; its failure is the caller's to show (not a global error)."""

        async def run() -> Any:
            return await asyncio.to_thread(fn)

        return self._submit(run())

    def open_worktree(self, space_id: str, target: str) -> concurrent.futures.Future[str]:
        """Start the editor, terminal or file manager (``launch.TARGETS``) on the space's worktree."""
        from control_center import launch

        def work() -> str:
            space = self.ws.local_space(self.ws.require_space(space_id))
            return launch.open_folder(launch.TARGETS[target], space.worktree, self.settings)

        return self._off_loop(work)

    def space_usage(self, space_id: str) -> concurrent.futures.Future[dict[str, Any]]:
        return self._call(self.ws.store.space_usage, space_id)

    def touch_space(self, space_id: str) -> concurrent.futures.Future[Any]:
        if self.read_only:  # browsing a read-only workspace leaves "last active" as it was
            return _done()
        return self._call(self.ws.store.touch_space, space_id)

    def side_data(self, space_id: str) -> concurrent.futures.Future[Any]:
        return self._call(self.side_data_now, space_id)

    def side_data_now(self, space_id: str) -> SideData:
        """What the Plan Studio and review tabs of a space show."""
        from control_center.core.forecast import PlanForecast
        from control_center.core.pipeline import NodeStatus, state_from_json
        from control_center.core.plan import parse_plan
        from control_center.core.plan_review import comments_of

        store = self.ws.store
        space = store.space(space_id)
        plans = store.plans(space_id)
        plan_views: list[PlanVersion] = []
        for row in plans:
            approval = store.approval(row.approval_id) if row.approval_id else None
            plan_views.append(
                PlanVersion(
                    id=row.id,
                    version=row.version,
                    graph=parse_plan(row.graph),
                    status=row.status,
                    approval_id=row.approval_id,
                    approval_status=approval.status.value if approval else None,
                    content_hash=row.content_hash,
                    comments=comments_of(row.comments),
                    approved_nodes=tuple(row.approved_nodes),
                )
            )
        node_status: dict[str, dict[str, str]] = {}
        pipeline_of: dict[str, str] = {}
        node_runs: dict[str, dict[str, NodeRun]] = {}
        forecasts: dict[str, Any] = {}
        actuals: dict[str, dict[str, NodeActual]] = {}
        node_pipeline: dict[str, dict[str, str]] = {}
        for row in plans:
            approval = store.approval(row.approval_id) if row.approval_id else None
            found = PlanForecast.from_json(approval.payload.get("forecast")) if approval else None
            if found is not None:
                forecasts[row.id] = found
        for prow in store.pipelines(space_id=space_id):
            if prow.source_kind == "plan":
                made = PlanForecast.from_json((prow.spec.get("_run") or {}).get("forecast"))
                if made is not None and prow.source_id not in pipeline_of:
                    forecasts[prow.source_id] = made
                # A plan approved in subsets runs as several pipelines: each holds its own nodes.
                actuals.setdefault(prow.source_id, {}).update(_node_actuals(prow.spec))
                state = state_from_json(prow.state)
                node_status.setdefault(prow.source_id, {}).update(
                    {k: NodeStatus(v).value for k, v in state.statuses.items()}
                )
                pipeline_of[prow.source_id] = prow.id
                node_runs.setdefault(prow.source_id, {}).update(_node_runs(store, prow.spec))
                for key in state.statuses:
                    node_pipeline.setdefault(prow.source_id, {})[key] = prow.id
        review = None
        pr_diffs: dict[str, str] = {}
        pr_diff_full = ""
        if space is not None and space.is_pr:
            from control_center.harness.verbs import review_snapshot
            from control_center.review_service import pr_diff

            review = review_snapshot(self.ws, space_id)
            for path in sorted({n.anchor.file for n in review.nodes if n.anchor is not None}):
                try:
                    pr_diffs[path] = pr_diff(self.ws, space_id, path)
                except Exception as exc:  # shown in the panel's diff header, not raised
                    pr_diffs[path] = f"(the diff of {path} could not be read: {exc})"
            try:
                pr_diff_full = pr_diff(self.ws, space_id)
            except Exception as exc:
                pr_diff_full = f"(the pull request's diff could not be read: {exc})"
        from control_center.pipeline.service import live_budget_use, pipeline_steps, pipelines_touching

        pipelines = tuple(pipelines_touching(self.ws, space_id, self.pipeline_index))
        budget_use = {p.id: live_budget_use(self.ws, p) for p in pipelines}
        steps = {p.id: pipeline_steps(self.ws, p) for p in pipelines}
        return SideData(
            space_id,
            tuple(plan_views),
            node_status,
            pipeline_of,
            review,
            pr_diffs,
            node_runs,
            pipelines=pipelines,
            budget_use=budget_use,
            forecasts=forecasts,
            actuals=actuals,
            pr_diff_full=pr_diff_full,
            node_pipeline=node_pipeline,
            pipeline_steps=steps,
        )

    # -- changes, checkpoints, rewind (harness/space_changes.py, harness/rewind.py) -------------

    def load_changes(self, space_id: str, only: tuple[str, ...] = ()) -> concurrent.futures.Future[Any]:
        def work() -> Any:
            from control_center.harness.space_changes import compute_changes
            from control_center.pipeline.steps import step_of_turns

            space = self.ws.require_space(space_id)
            return compute_changes(self.ws, space, steps=step_of_turns(self.ws.store), only=only)

        return self._call(work)

    def load_file_diff(self, changes: Any, change: Any) -> concurrent.futures.Future[Any]:
        from control_center.harness.space_changes import file_diff

        return self._call(file_diff, changes, change)

    # -- the operator's line comments (harness/comment_tracking.py) --------------------------

    def load_comments(self, space_id: str) -> concurrent.futures.Future[Any]:
        return self._call(lambda: self.ws.store.comments(space_id))

    def add_comment(
        self, space_id: str, comment: Any, tree: str | None = None
    ) -> concurrent.futures.Future[Any]:
        """Store ``comment`` numbered in ``tree`` (None: the worktree as it is now)."""
        from control_center.harness.comment_tracking import add_comment

        def work() -> Any:
            space = self.ws.require_space(space_id)
            return add_comment(self.ws, space, comment, tree=tree, by=f"operator:{self.operator}")

        return self._call(work)

    def resolve_comment(self, comment_id: str, resolved: bool) -> concurrent.futures.Future[Any]:
        by = f"operator:{self.operator}"
        return self._call(
            lambda: self.ws.store.set_comment_resolved(comment_id, resolved, by=by, at=now_iso())
        )

    def mark_comments_sent(
        self, comment_ids: tuple[str, ...], message: str
    ) -> concurrent.futures.Future[Any]:
        from control_center.harness.comment_tracking import mark_sent

        return self._call(mark_sent, self.ws, comment_ids, message)

    def plan_rewind(
        self, space_id: str, *, turn: str | None = None, checkpoint: int | None = None
    ) -> concurrent.futures.Future[Any]:
        from control_center.harness.rewind import plan_rewind

        return self._call(lambda: plan_rewind(self.ws, space_id, to_turn=turn, to_checkpoint=checkpoint))

    def rewind(
        self,
        space_id: str,
        *,
        turn: str | None = None,
        checkpoint: int | None = None,
        files: bool = True,
        conversation: bool = True,
    ) -> concurrent.futures.Future[Done[Any]]:
        """Rewind the space (refused while this app runs a turn there, or the store says one runs
        or waits); the model's cached view of the conversation is dropped after."""
        from control_center.harness.rewind import RewindError, rewind

        async def run() -> Done[Any]:
            if space_id in self.running_spaces() and self.ws.store.active_turn(space_id) is None:
                # started here, not claimed in the store yet (the store's refusal names the turn)
                raise RewindError("this space is busy: a turn is starting; rewind when it has finished")
            done = await asyncio.to_thread(
                rewind,
                self.ws,
                space_id,
                to_turn=turn,
                to_checkpoint=checkpoint,
                files=files,
                conversation=conversation,
            )
            if self._harness is not None:
                self._harness.forget_history(done.conversation_id)
            cut = keys(space_id) if conversation else frozenset()
            return Done(
                done, self._publish(Changes(spaces=keys(space_id), turns=keys(space_id), messages=cut))
            )

        return self._submit(run())

    def load_spaces(self) -> concurrent.futures.Future[list[Space]]:
        """The space list: every space but the node spaces of parallel plans whose node was
        merged (their work is in the plan's own space; the Pipelines tab still opens them)."""

        def read() -> list[Space]:
            self.pipeline_index.refresh(self.ws)
            hidden = self.pipeline_index.merged_node_spaces() - self.revealed_spaces
            return [s for s in self.ws.store.spaces() if s.id not in hidden]

        return self._call(read)

    def load_archived_spaces(self) -> concurrent.futures.Future[list[Space]]:
        return self._call(lambda: [s for s in self.ws.store.spaces(include_archived=True) if s.archived])

    def review_action(self, action: str, space_id: str, arg: Any) -> concurrent.futures.Future[Any]:
        """An operator action on a review (``operator_confirm``, ``open_ticket_from_finding``,
        ``operator_decision`` of :mod:`control_center.review_service`), off the GUI thread."""
        import control_center.review_service as review_service

        allowed = ("operator_confirm", "open_ticket_from_finding", "operator_decision", "operator_promote")
        if action == "operator_dismiss":  # arg: (finding id, reason)
            return self._call(review_service.operator_dismiss, self.ws, space_id, *arg)
        if action == "operator_add_finding":  # arg: the finding's fields
            return self._call(lambda: review_service.operator_add_finding(self.ws, space_id, **arg))
        if action not in allowed:
            raise ValueError(f"unknown review action {action!r}")
        return self._call(getattr(review_service, action), self.ws, space_id, arg)

    def refresh_review(self, space_id: str) -> concurrent.futures.Future[Any]:
        """The Refresh button: fetch, move the PR space to its new head (off the loop's thread),
        run the reviewer's turn as any turn runs (the conversation streams it), then match the new
        findings to the previous revision's."""
        from control_center.harness.loop import RunRequest

        async def run() -> TurnEnded | TurnNotStarted | None:
            from control_center.harness.review_revisions import reconcile_revision
            from control_center.review_service import REFRESH_PROMPT, prepare_refresh

            if space_id in self.running_spaces():
                reason = "a turn is already running here; stop it or wait"
                self._failed(reason)
                return TurnNotStarted(reason)
            try:
                await asyncio.to_thread(prepare_refresh, self.ws, space_id)
            except (WorkspaceError, ValueError) as exc:
                self._failed(str(exc))
                return TurnNotStarted(str(exc))
            self._publish(Changes(spaces=keys(space_id)))
            req = RunRequest(message=REFRESH_PROMPT, space_ref=space_id, author="reviewer")
            outcome = await self._track(
                space_id, self.execution.run(req, lambda e: self._turn_event(space_id, e))
            )
            await asyncio.to_thread(reconcile_revision, self.ws, space_id)
            self._publish(Changes(spaces=keys(space_id)))
            return outcome

        return self._submit(run())

    def review_post_preview(self, space_id: str) -> concurrent.futures.Future[Any]:
        """(pull request, PostPlan): what Post would send."""
        from control_center.github_review import preview

        return self._call(preview, self.ws, space_id)

    def post_review(self, space_id: str) -> concurrent.futures.Future[Any]:
        """Post (or update) the review on GitHub; the result's ``line()`` says what was done."""
        from control_center.github_review import post_review

        return self._call(post_review, self.ws, space_id)

    def add_plan_comment(self, plan_id: str, node: str, text: str) -> concurrent.futures.Future[Any]:
        """Store the operator's comment on a plan node (sent back with a rejection); a bad one is
        told to the listeners as one line."""
        from control_center.harness.settings import operator_identity

        operator = operator_identity(self.settings)

        def work() -> Any:
            comment = self.ws.store.add_plan_comment(plan_id, node, text, by=operator)
            row = self.ws.store.plan(plan_id)
            self._publish(_pipeline_moved(row.space_id if row else None))
            return comment

        return self._call(work)

    def retry_node(self, pipeline_id: str, key: str) -> concurrent.futures.Future[Changes]:
        async def run() -> Changes:
            from control_center.pipeline.service import retry_node

            await asyncio.to_thread(retry_node, self.ws, pipeline_id, key)
            row = self.ws.store.pipeline(pipeline_id)
            changes = self._publish(_pipeline_moved(row.space_id if row else None))
            self.run_pipeline(pipeline_id)
            return changes

        return self._submit(run())

    def stop_step(self, pipeline_id: str, key: str) -> concurrent.futures.Future[Any]:
        """Stop one running step (it waits in the Inbox; the steps beside it finish); a step that
        cannot be stopped here is one line to the listeners."""

        async def run() -> None:
            from control_center.pipeline.service import stop_step

            try:
                stop_step(self.ws, pipeline_id, key)  # on this loop: the runner's tasks live here
            except Exception as exc:
                self._failed(str(exc))
                return
            row = self.ws.store.pipeline(pipeline_id)
            self._publish(_pipeline_moved(row.space_id if row else None))

        return self._submit(run())

    def cancel_pipeline(self, pipeline_id: str) -> concurrent.futures.Future[Changes]:
        async def run() -> Changes:
            from control_center.pipeline.service import cancel_pipeline

            task = self._pipeline_tasks.get(pipeline_id)
            if task is not None:
                task.cancel()
                await asyncio.wait([task], timeout=10)
            await asyncio.to_thread(cancel_pipeline, self.ws, pipeline_id)
            await self.execution.stop_pipeline(pipeline_id)
            row = self.ws.store.pipeline(pipeline_id)
            space_id = row.space_id if row else None
            return self._publish(_pipeline_moved(space_id) | Changes(turns=keys(space_id) or EVERY))

        return self._submit(run())

    def open_review(self, base: str, head: str, name: str | None) -> concurrent.futures.Future[Done[Space]]:
        def work() -> Done[Space]:
            space = self.ws.open_review(base=base, head=head, name=name)
            return Done(space, self._publish(Changes(spaces=keys(space.id), turns=keys(space.id))))

        return self._call(work)

    # -- team mode: other processes' changes, presence -----------------------------------------

    #: How often this app repeats what it shows, and how old another's word may be to count.
    PRESENCE_EVERY_S = 15.0
    PRESENCE_FRESH_S = 45.0

    async def _watch_changes(self) -> None:
        """Other processes' writes (PostgreSQL NOTIFY from the change feed's triggers) become
        the same listener calls this process's own changes make."""
        from control_center.store.changes import watch

        async for batch in watch(self.ws.store.engine):
            try:
                await asyncio.to_thread(self._apply_changes, batch)
            except Exception:  # a failed read must not end the feed; the next change retries
                log.exception("applying other operators' changes failed")

    async def _follow_pipeline_steps(self) -> None:
        """Pipeline steps the workers run reach the window as a local runner's do (their text as
        it is written); nothing to follow when they run in this process."""
        try:
            await self.execution.follow_pipelines(self._on_pipeline_event)
        except Exception:  # no database at start: steps still show through the change feed
            log.exception("following the workers' pipeline steps failed")

    async def _watch_sqlite(self, path: Path) -> None:
        """Another process's commits to this SQLite workspace: everything shown is read again
        (the file tells that something changed, not what)."""
        from control_center.store.changes import watch_sqlite

        async for batch in watch_sqlite(path):
            try:
                await asyncio.to_thread(self._apply_changes, batch)
            except Exception:  # a failed read must not end the watch; the next change retries
                log.exception("applying another process's changes failed")

    def _apply_changes(self, batch: ChangeBatch) -> Changes:
        """Another process's changes, told as this process's own are (one ``Changes`` value)."""
        conversations = {}
        if batch.everything or "message" in batch:
            conversations = {s.conversation_id: s.id for s in self.ws.store.spaces() if s.conversation_id}
        changes = self._publish(batch.as_changes(conversations))
        if batch.everything or "presence" in batch:
            self._publish_presence()
        return changes

    def show_presence(self, space_id: str | None, approval_id: str | None) -> concurrent.futures.Future[Any]:
        """Say what this app shows (team mode): the space open and the Inbox item selected."""
        self._shown = (space_id, approval_id)
        if not self.team or self.read_only:
            return _done()
        return self._call(self._say_presence)

    def _say_presence(self) -> None:
        space_id, approval_id = self._shown
        self.ws.store.set_presence(self.viewer_id, self.operator, space_id=space_id, approval_id=approval_id)

    def presence_now(self) -> list[Presence]:
        """Other operators' apps and what they show (fresh ones only)."""
        fresh = self.ws.store.presence(fresher_than_s=self.PRESENCE_FRESH_S)
        return [p for p in fresh if p.viewer_id != self.viewer_id]

    def _publish_presence(self) -> None:
        others = self.presence_now()
        key = [(p.viewer_id, p.operator, p.space_id, p.approval_id) for p in others]
        if key != [(p.viewer_id, p.operator, p.space_id, p.approval_id) for p in self._others]:
            self._others = others
            self._publish(Changes(presence=tuple(others)))

    async def _presence_heartbeat(self) -> None:
        """Repeat what this app shows, and drop others whose apps stopped saying so."""
        while True:
            try:
                await asyncio.to_thread(self._say_presence)
                await asyncio.to_thread(self._publish_presence)
            except Exception:  # the database went away for a moment: next round
                log.exception("presence heartbeat failed")
            await asyncio.sleep(self.PRESENCE_EVERY_S)

    # -- shutdown -------------------------------------------------------------------------------

    def has_running_work(self) -> bool:
        return bool(self.running_spaces()) or any(not t.done() for t in self._pipeline_tasks.values())

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop running turns cleanly (they become ``interrupted``, resumable), then the loop."""
        with self._inbox_reader_lock:
            if self._closed:
                return
            self._closed = True
            reader, self._inbox_reader = self._inbox_reader, None
        if reader is not None:  # reads not started are dropped; the one running ends first
            reader.shutdown(wait=True, cancel_futures=True)

        async def stop() -> None:
            tasks = [t for t in (*self._turn_tasks.values(), *self._pipeline_tasks.values()) if not t.done()]
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)
            # Loads still in flight are abandoned: nobody waits for their results any more.
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
            for t in rest:
                t.cancel()
            if rest:
                await asyncio.wait(rest, timeout=2)
            if self.team:
                try:  # this app no longer shows anything
                    await asyncio.to_thread(self.ws.store.clear_presence, self.viewer_id)
                except Exception:
                    log.exception("clearing presence failed")

        try:
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout + 2)
        except Exception:
            log.exception("stopping turns failed")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


def _with_approval_status(
    item: TranscriptItem, approvals: dict[str, Approval], by_call: dict[str, Approval]
) -> TranscriptItem:
    """A card with its item's decision; a waiting call's row as its decided item says (the live
    view's rule: ConversationModel.apply_approvals)."""
    from dataclasses import replace

    from control_center.core.approval_summary import approval_card_data, call_status_after

    approval_id = item.data.get("approval_id") if item.data else None
    approval = approvals.get(approval_id) if approval_id else None
    if approval is not None:
        return replace(item, data={**item.data, **approval_card_data(approval)})
    decided = by_call.get(item.tool.call_id) if item.tool is not None else None
    if item.tool is not None and decided is not None:
        status = call_status_after(decided, item.tool.status)
        if status is not None:
            return replace(item, tool=replace(item.tool, status=status))
    return item


def _settled_tool(item: TranscriptItem, active: Turn | None) -> TranscriptItem:
    """A tool row left without a result says why: its turn waits for the operator (the call is
    what waits), or its turn no longer runs (stopped, crashed) instead of "running" forever."""
    if item.tool is None or item.tool.status != "running":
        return item
    from dataclasses import replace

    if active is not None and item.turn_id == active.id:
        if active.status is TurnStatus.RUNNING:
            return item
        return replace(item, tool=replace(item.tool, status="awaiting_approval"))
    return replace(item, tool=replace(item.tool, status="stopped"))


def _pipeline_moved(space_id: str | None) -> Changes:
    """A pipeline of ``space_id`` (None: of no space) moved: a node's status, its budget use."""
    return Changes(pipelines=frozenset({space_id or ""}))


def _decided(outcome: DecisionOutcome) -> Changes:
    """What a decision or an answer changed: its item, its space's state and record, the
    rules (a scoped grant makes one) and the space's pipelines (a plan's approval starts one)."""
    approval = outcome.approval
    space = keys(approval.space_id)
    return Changes(
        approvals=keys(approval.id),
        spaces=space,
        turns=space or EVERY,
        rules=outcome.rule is not None,
        pipelines=space if outcome.pipeline_id else frozenset(),
    )


def _done() -> concurrent.futures.Future[Any]:
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()
    done.set_result(None)
    return done


def open_runtime(root: Path, *, read_only: bool = False) -> WorkspaceRuntime:
    """The runtime of the workspace at ``root``; ``read_only``: browse it, writing nothing (no
    start-up repair of dead turns either: that is a write)."""
    ws = Workspace.open(root, read_only=read_only)
    if not read_only:
        mark_dead_turns_interrupted(ws)
    return WorkspaceRuntime(ws)


def mark_dead_turns_interrupted(ws: Workspace) -> list[str]:
    """At start-up: a turn still ``running`` whose process is gone is marked ``interrupted``
    (resumable). Turns of a live process (a CLI run beside the app) are left alone."""
    from control_center.harness.turn_claim import owner_alive

    return ws.store.mark_running_turns_interrupted(owner_alive)
