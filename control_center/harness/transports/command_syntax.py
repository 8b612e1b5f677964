"""What the Bash check and its word reader share: the grammar's parser, the :class:`Word` a
shell word becomes, and small helpers over tree-sitter nodes (``command_check`` walks lines,
``command_words`` reads words)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter
import tree_sitter_bash

_MAX_DEPTH = 8
_GLOB_CHARS = frozenset("*?[")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


@functools.cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@dataclass(frozen=True)
class Word:
    """One shell word as bash will see it before it runs."""

    text: str
    #: Every character is known now (no expansion, substitution or pattern).
    static: bool = True
    #: Could become an argument starting with ``-`` or several arguments: an unquoted
    #: expansion (split and globbed), a pattern or expansion in the first character.
    may_be_option: bool = False
    #: Holds an unquoted glob or brace pattern.
    pattern: bool = False
    #: May become no word or several (word splitting, ``"$@"``, a glob, a brace pattern), so
    #: the words after it may move: into an option's value, or past a count of operands.
    several: bool = False

    @property
    def option_like(self) -> bool:
        return self.may_be_option or (self.text.startswith("-") and self.text != "-")


def _descendants(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")
