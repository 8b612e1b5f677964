"""The embedded default model (SPEC §10, §11): replays a JSON file of assistant turns.

Each model call takes the next element of the script; the text is streamed in small chunks so
the UI shows streaming exactly as it would for a real model.

An element is a list of content blocks, or a branch on how the previous tool call went, so a
scripted reply never claims what did not happen (an edit the operator rejected, a failing test)::

    {"on_tool_result": {"ok": [blocks], "rejected": [blocks], "error": [blocks]},
     "skip": {"rejected": 2}}

``rejected``: the operator rejected the call; ``error``: it failed otherwise; ``ok``: neither (and
the fallback for a missing outcome). ``skip`` moves past the next N elements on that outcome (the
steps that only make sense after the call worked).
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from .base import (
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    ProviderInputs,
    ProviderSpec,
    StreamItem,
    TextChunk,
)

EXHAUSTED_TEXT = "(scripted model) The script is exhausted: there are no more scripted responses."
#: How a previous tool call can have gone, for ``on_tool_result`` branches.
OUTCOMES = ("ok", "rejected", "error")
#: The start of the result a rejected call gets (harness.suspensions).
REJECTED_PREFIX = "The operator rejected this call"


def validate_script(data: Any) -> list[list[dict[str, Any]]]:
    """Check a script's shape; raise ValueError naming the offending element index."""
    if not isinstance(data, list):
        raise ValueError(f"a script must be a JSON list of responses, got {type(data).__name__}")
    for i, element in enumerate(data):
        if isinstance(element, dict):
            _validate_branch(element, f"script element {i}")
            continue
        if not isinstance(element, list):
            raise ValueError(
                f"script element {i}: must be a list of content blocks or an on_tool_result branch, "
                f"got {type(element).__name__}"
            )
        for j, block in enumerate(element):
            _validate_block(block, f"script element {i}, block {j}")
    return data


def _validate_branch(element: dict[str, Any], where: str) -> None:
    branches = element.get("on_tool_result")
    if not isinstance(branches, dict) or "ok" not in branches:
        raise ValueError(f'{where}: a branch needs "on_tool_result" with at least an "ok" list of blocks')
    for outcome, blocks in branches.items():
        if outcome not in OUTCOMES or not isinstance(blocks, list):
            raise ValueError(
                f"{where}: on_tool_result.{outcome} must be one of {', '.join(OUTCOMES)} with a list"
            )
        for j, block in enumerate(blocks):
            _validate_block(block, f"{where}, {outcome} block {j}")
    skip = element.get("skip", {})
    if not isinstance(skip, dict) or any(
        k not in OUTCOMES or not isinstance(v, int) or isinstance(v, bool) or v < 0 for k, v in skip.items()
    ):
        raise ValueError(f'{where}: "skip" maps an outcome to a number of elements (>= 0)')
    unknown = set(element) - {"on_tool_result", "skip"}
    if unknown:
        raise ValueError(f"{where}: unknown branch keys {sorted(unknown)}")


def last_tool_outcome(messages: list[dict[str, Any]]) -> str:
    """How the tool calls answered in the newest user message went: "rejected" when the operator
    rejected one, "error" when one failed, else "ok"."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        results = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        if any(b.get("is_error") and _text_of(b.get("content")).startswith(REJECTED_PREFIX) for b in results):
            return "rejected"
        if any(b.get("is_error") for b in results):
            return "error"
        return "ok"
    return "ok"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _validate_block(block: Any, where: str) -> None:
    if not isinstance(block, dict):
        raise ValueError(f"{where}: a content block must be an object, got {type(block).__name__}")
    kind = block.get("type")
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise ValueError(f'{where}: a "text" block needs a string "text"')
    elif kind == "tool_use":
        name = block.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f'{where}: a "tool_use" block needs a non-empty string "name"')
        if not isinstance(block.get("input"), dict):
            raise ValueError(f'{where}: a "tool_use" block needs an object "input"')
        if "id" in block and (not isinstance(block["id"], str) or not block["id"]):
            raise ValueError(f'{where}: a "tool_use" block\'s "id" must be a non-empty string')
    else:
        raise ValueError(f'{where}: unknown block type {kind!r} (expected "text" or "tool_use")')


def load_script(path: str | Path) -> list[list[dict[str, Any]]]:
    """Read and validate a script file; ValueError (with a clear message) when it is not one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read script {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"script {path} is not valid JSON: {exc}") from exc
    try:
        return validate_script(data)
    except ValueError as exc:
        raise ValueError(f"script {path}: {exc}") from exc


def _estimate_tokens(obj: Any) -> int:
    # A rough chars/4 estimate: enough for budgets and the usage display, no tokenizer needed.
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    return max(1, len(text) // 4) if text else 0


class ScriptedProvider:
    """A :class:`~.base.ModelProvider` that replays ``script`` from element ``start``."""

    name = "scripted"

    def __init__(
        self,
        script: list[list[dict[str, Any]]],
        start: int = 0,
        chunk_chars: int = 12,
        chunk_delay_s: float = 0.0,
    ) -> None:
        self._script = validate_script(script)
        if start < 0:
            raise ValueError(f"start must be >= 0, got {start}")
        self._cursor = start
        self._chunk_chars = max(1, chunk_chars)
        self._chunk_delay_s = chunk_delay_s

    @property
    def cursor(self) -> int:
        """Index of the next script element (persisted so ``resume`` continues there)."""
        return self._cursor

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        index: int | None = self._cursor
        if self._cursor < len(self._script):
            # Copy so assigning ids never mutates the caller's script.
            element: Any = copy.deepcopy(self._script[self._cursor])
            self._cursor += 1
            if isinstance(element, dict):
                outcome = last_tool_outcome(request.messages)
                branches = element["on_tool_result"]
                content = branches.get(outcome, branches["ok"])
                self._cursor += int(element.get("skip", {}).get(outcome, 0))
            else:
                content = element
        else:
            index = None
            content = [{"type": "text", "text": EXHAUSTED_TEXT}]

        for block in content:
            if block["type"] == "text":
                text = block["text"]
                for pos in range(0, len(text), self._chunk_chars):
                    yield TextChunk(text[pos : pos + self._chunk_chars])
                    # Even a zero delay yields to the loop, so a UI gets to paint between chunks.
                    await asyncio.sleep(self._chunk_delay_s)
            elif block["type"] == "tool_use" and not block.get("id"):
                block["id"] = f"toolu_{secrets.token_hex(12)}"

        has_tool_use = any(b["type"] == "tool_use" for b in content)
        yield ModelResponse(
            content=content,
            stop_reason="tool_use" if has_tool_use else "end_turn",
            input_tokens=_estimate_tokens(request.system) + _estimate_tokens(request.messages),
            output_tokens=_estimate_tokens(content),
            extra={"script_index": index, "exhausted": index is None},
        )


def _create(settings: ModelSettings, inputs: ProviderInputs) -> ScriptedProvider:
    if inputs.script is None:
        raise ProviderError("the scripted provider needs a script (--script FILE)")
    try:
        return ScriptedProvider(inputs.script, start=inputs.start)
    except ValueError as exc:
        raise ProviderError(f"invalid script: {exc}") from None


PROVIDER = ProviderSpec(
    name="scripted",
    label="Scripted model (offline)",
    create=_create,
    needs_key=False,
    free=True,
    default_model="scripted",
)
