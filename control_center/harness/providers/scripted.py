"""The embedded default model (SPEC §10, §11): replays a JSON file of assistant turns.

Each model call takes the next element of the script; the text is streamed in small chunks so
the UI shows streaming exactly as it would for a real model.
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


def validate_script(data: Any) -> list[list[dict[str, Any]]]:
    """Check a script's shape; raise ValueError naming the offending element index."""
    if not isinstance(data, list):
        raise ValueError(f"a script must be a JSON list of responses, got {type(data).__name__}")
    for i, element in enumerate(data):
        if not isinstance(element, list):
            raise ValueError(
                f"script element {i}: must be a list of content blocks, got {type(element).__name__}"
            )
        for j, block in enumerate(element):
            _validate_block(block, f"script element {i}, block {j}")
    return data


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
            content = copy.deepcopy(self._script[self._cursor])
            self._cursor += 1
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
