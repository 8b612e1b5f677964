"""Capability profiles: everything a mode guarantees, declared once (SPEC §3).

Every enforcement layer (surface, gate, guardrail, worktree posture, prompt block, completion
contract) is a projection of these values, computed in :mod:`control_center.core.surface`.
Nothing else in the code base may branch on a mode's name."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from control_center.core.modes import Effect, Mode, Tier, WorktreePosture

#: Effect classes denied by every read-only mode: the world-changing ones. Network egress and
#: secret access stay allowed on purpose: research is the point of a read-only mode.
WORLD_CHANGING_EFFECTS: frozenset[Effect] = frozenset(
    {
        Effect.FILE_DELETE,
        Effect.WORKTREE_WRITE,
        Effect.OUTSIDE_WRITE,
        Effect.COMMIT,
        Effect.PUSH,
        Effect.PR_CREATE,
        Effect.PR_PUBLISH,
        Effect.VENDOR_SYNC,
        Effect.PACKAGE_INSTALL,
        Effect.PROCESS_SPAWN,
        Effect.WORKSPACE_MUTATION,
        Effect.ENCLOSURE_CONTROL,
    }
)

#: Pinned onto every surface and exempt from the approval wrapper: how a run reaches the operator.
ASK_USER = "ask_user"

#: Verbs that belong to one mode and appear on no other mode's surface.
MODE_VERBS: frozenset[str] = frozenset(
    {
        "submit_plan",
        "exit_plan_mode",
        "plan_respond",
        "propose_orchestration",
        "report_progress",
        "add_review_node",
        "finalize_review",
        "confirm_review_node",
    }
)


@dataclass(frozen=True)
class GuidanceLine:
    """A sentence of mode guidance, shown only when every tool it names is on the surface,
    so the prompt never names a tool the model cannot call."""

    text: str
    names: frozenset[str] = frozenset()


def _line(text: str, *names: str) -> GuidanceLine:
    return GuidanceLine(text, frozenset(names))


@dataclass(frozen=True)
class CapabilityProfile:
    mode: Mode
    label: str
    #: Whether the operator may pick this mode (composer dropdown, CLI set-mode).
    operator_selectable: bool
    #: Whether a pipeline node's ``extras['mode']`` may pin a room to this mode.
    pipeline_pinnable: bool
    max_tier: Tier
    #: Restricts the write tier and above; ``None`` means no allowlist.
    allowlist: frozenset[str] | None
    denylist: frozenset[str]
    denied_effects: frozenset[Effect]
    #: The verbs of this mode (see MODE_VERBS); they are on this surface only.
    own_verbs: frozenset[str]
    #: What a run must call to have delivered something (completion contract), or None.
    output_verb: str | None
    posture: WorktreePosture
    guidance: tuple[GuidanceLine, ...]
    #: A hint inviting clarifying questions, dropped at the ``yolo`` autonomy level.
    clarifying_hint: str | None
    #: The one reminder injected when a run ends without its output verb.
    nudge: str | None
    #: Turn limits per run (defaults; the operator's per-mode settings override them): model calls
    #: and total tokens. Reaching one ends the turn ``interrupted``; ``resume`` gives a fresh allowance.
    max_model_calls: int
    max_turn_tokens: int
    #: The most extended-thinking tokens a turn of this mode may ask for, whatever the settings say.
    max_thinking_budget: int = 16_000
    #: Seconds an agent must wait after its last stored deliverable before delivering again
    #: (orchestration re-proposals); 0 means no cooldown.
    redelivery_cooldown_s: float = 0.0

    @property
    def pinned(self) -> frozenset[str]:
        """Tools that bypass the filter, the approval gate and the guardrail."""
        verbs = {ASK_USER}
        if self.output_verb:
            verbs.add(self.output_verb)
        return frozenset(verbs)

    @property
    def read_only(self) -> bool:
        return self.posture is WorktreePosture.READ_ONLY

    @property
    def has_completion_contract(self) -> bool:
        return self.output_verb is not None


_CHAT = CapabilityProfile(
    mode=Mode.CHAT,
    label="Agent",
    operator_selectable=True,
    pipeline_pinnable=True,
    max_tier=Tier.EXECUTE,
    allowlist=None,
    denylist=frozenset(),
    denied_effects=frozenset(),
    own_verbs=frozenset({"report_progress"}),
    output_verb=None,
    posture=WorktreePosture.WRITABLE,
    guidance=(
        _line(
            "You are working in Agent mode: make the change the operator asks for, directly in the "
            "worktree. Read before you edit, keep edits small and explain what you changed."
        ),
        _line(
            "Use report_progress for a progress note that should not end your turn; never call it "
            "twice in a row.",
            "report_progress",
        ),
        _line("When the work is done, answer with a short summary."),
    ),
    clarifying_hint=None,
    nudge=None,
    max_model_calls=40,
    max_turn_tokens=400_000,
    max_thinking_budget=32_000,
)

_PLAN = CapabilityProfile(
    mode=Mode.PLAN,
    label="Plan",
    operator_selectable=True,
    pipeline_pinnable=True,
    max_tier=Tier.READ,
    allowlist=None,
    denylist=frozenset(),
    denied_effects=WORLD_CHANGING_EFFECTS,
    own_verbs=frozenset({"submit_plan", "exit_plan_mode", "plan_respond"}),
    output_verb="submit_plan",
    posture=WorktreePosture.READ_ONLY,
    guidance=(
        _line(
            "You are in Plan mode. The worktree is read-only: research the code, then deliver exactly "
            "one thing, a plan submitted with submit_plan: a goal and a dependency graph of nodes "
            "(key, title, description, depends_on). Nothing counts as a plan until submit_plan "
            "succeeds.",
            "submit_plan",
        ),
        _line(
            "Use plan_respond to talk with the operator; set needs_more_exploration to true to keep "
            "exploring.",
            "plan_respond",
        ),
        _line(
            "exit_plan_mode only asks the operator for permission to leave plan mode; it delivers nothing.",
            "exit_plan_mode",
        ),
    ),
    clarifying_hint=(
        "You may ask the operator clarifying questions with ask_user before you commit to a plan."
    ),
    nudge=(
        "No plan exists yet: a plan exists only once submit_plan succeeds. If this task needs a plan, "
        "call submit_plan now with the goal and the dependency graph. If no plan is needed here (for "
        "example the operator only asked a question), say so plainly and end your turn."
    ),
    max_model_calls=40,
    max_turn_tokens=400_000,
)

_REVIEW = CapabilityProfile(
    mode=Mode.REVIEW,
    label="Review",
    operator_selectable=False,
    pipeline_pinnable=True,
    max_tier=Tier.WRITE,
    allowlist=frozenset(
        {"add_review_node", "finalize_review", "confirm_review_node", "create_ticket", "post_message"}
    ),
    denylist=frozenset(),
    denied_effects=WORLD_CHANGING_EFFECTS,
    own_verbs=frozenset({"add_review_node", "finalize_review", "confirm_review_node"}),
    output_verb=None,
    posture=WorktreePosture.READ_ONLY,
    guidance=(
        _line(
            "You are in Review mode on a pull request. The worktree is read-only and sits at the head branch."
        ),
        _line("Use git_diff with the base and head refs to read the change.", "git_diff"),
        _line(
            "Record each finding with add_review_node (kind, priority P0 blocks release .. P3 nice to "
            "have, confidence 0..1, title, an anchor for file and lines when it has one).",
            "add_review_node",
        ),
        _line(
            "When the review is complete, call finalize_review with ship, hold or block; the system "
            "then runs the review's gates, which can only make the verdict stricter.",
            "finalize_review",
        ),
        _line(
            "Confirm another reviewer's finding with confirm_review_node, never your own.",
            "confirm_review_node",
        ),
        _line("If you are here for another task, you need not record findings."),
    ),
    clarifying_hint=None,
    nudge=None,
    max_model_calls=40,
    max_turn_tokens=400_000,
)

_ORCHESTRATE = CapabilityProfile(
    mode=Mode.ORCHESTRATE,
    label="Orchestrate",
    operator_selectable=True,
    pipeline_pinnable=False,
    max_tier=Tier.READ,
    allowlist=None,
    denylist=frozenset(),
    denied_effects=WORLD_CHANGING_EFFECTS,
    own_verbs=frozenset({"propose_orchestration"}),
    output_verb="propose_orchestration",
    posture=WorktreePosture.READ_ONLY,
    guidance=(
        _line(
            "You are in Orchestrate mode. The worktree is read-only: research the goal, then propose a "
            "team with propose_orchestration: roles with instructions, a tree of tickets each owned by "
            "a role, a synthesis step and a budget.",
            "propose_orchestration",
        ),
        _line(
            "Nothing runs until the operator approves the proposal. Batch your changes: a new proposal "
            "within two minutes of the last one is refused."
        ),
    ),
    clarifying_hint=None,
    nudge=(
        "No orchestration has been proposed yet: a proposal exists only once propose_orchestration "
        "succeeds. If this goal needs a team, call it now. If no orchestration is needed here, say so "
        "plainly and end your turn."
    ),
    max_model_calls=40,
    max_turn_tokens=400_000,
    redelivery_cooldown_s=120.0,
)

PROFILES: MappingProxyType[Mode, CapabilityProfile] = MappingProxyType(
    {p.mode: p for p in (_CHAT, _PLAN, _REVIEW, _ORCHESTRATE)}
)

#: The modes an operator may choose, in the order the composer offers them.
OPERATOR_MODES: tuple[Mode, ...] = tuple(p.mode for p in PROFILES.values() if p.operator_selectable)


#: The mode of a dispatch with no space (one-shot runs, CLI calls, a space of another workspace).
DISPATCH_DEFAULT_MODE = Mode.CHAT
#: The mode the system sets on a space opened for a pull request.
PR_SPACE_MODE = Mode.REVIEW


def profile_for(mode: Mode) -> CapabilityProfile:
    return PROFILES[mode]


def no_wider(mode: Mode, than: Mode) -> bool:
    """Whether ``mode`` allows nothing ``than`` does not: no higher tier, every effect ``than``
    denies denied too, and no writable worktree where ``than`` keeps it read-only. What a
    repository's custom command may switch a space to on its own."""
    new, old = profile_for(mode), profile_for(than)
    if new.max_tier > old.max_tier or not old.denied_effects <= new.denied_effects:
        return False
    if old.posture is WorktreePosture.READ_ONLY and new.posture is not WorktreePosture.READ_ONLY:
        return False
    if old.allowlist is not None and (new.allowlist is None or not new.allowlist <= old.allowlist):
        return False
    return old.denylist <= new.denylist
