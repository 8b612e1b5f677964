"""A small validator for the JSON-schema subset the tool catalogue uses.

It returns human-readable problems (for the model to fix its call) instead of raising."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from control_center.core.json_shape import value_nesting

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
}


#: How deep a tool's input may nest: the catalogue's inputs nest a level or two, tools from
#: elsewhere a few more; far past it an input is an attack on whoever walks it (a parser, the
#: store's encoder), not a call.
MAX_TOOL_INPUT_DEPTH = 64


def validate(schema: Mapping[str, Any], value: Any, where: str = "input") -> list[str]:
    if value_nesting(value) > MAX_TOOL_INPUT_DEPTH:
        return [f"{where} is nested deeper than {MAX_TOOL_INPUT_DEPTH} levels"]
    problems: list[str] = []
    _check(schema, value, where, problems)
    return problems


def _check(schema: Mapping[str, Any], value: Any, where: str, out: list[str]) -> None:
    expected = schema.get("type")
    if expected is not None:
        ok = isinstance(value, _TYPES[expected])
        if expected in ("integer", "number") and isinstance(value, bool):
            ok = False
        if not ok:
            out.append(f"{where} must be {_article(expected)}, got {_describe(value)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        out.append(f"{where} must be one of {allowed}, got {value!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{where} must be at least {schema['minimum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            out.append(f"{where} must be greater than {schema['exclusiveMinimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                out.append(f"{where} is missing required field {key!r}")
        props: Mapping[str, Any] = schema.get("properties", {})
        for key, sub in props.items():
            if key in value:
                _check(sub, value[key], f"{where}.{key}", out)
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{where} must have at least {schema['minItems']} item(s)")
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(value):
                _check(items, item, f"{where}[{i}]", out)


def _article(type_name: str) -> str:
    return ("an " if type_name[0] in "aeiou" else "a ") + type_name


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Sequence):
        return "an array"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
