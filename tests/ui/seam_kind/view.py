"""How the Inbox shows the new kind: its icon, buttons, text field and detail renderer."""

from __future__ import annotations

import html

from control_center.core.approvals import Approval, ApprovalKind
from control_center.ui.inbox_kinds import GRANT, REJECT, Detail, InboxKind


def _render(a: Approval) -> Detail:
    return Detail(f"<p>The agent asks you to look at <b>{html.escape(str(a.payload['look_at']))}</b>.</p>")


LOOKOUT_VIEW = InboxKind(ApprovalKind("lookout"), "inbox", (GRANT, REJECT), "Why not (recorded)", _render)
