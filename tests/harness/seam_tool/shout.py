"""The new tool's implementation for the seam test: it writes the text in capitals and answers
with far more than its declaration lets the model see."""

from __future__ import annotations

from typing import Any

from control_center.harness.tools.base import ToolContext, ToolOutput
from control_center.harness.tools.paths import resolve_in_worktree


def shout_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    path = resolve_in_worktree(ctx.worktree, str(args["target"]), must_exist=False)
    text = str(args["text"]).upper() + "\n"
    path.write_text(text)
    return ToolOutput("wrote " + text * 50)
