"""How deep and how many values a JSON text holds, counted on its bytes without parsing it: a
parser recurses once per level (Python's stops with RecursionError, past ~1000) and costs tens
of bytes per value, so an untrusted text is measured before it is parsed."""

from __future__ import annotations

import re
from itertools import accumulate

# A JSON string, escapes and all (DOTALL: an escaped newline is still inside it). On a valid text
# this finds exactly the strings a parser finds; on an invalid one the parser stops at the first
# error, before anything this would have miscounted.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b"[]{},")))
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_NESTING = tuple(1 if c in b"[{" else -1 if c in b"]}" else 0 for c in range(256))


def json_structure(text: bytes | str) -> bytes:
    """The brackets and commas of a JSON text, its strings left out (what the two counts read)."""
    data = text.encode() if isinstance(text, str) else text
    return _JSON_STRING.sub(b"0", data).translate(None, _NOT_STRUCTURE)


def json_values(structure: bytes) -> int:
    """About how many values (and keys) a text's ``structure`` holds."""
    return structure.count(b",") + structure.count(b"[") + structure.count(b"{")


def json_nesting(structure: bytes) -> int:
    """How deep the arrays and objects of a text's ``structure`` nest."""
    brackets = structure.translate(None, _NOT_BRACKET)
    return max(accumulate(map(_NESTING.__getitem__, brackets)), default=0)


def value_nesting(value: object) -> int:
    """How deep a parsed value's lists and dicts nest (walked without recursion)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[object] = list(node.values())
        elif isinstance(node, list | tuple):
            children = list(node)
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest
