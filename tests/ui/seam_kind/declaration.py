"""A new Inbox kind's declaration for the seam test: the agent asks the operator to look at
something; a grant acknowledges it, a reject (or its expiry) dismisses it."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from control_center.core.approval_kinds import Action, KindSpec


def _line(payload: dict[str, Any]) -> str:
    return f"Look at {payload.get('look_at', '?')}"


LOOKOUT = KindSpec(
    "lookout",
    "Lookout",
    operator_only=True,
    actions=(Action.GRANT, Action.REJECT),
    on_expiry="dismissed: nobody looked",
    payload_schema=MappingProxyType(
        {"type": "object", "properties": {"look_at": {"type": "string"}}, "required": ["look_at"]}
    ),
    handler="tests.ui.seam_kind.handler:LookoutHandler",
    presentation="tests.ui.seam_kind.view:LOOKOUT_VIEW",
    summarize=_line,
)
