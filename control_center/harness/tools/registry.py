"""Each tool's implementation, found from its declaration (``ToolSpec.implementation``,
``module:function``) and imported on first use: no table of names here."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from control_center.core.tools import ToolSpec


@functools.cache
def _load(ref: str) -> Callable[..., Any]:
    module, _, attr = ref.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return fn


def implementation(spec: ToolSpec) -> Callable[..., Any] | None:
    """The function that runs ``spec``'s calls (a tool: ``fn(ToolContext, args[, workspace])``;
    a verb: ``async fn(VerbContext, args)``), or None when it declares none."""
    return _load(spec.implementation) if spec.implementation else None
