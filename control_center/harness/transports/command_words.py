"""The Bash check's word reader: one word node of the syntax tree becomes the :class:`Word` bash
will see (quotes, escapes, ANSI-C strings, expansions, substitutions, patterns), or a refusal
when what it becomes is only known at run time in a way that matters."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tree_sitter

from control_center.harness.transports.command_rules import Denied, dangerous_variable
from control_center.harness.transports.command_syntax import (
    _GLOB_CHARS,
    _REDIRECTS,
    Word,
    _descendants,
    _text,
)

if TYPE_CHECKING:
    from control_center.harness.transports.command_check import _Walker

# -- words ------------------------------------------------------------------------------------------

_ANSI_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


@dataclass
class _Parts:
    text: list[str] = field(default_factory=list)
    static: bool = True
    may_be_option: bool = False
    pattern: bool = False
    several: bool = False
    #: The first character is decided: an empty quote ("" or '') decides nothing, as bash
    #: joins what follows it (``""{-o,x}`` is the two words ``-o`` and ``x``).
    started: bool = False

    def literal(self, s: str) -> None:
        if s and not self.started:
            self.started = True
        self.text.append(s)

    def unknown(self, shown: str, *, splits: bool, pattern: bool = False) -> None:
        if not self.started or splits:
            self.may_be_option = True
        self.started = True
        self.static = False
        self.pattern = self.pattern or pattern
        self.several = self.several or splits or pattern
        self.text.append(shown)


class WordReader:
    """Reads one word node into a :class:`Word` (what bash will see), refusing what it cannot
    know; substitutions inside it are walked by ``walker``'s nested walkers."""

    def __init__(self, walker: _Walker) -> None:
        self.walker = walker

    def read(self, node: tree_sitter.Node, *, quoted: bool) -> Word:
        parts = _Parts()
        self._part(node, parts, quoted)
        return Word("".join(parts.text), parts.static, parts.may_be_option, parts.pattern, parts.several)

    def _part(self, node: tree_sitter.Node, parts: _Parts, quoted: bool) -> None:
        kind = node.type
        raw = _text(node)
        if kind in ("word", "number", "variable_name", "regex", "extglob_pattern") or kind == "test_operator":
            self._unquoted_literal(raw, parts)
        elif kind == "raw_string":
            parts.literal(raw[1:-1])
        elif kind == "ansi_c_string":
            decoded = _ansi_c(raw[2:-1])
            if decoded is None:
                parts.unknown(raw, splits=False)
            else:
                parts.literal(decoded)
        elif kind in ("string", "translated_string"):
            for child in node.children:
                if child.type == "string_content":
                    parts.literal(
                        re.sub(
                            r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), _text(child)
                        )
                    )
                elif child.is_named:
                    self._part(child, parts, quoted=True)
                elif child.type == "$" and kind == "string":
                    parts.literal("$")
                elif child.type not in ('"', '$"'):
                    raise Denied(f"the word `{raw}` could not be read")
            if not node.children or all(not c.is_named and c.type == '"' for c in node.children):
                parts.literal("")
        elif kind == "concatenation":
            brace = _is_brace_pattern(node)
            for child in node.children:
                if brace and child.type == "word" and _text(child) in ("{", "}"):
                    parts.unknown(_text(child), splits=False, pattern=True)
                else:
                    self._part(child, parts, quoted)
        elif kind == "brace_expression":
            parts.unknown(raw, splits=True, pattern=True)
        elif kind == "simple_expansion":
            splits = not quoted or _text(node) in ("$@", "$*")
            parts.unknown(raw, splits=splits)
        elif kind == "expansion":
            self._expansion(node)
            splits = not quoted or "[@]" in raw or raw.startswith("${@")
            parts.unknown(raw, splits=splits)
        elif kind in ("command_substitution", "process_substitution"):
            self._substitution(node)
            if kind == "process_substitution":
                parts.literal("/dev/fd/")  # bash passes a path, never an option
                parts.unknown(raw, splits=False)
            else:
                parts.unknown(raw, splits=not quoted)
        elif kind == "arithmetic_expansion":
            self._arithmetic(node)
            parts.unknown(raw, splits=not quoted)
        elif kind == "array":
            raise Denied(f"the array `{raw}` could not be read")
        else:
            raise Denied(f"the word `{raw}` holds a construct this check does not know ({kind})")

    def _unquoted_literal(self, raw: str, parts: _Parts) -> None:
        out: list[str] = []
        i = 0
        first = not parts.started
        pattern_at_start = False
        has_pattern = False
        while i < len(raw):
            c = raw[i]
            if c == "\\" and i + 1 < len(raw):
                if raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            if c in _GLOB_CHARS:
                has_pattern = True
                if not out:
                    pattern_at_start = True
            out.append(c)
            i += 1
        text = "".join(out)
        if has_pattern:
            if first and pattern_at_start:
                static = parts.static
                parts.unknown(text, splits=False, pattern=True)
                parts.static = static  # its letters are known; only the expansion is not
            else:
                parts.literal(text)
                parts.pattern = True
                parts.several = True
        else:
            parts.literal(text)

    def _expansion(self, node: tree_sitter.Node) -> None:
        children = node.children
        if len(children) > 1 and children[1].type == "!":
            _indirect(node, children)
            return
        name = ""
        previous_op = ""
        for child in children:
            kind = child.type
            if kind in ("${", "}"):
                continue
            if previous_op == ":" and child.is_named and kind != "number":
                raise Denied(
                    f"the offset in `{_text(node)}` is arithmetic, which runs substitutions inside values"
                )
            if kind in ("variable_name", "special_variable_name"):
                name = _text(child)
                continue
            if kind == "subscript":
                self.walker._subscript(child)
                name_node = child.child_by_field_name("name")
                name = _text(name_node) if name_node is not None else name
                continue
            if not child.is_named:
                op = kind
                if op == "@" or previous_op == "@":
                    raise Denied(f"`{_text(node)}`: the @ transformations can run commands inside a value")
                if op in (":=", "=") and dangerous_variable(name):
                    raise Denied(f"`{_text(node)}` sets {name}, which changes which programs run")
                previous_op = op
                continue
            if previous_op == ":" and kind != "number":
                raise Denied(
                    f"the offset in `{_text(node)}` is arithmetic, which runs substitutions inside values"
                )
            if kind == "number" and previous_op == ":":
                continue
            self.read(child, quoted=True)

    def _substitution(self, node: tree_sitter.Node) -> None:
        inner = self.walker.inner_walker()
        for child in node.children:
            if child.is_named:
                if child.type in _REDIRECTS:
                    inner.redirect(child)
                else:
                    inner.statement(child)
            elif child.type not in ("$(", ")", "`", "<(", ">(", "\n", ";", "&&", "||", "|", "&"):
                raise Denied(
                    f"the substitution `{_text(node)}` holds a token this check does not know: {child.type!r}"
                )

    def _arithmetic(self, node: tree_sitter.Node) -> None:
        for n in _descendants(node):
            if n is node:
                continue
            if n.is_named and n.type not in (
                "number",
                "binary_expression",
                "unary_expression",
                "parenthesized_expression",
                "ternary_expression",
            ):
                raise Denied(
                    f"`{_text(node)}`: arithmetic on variables runs substitutions inside their values"
                )
            if not n.is_named and n.type in (
                "=",
                "+=",
                "-=",
                "*=",
                "/=",
                "%=",
                "++",
                "--",
                "<<=",
                ">>=",
                "&=",
                "|=",
                "^=",
            ):
                raise Denied(f"`{_text(node)}` assigns a variable")


