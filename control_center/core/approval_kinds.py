"""Every Inbox kind's facts, declared once (SPEC §4, §10): its name and label, who may decide it,
which decisions it takes, what applies when nobody decides before its time-out, whether a newer
version supersedes it, and the payload it carries.

The store (supersession), the decision path (who, which action), the expiry sweep, ``approvals
list`` and the Inbox read this table. What a decision sets in motion is the kind's handler
(``pipeline/kind_handlers.py``); how the Inbox renders its detail is declared beside the kind in
``ui/inbox_kinds.py``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from control_center.core.approvals import ApprovalKind
from control_center.core.schema import validate


class Action(StrEnum):
    """A decision an Inbox item may take."""

    GRANT = "grant"
    REJECT = "reject"
    #: A question's answer (its text is the decision).
    ANSWER = "answer"
    #: A plan step's grant that skips the step instead of retrying it.
    SKIP = "skip"


@dataclass(frozen=True)
class KindSpec:
    #: Its name (the built-in kinds' are ``ApprovalKind`` members; a declared name is read back
    #: from the store as an ``ApprovalKind`` too).
    name: str
    label: str
    #: Only the operator decides it: never an agent-reachable path (MCP). An agent can propose
    #: a plan but never approve its own.
    operator_only: bool
    actions: tuple[Action, ...]
    #: What applies when it expires (nobody decided within ``approval_timeout.<kind>``).
    on_expiry: str
    #: The payload it carries (checked where an item is read for the operator).
    payload_schema: Mapping[str, Any] = field(compare=False)
    #: ``module:Class`` of its decision handler (``pipeline.decisions.KindHandler``): what a
    #: decision sets in motion, and its safe default on expiry.
    handler: str = ""
    #: ``module:NAME`` of how the Inbox shows it (``ui.inbox_kinds.InboxKind``: icon, buttons,
    #: detail renderer).
    presentation: str = ""
    #: A newer version of the same thing in the same space supersedes a pending one.
    versioned: bool = False
    #: Its row in Settings ▸ approvals that expire (the label, when that says more).
    timeout_label: str = ""
    #: Its Inbox line from its payload (the built-in kinds' are in ``core.approval_summary``).
    summarize: Callable[[dict[str, Any]], str] | None = field(default=None, compare=False)

    def payload_problem(self, payload: Any) -> str | None:
        """One line saying why ``payload`` is not this kind's, or None."""
        if not isinstance(payload, dict):
            return f"a {self.label.lower()} item carries no data"
        problems = validate(self.payload_schema, payload)
        return f"a {self.label.lower()} item's data is damaged: {'; '.join(problems)}" if problems else None


def _payload(*required: str, **types: str) -> Mapping[str, Any]:
    properties = {key: {"type": kind} for key, kind in types.items()}
    return MappingProxyType(
        {"type": "object", "properties": properties, "required": list(required), "additionalProperties": True}
    )


_DECIDE = (Action.GRANT, Action.REJECT)

_DECLARED = (
    KindSpec(
        ApprovalKind.TOOL_CALL,
        "Tool call",
        operator_only=False,
        actions=_DECIDE,
        on_expiry="denied: the call does not run",
        payload_schema=_payload("tool", "input", tool="string", input="object", call_id="string"),
        handler="control_center.pipeline.decisions:ToolCallHandler",
        presentation="control_center.ui.inbox_kinds:TOOL_CALL_VIEW",
        timeout_label="Tool call",
    ),
    KindSpec(
        ApprovalKind.PLAN_EXIT,
        "Leave plan mode",
        operator_only=False,
        actions=_DECIDE,
        on_expiry="denied: the next exit_plan_mode call asks afresh",
        payload_schema=_payload(summary="string"),
        handler="control_center.pipeline.decisions:PlanExitHandler",
        presentation="control_center.ui.inbox_kinds:PLAN_EXIT_VIEW",
        timeout_label="Leaving plan mode",
    ),
    KindSpec(
        ApprovalKind.PLAN,
        "Plan",
        operator_only=True,
        actions=_DECIDE,
        on_expiry="stays unapproved (it can still be rejected or re-proposed)",
        payload_schema=_payload(plan_id="string", goal="string", nodes="array"),
        versioned=True,
        handler="control_center.pipeline.decisions:PlanHandler",
        presentation="control_center.ui.inbox_kinds:PLAN_VIEW",
        timeout_label="Plan",
    ),
    KindSpec(
        ApprovalKind.ORCHESTRATION,
        "Orchestration",
        operator_only=True,
        actions=_DECIDE,
        on_expiry="stays unapproved (it can still be rejected or re-proposed)",
        payload_schema=_payload(proposal_id="string", roles="array", tickets="array"),
        versioned=True,
        handler="control_center.pipeline.decisions:OrchestrationHandler",
        presentation="control_center.ui.inbox_kinds:ORCHESTRATION_VIEW",
        timeout_label="Orchestration proposal",
    ),
    KindSpec(
        ApprovalKind.QUESTION,
        "Question",
        operator_only=True,
        actions=(Action.ANSWER,),
        on_expiry="no answer: the agent goes on without one",
        payload_schema=_payload("question", question="string", call_id="string"),
        handler="control_center.pipeline.decisions:QuestionHandler",
        presentation="control_center.ui.inbox_kinds:QUESTION_VIEW",
        timeout_label="Agent's question",
    ),
    KindSpec(
        ApprovalKind.BUDGET,
        "Budget",
        operator_only=True,
        actions=_DECIDE,
        on_expiry="not raised: the rest of its pipeline is cancelled",
        payload_schema=_payload(pipeline_id="string"),
        handler="control_center.pipeline.decisions:BudgetHandler",
        presentation="control_center.ui.inbox_kinds:BUDGET_VIEW",
        timeout_label="Paused budget",
    ),
    KindSpec(
        ApprovalKind.STEP,
        "Plan step",
        operator_only=True,
        actions=(Action.GRANT, Action.SKIP, Action.REJECT),
        on_expiry="the rest of the plan is cancelled",
        payload_schema=_payload(pipeline_id="string", node="string"),
        handler="control_center.pipeline.decisions:StepHandler",
        presentation="control_center.ui.inbox_kinds:STEP_VIEW",
        timeout_label="Plan step that needs you",
    ),
)

#: Every Inbox kind, in display order. Read it through ``kind_spec()`` / ``find_kind()`` at
#: call time.
KINDS: Mapping[str, KindSpec] = MappingProxyType({spec.name: spec for spec in _DECLARED})


def find_kind(name: str) -> KindSpec | None:
    return KINDS.get(name)


def kind_spec(kind: str) -> KindSpec:
    return KINDS[kind]
