"""How one agent-run node of a pipeline goes from start to done (SPEC §5, §12).

Its turn runs (in the plan's space, or, for a plan whose independent nodes run in parallel, in a
worktree of its own branched from the state its dependencies left); then its acceptance checks
run on that worktree. A failed check earns the agent a bounded number of fix turns with the
failure; past them the node fails and the run waits in the Inbox (kind ``step``). A parallel node
that passes is merged into the plan's integration branch through the run's merge queue; a
conflict also waits in the Inbox, naming the files.

Everything a crash must not repeat is written to the run information before it happens: the
node's worktree, each turn (the call journal answers for its calls), the script share each turn
takes, and the merge (``integration`` checks what is merged already)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from control_center.core.events import TurnEnded, TurnEvent, TurnStarted, TurnStatus
from control_center.core.pipeline import (
    NodeStatus,
    PipelineSpec,
    PipelineState,
    agent_prompt,
    agent_run_keys,
    node_checks,
    over_budget,
    script_share,
    split_script,
)
from control_center.core.profiles import DISPATCH_DEFAULT_MODE
from control_center.core.records import Space
from control_center.harness.loop import HarnessError, RunRequest
from control_center.pipeline import integration
from control_center.pipeline.checks import run_checks
from control_center.workspace import EXECUTION_WORKERS, WorkspaceError

if TYPE_CHECKING:
    from control_center.pipeline.runner import PipelineRunner

#: A fix turn after failed checks, by default (setting ``plan_check_retries``).
DEFAULT_CHECK_RETRIES = 1


@dataclass(frozen=True)
class NodeResult:
    output: str
    tokens: int = 0
    usd: float = 0.0
    #: The node's turn waits for an operator decision; the pipeline waits with it.
    waiting_turn: str | None = None
    #: The node's turn stopped because the pipeline's budget ran out; it resumes after a raise.
    budget_paused: bool = False


class NodeFailed(Exception):
    def __init__(
        self, message: str, tokens: int = 0, usd: float = 0.0, hold: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.usd = usd
        #: Set when the operator decides what happens next (retry / skip / cancel in the Inbox).
        self.hold_for_operator = hold


@dataclass(frozen=True)
class _Turn:
    status: TurnStatus
    turn_id: str
    output: str = ""
    error: str | None = None


class PlanSteps:
    """The agent-run nodes of one run of one pipeline (shared by its concurrent node tasks, all on
    one event loop: the run information is only changed between awaits)."""

    def __init__(
        self, runner: PipelineRunner, pipeline_id: str, spec: PipelineSpec, run_info: dict[str, Any]
    ):
        self.runner = runner
        self.ws = runner.ws
        self.pipeline_id = pipeline_id
        self.spec = spec
        self.run_info = run_info
        #: One merge into the integration branch at a time (the merge queue).
        self.merge_lock = asyncio.Lock()

    # -- settings of the run ------------------------------------------------------------------

    @property
    def concurrency(self) -> int:
        value = self.run_info.get("concurrency", 1)
        if self._shared or not isinstance(value, int) or isinstance(value, bool):
            return 1
        return max(1, value)

    @property
    def parallel(self) -> bool:
        """Nodes in worktrees of their own (a plan run with concurrency above 1)."""
        return self.concurrency > 1 and bool(self.run_info.get("plan_id"))

    @property
    def _shared(self) -> bool:
        """A team workspace whose machines share branches through a remote, or whose steps run
        on workers: the integration branch's merges would have to be published for the others,
        which is not built yet, so its plans run one node at a time as before."""
        return self.ws.execution == EXECUTION_WORKERS or self.ws.publishes_branches

    @property
    def check_retries(self) -> int:
        value = self.run_info.get("check_retries", DEFAULT_CHECK_RETRIES)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    def _info(self, name: str) -> dict[str, Any]:
        found = self.run_info.setdefault(name, {})
        assert isinstance(found, dict)
        return found

    def _save(self) -> None:
        self.runner.state = self.runner._save(self.pipeline_id, self.runner.state, run_info=self.run_info)

    def prepare(self, state: PipelineState) -> None:
        """Once per pipeline: each node's share of a scripted model (SPEC §12), and for a parallel
        plan an integration branch with nothing uncommitted (nodes branch from its commits)."""
        script = self.run_info.get("script")
        if isinstance(script, list) and "shares" not in self.run_info:
            keys = [k for k in agent_run_keys(self.spec) if state.statuses.get(k) is not NodeStatus.DONE]
            shares, leftover = split_script(script, int(self.run_info.get("cursor", 0)), keys)
            self.run_info["shares"] = shares
            self.run_info["leftover"] = leftover
        if self.parallel and not self.run_info.get("integration_ready"):
            space = self._plan_space()
            integration.commit_all(space.worktree, "Work in the space before the plan ran")
            self.run_info["integration_ready"] = True

    def _plan_space(self) -> Space:
        space_id = self.run_info.get("space_id")
        space = self.ws.store.space(str(space_id)) if space_id else None
        if space is None:
            raise NodeFailed("the plan's space is gone")
        return space

    # -- a node -------------------------------------------------------------------------------

    async def drive(self, key: str, *, turn_done: bool = False) -> NodeResult:
        timing = self._info("timing").setdefault(key, {})
        timing.setdefault("started", time.time())
        result = await self._drive(key, turn_done=turn_done)
        if result.waiting_turn is None and not result.budget_paused:
            # For the forecast of later plans: how long the node took, fix turns included.
            timing["seconds"] = round(time.time() - float(timing["started"]), 3)
            used = int(self._info("fix_turns").get(key, 0))
            self._info("fix_turns_used")[key] = max(used, int(self._info("fix_turns_used").get(key, 0)))
        return result

    async def _drive(self, key: str, *, turn_done: bool) -> NodeResult:
        node = self.spec.node(key)
        checks = node_checks(node)
        space_id = await self._space_for(key)
        output = ""
        if turn_done:
            turn_id = self._info("node_turns").get(key)
            output = self.runner.final_text(str(turn_id)) if turn_id else ""
        else:
            early, output = await self._first_turn(key, space_id)
            if early is not None:
                return early
        space = self.ws.store.space(space_id) if space_id else None
        while checks and space is not None:
            report = await asyncio.to_thread(run_checks, checks, space.worktree, hidden=(self.ws.root,))
            self._info("check_results")[key] = [r.to_json() for r in report.results]
            if report.passed:
                self._info("check_failures").pop(key, None)
                self._save()
                break
            failure = report.failure_text()
            self._info("check_failures")[key] = failure
            used = int(self._info("fix_turns").get(key, 0))
            budget_out = self.runner.state.paused_reason is not None
            if used >= self.check_retries or budget_out:
                self._save()
                raise NodeFailed(
                    f"acceptance checks failed: {report.summary()}",
                    hold={"reason": "checks", "checks": self._info("check_results")[key], "failure": failure},
                )
            self._info("fix_turns")[key] = used + 1
            self._save()
            early, output = await self._turn(key, space_id, self._fix_prompt(key, failure), fresh_share=True)
            if early is not None:
                return early
        if self.parallel and space is not None:
            await self._merge(key, space)
        return NodeResult(output)

    async def _first_turn(self, key: str, space_id: str | None) -> tuple[NodeResult | None, str]:
        conflict = self._info("conflicts").get(key)
        failure = self._info("check_failures").get(key)
        if conflict is not None and space_id:
            files = await asyncio.to_thread(self._begin_resolution, space_id)
            if not files:
                return None, ""  # merges cleanly now: straight to checks and the merge
            return await self._turn(key, space_id, self._resolve_prompt(key, files), fresh_share=True)
        if failure:
            # The operator's retry after failed checks: one more turn with the failure.
            return await self._turn(key, space_id, self._fix_prompt(key, failure), fresh_share=True)
        prompt = agent_prompt(self.spec.node(key), self.runner.state.outputs)
        return await self._turn(key, space_id, prompt, fresh_share=False)

    def _fix_prompt(self, key: str, failure: str) -> str:
        node = self.spec.node(key)
        return (
            f"{agent_prompt(node, self.runner.state.outputs)}\n\n"
            "Your work on this task does not pass its acceptance checks yet:\n"
            f"{failure}\n\nFix the work so every check passes."
        )

    def _resolve_prompt(self, key: str, files: tuple[str, ...]) -> str:
        node = self.spec.node(key)
        return (
            f"{agent_prompt(node, self.runner.state.outputs)}\n\n"
            "Your work conflicts with what the other steps of the plan merged meanwhile. The "
            "plan's integration branch is being merged into your worktree and these files hold "
            f"conflict markers: {', '.join(files)}. Resolve them so both changes survive and no "
            "marker is left."
        )

    # -- where a node runs --------------------------------------------------------------------

    async def _space_for(self, key: str) -> str | None:
        if not self.parallel:
            return self.runner._space_for(self.spec, key, self.run_info)
        known = self._info("node_spaces").get(key)
        if known and self.ws.store.space(str(known)) is not None:
            return str(known)
        space = await asyncio.to_thread(self._make_node_space, key)
        self._info("node_spaces")[key] = space.id
        self._save()
        return space.id

    def _make_node_space(self, key: str) -> Space:
        plan_space = self._plan_space()
        name = f"{plan_space.name} · {key} [{self.pipeline_id[-6:]}]"
        existing = self.ws.store.find_space(name)
        if existing is not None:
            # Made before a crash cut the run before it was recorded: it is this node's.
            return existing
        base = integration.head(plan_space.worktree)
        return self.ws.create_space(
            name,
            mode=DISPATCH_DEFAULT_MODE,
            autonomy=plan_space.autonomy,
            transport=plan_space.transport,
            operator=False,
            start_point=base,
        )

    # -- the merge queue ----------------------------------------------------------------------

    def _begin_resolution(self, space_id: str) -> tuple[str, ...]:
        node_space = self.ws.store.space(space_id)
        if node_space is None:
            return ()
        integration.commit_all(node_space.worktree, "Work before resolving the merge")
        target = integration.head(self._plan_space().worktree)
        return integration.start_resolution(node_space.worktree, target)

    async def _merge(self, key: str, node_space: Space) -> None:
        async with self.merge_lock:
            outcome = await asyncio.to_thread(self._merge_now, key, node_space)
        if outcome.commit is None:
            self._info("conflicts")[key] = list(outcome.conflicts)
            self._save()
            raise NodeFailed(
                f"merge conflict in {', '.join(outcome.conflicts)}",
                hold={"reason": "conflict", "files": list(outcome.conflicts)},
            )
        self._info("conflicts").pop(key, None)
        self._info("merged")[key] = outcome.commit
        self._save()

    def _merge_now(self, key: str, node_space: Space) -> integration.MergeOutcome:
        node = self.spec.node(key)
        message = f"Plan step {key}: {node.title}"
        tree = node_space.worktree
        left = integration.has_conflict_markers(tree, tuple(self._info("conflicts").get(key) or ()))
        if left:
            return integration.MergeOutcome(None, tuple(left))
        integration.finish_resolution(tree, message)
        return integration.merge_into(
            self._plan_space().worktree, integration.head(tree), f"Merge plan step {key}: {node.title}"
        )

    # -- a turn -------------------------------------------------------------------------------

    def _script_for(self, key: str, fresh_share: bool) -> list[Any] | None:
        script = self.run_info.get("script")
        if not isinstance(script, list):
            return None
        if fresh_share:
            # A fix or resolve turn takes the next turn of what is left after the nodes' shares,
            # in the order such turns start (the allocation is saved before the turn runs).
            begin = int(self.run_info.get("leftover", len(script)))
            end = script_share(script, begin)
            self.run_info["leftover"] = end
            self._save()
            return script[begin:end]
        share = self._info("shares").get(key)
        if isinstance(share, list) and len(share) == 2:
            return script[int(share[0]) : int(share[1])]
        return script[int(self.run_info.get("cursor", 0)) :]

    async def _turn(
        self, key: str, space_id: str | None, message: str, *, fresh_share: bool
    ) -> tuple[NodeResult | None, str]:
        """Run (or continue) the node's turn; charge its usage. Returns an early result when the
        node cannot go on now (waiting for the operator, stopped by the budget), else its text."""
        runner, run_info, spec = self.runner, self.run_info, self.spec
        paused_turn = self._info("paused_turns").pop(key, None)
        budget_hit: list[str] = []

        def budget_check(tokens: int, usd: float) -> str | None:
            # Checked before each model call after the first of the node's run: the node finishes
            # the call it is in, then stops, and the pipeline pauses for the operator.
            state = runner.state
            over = over_budget(spec.budget, state.tokens_used + tokens, state.usd_used + usd)
            if over:
                budget_hit.append(over)
                return f"pipeline budget reached ({over}); the pipeline waits for the operator"
            return None

        node = spec.node(key)
        script = None if paused_turn is not None else self._script_for(key, fresh_share)
        req = RunRequest(
            message=message,
            space_ref=space_id,
            provider=run_info.get("provider"),
            script=script,
            author=str(node.body.get("agent_id") or node.body.get("role") or "agent"),
            budget_check=budget_check if spec.budget is not None else None,
            prompt_from=_step_source(node),
        )
        # The node's turn id is recorded as soon as the turn exists, so a crash mid-turn leaves
        # a trail the recovery can follow.
        turn_seen: list[str] = []

        def on_event(event: TurnEvent) -> None:
            if not turn_seen and isinstance(event, TurnStarted):
                turn_seen.append(event.turn)
                self._info("node_turns")[key] = event.turn
                self._save()
            runner.step_event(space_id, event)
            if isinstance(event, TurnStarted):
                runner.turn_running(key, True)  # a Stop asked for during its set-up lands now
            elif isinstance(event, TurnEnded):
                runner.turn_running(key, False)

        try:
            if paused_turn is not None:
                # A node the budget stopped, or a crash cut, continues its own turn.
                turn_seen.append(paused_turn)
                ended: TurnEnded = await runner.harness.resume(
                    paused_turn, on_event, budget_check=req.budget_check
                )
            else:
                ended = await runner.harness.run(req, on_event)
        except (HarnessError, WorkspaceError) as exc:
            raise NodeFailed(str(exc)) from None
        self._info("node_turns")[key] = ended.turn
        total_tokens = int(ended.usage.get("input_tokens", 0)) + int(ended.usage.get("output_tokens", 0))
        total_usd = float(ended.usage.get("cost_usd", 0.0))
        # A turn's usage is cumulative over its runs; what a paused run already billed is not
        # billed again.
        billed = self._info("billed").get(key, [0, 0.0])
        tokens, usd = max(0, total_tokens - billed[0]), max(0.0, total_usd - billed[1])
        if ended.status is TurnStatus.INTERRUPTED and budget_hit:
            self._info("billed")[key] = [total_tokens, total_usd]
            self._info("paused_turns")[key] = ended.turn
            self._save()
            return NodeResult("", tokens, usd, budget_paused=True), ""
        self._info("billed").pop(key, None)
        if ended.status is TurnStatus.AWAITING_APPROVAL:
            self._save()
            return NodeResult("", waiting_turn=ended.turn), ""
        runner.state = runner._charge(self.pipeline_id, spec, runner.state, key, tokens, usd, run_info)
        if ended.status is not TurnStatus.COMPLETED:
            raise NodeFailed(ended.error or f"the agent turn ended {ended.status.value}")
        return None, runner.final_text(ended.turn)


def _step_source(node: Any) -> str:
    """Where a step's task came from, as its note in the conversation says: the step, and the role
    working it (an orchestration's ticket), so a project room says which role wrote what follows."""
    title = node.body.get("title") or node.title
    role = node.body.get("role")
    return f"Step “{title}” · role {role}" if role else f"Step “{title}”"