def _indirect(node: tree_sitter.Node, children: list[tree_sitter.Node]) -> None:
    """``${!...}``: only the forms that list names (``${!prefix*}``, ``${!a[@]}``) are read. Any
    other takes a variable's value as a name, and a name like ``a[$(cmd)]`` runs ``cmd``."""
    shape = [c.type for c in children]
    if shape == ["${", "!", "variable_name", "*", "}"] or shape == ["${", "!", "variable_name", "@", "}"]:
        return
    if shape == ["${", "!", "subscript", "}"]:
        index = children[2].child_by_field_name("index")
        if index is not None and _text(index) in ("@", "*"):
            return
    raise Denied(
        f"`{_text(node)}` reads a variable named by another one's value, and a name with a "
        "subscript (`a[$(cmd)]`) runs what is in it"
    )


def _is_brace_pattern(node: tree_sitter.Node) -> bool:
    raw = _text(node)
    return "{" in raw and ("," in raw or ".." in raw)


def _ansi_c(body: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            return None
        e = body[i + 1]
        if e in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[e])
            i += 2
        elif e == "x":
            m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2 :])
            if not m:
                return None
            out.append(chr(int(m.group(0), 16)))
            i += 2 + len(m.group(0))
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(0), 8) & 0xFF))
            i += 1 + len(m.group(0))
        else:
            return None
    return "".join(out)
