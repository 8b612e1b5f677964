"""The seam between the harness and whatever drives a turn: the built-in loop (``loop.py``),
Claude Code (``transports/claude_code.py``), or a transport still to come, which is one more
module implementing ``TurnDriver`` named by its declaration in ``core.transports``.

The harness does what every turn needs — the claim (the turn row), the operator's message, the
mode read at the start of every run, the resume claim — and hands the run to the driver. The
driver decides what happens; every write goes through the turn's ``TurnRecorder``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from control_center.core.events import TurnEnded
from control_center.core.profiles import CapabilityProfile
from control_center.core.records import Space, Turn
from control_center.harness.recorder import TurnRecorder

if TYPE_CHECKING:
    from control_center.harness.calls import CallPath
    from control_center.harness.context import ConversationHistory
    from control_center.harness.providers.base import ModelProvider, ModelSettings
    from control_center.harness.settings import AppSettings
    from control_center.workspace import Workspace

#: A pipeline's budget: called before each model call after the first of a run with the tokens and
#: USD this run has used; a reason ends the turn ``interrupted`` (resumable).
BudgetCheck = Callable[[int, float], "str | None"]


class DriverHost(Protocol):
    """What a driver may use of the harness that runs it."""

    ws: Workspace
    settings: AppSettings
    provider_factory: Callable[..., ModelProvider]

    @property
    def calls(self) -> CallPath: ...

    def history_of(self, conversation_id: str) -> ConversationHistory: ...


@dataclass(frozen=True)
class TurnRun:
    """One run of a turn (its first, or a resume), as the harness hands it to the driver."""

    turn: Turn
    space: Space | None
    profile: CapabilityProfile
    recorder: TurnRecorder
    #: What this run tells the model: the operator's message; on a resume, what the driver's own
    #: resume needs (the built-in loop continues its stored history and ignores it).
    message: str
    resumed: bool = False
    budget_check: BudgetCheck | None = None


class TurnDriver(Protocol):
    """Drives the runs of one turn. Built per run with the run's model settings and script."""

    @property
    def takes_images(self) -> bool:
        """Whether the operator's message may carry image blocks on this transport and model."""
        ...

    def check_start(self) -> None:
        """Raise ``HarnessError`` when a new turn cannot start here: called before anything is
        stored, so a run that cannot start leaves nothing behind."""
        ...

    def check_resume(self, turn: Turn) -> None:
        """Raise ``HarnessError`` when ``turn`` cannot be resumed by this driver (before the
        resume claim, so a refusal writes nothing)."""
        ...

    async def drive(self, run: TurnRun) -> TurnEnded:
        """Run the turn until it ends, waits for the operator or is interrupted; the last event
        emitted is the returned ``TurnEnded``."""
        ...


#: Builds a transport's driver for one run: (host, the run's model settings, the script of a
#: scripted provider or None).
DriverFactory = Callable[["DriverHost", "ModelSettings", "list[Any] | None"], TurnDriver]


def contract_nudge(profile: CapabilityProfile, *, delivered: bool, nudged: bool) -> str | None:
    """The completion contract (SPEC §4): the one reminder a run gets when it ends without its
    mode's output verb, or None when it is not due (delivered, already nudged, no contract)."""
    if not profile.has_completion_contract or delivered or nudged or not profile.nudge:
        return None
    return profile.nudge
