"""A new tool's declaration for the seam test: its name, tier, effect, schema and traits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from control_center.core.modes import Effect, Tier
from control_center.core.tools import Access, Bound, PathArg, Preview, ToolSpec


def _shouted(_old: str, args: Mapping[str, Any]) -> str:
    return str(args.get("text", "")).upper() + "\n"


SHOUT_FILE = ToolSpec(
    "shout_file",
    Tier.WRITE,
    frozenset({Effect.WORKTREE_WRITE}),
    "Write a file of the worktree in capitals.",
    {
        "type": "object",
        "properties": {"target": {"type": "string"}, "text": {"type": "string"}},
        "required": ["target", "text"],
    },
    implementation="tests.harness.seam_tool.shout:shout_file",
    paths=(PathArg("target", Access.WRITE),),
    preview=Preview("Shout into", "target", after=_shouted, in_diff=("text",)),
    bound=Bound(limit_s=5.0, max_output_chars=40),
)
