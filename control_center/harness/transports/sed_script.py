"""Read a GNU sed script command by command and say whether any of them writes or runs something.

Only the commands a reader needs are accepted; ``w``, ``W``, ``e``, the ``s///`` flags ``w`` and
``e`` and anything this reader does not know are refused (a script it misreads is refused too,
as every command and flag it meets must be one it knows)."""

from __future__ import annotations

_SIMPLE = frozenset("=dDgGhHlnNpPqQxzF")
_WITH_NUMBER = frozenset("lqQLT")
_WITH_LABEL = frozenset("btT")
_WITH_TEXT = frozenset("aic")
_READS_FILE = frozenset("rR")
_S_FLAGS = frozenset("gpiImM0123456789")


class _Refused(Exception):
    pass


class _Reader:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def take(self) -> str:
        c = self.peek()
        self.i += 1
        return c

    def skip_blanks(self) -> None:
        while self.peek() in (" ", "\t"):
            self.i += 1

    def delimited(self, delim: str) -> str:
        """Text up to an unescaped ``delim`` (consumed)."""
        out: list[str] = []
        while True:
            c = self.take()
            if c == "":
                raise _Refused("has an unterminated expression")
            if c == "\\":
                out.append(c + self.take())
                continue
            if c == delim:
                return "".join(out)
            if c == "\n" and delim != "\n":
                raise _Refused("has a newline inside an expression")
            out.append(c)

    def address(self) -> None:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit():
                self.i += 1
            if self.peek() == "~":
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
        elif c == "$":
            self.i += 1
        elif c in ("/", "\\"):
            self.i += 1
            delim = "/" if c == "/" else self.take()
            if delim in ("", "\n", "\\"):
                raise _Refused("has an address this reader does not know")
            self.delimited(delim)
            while self.peek() in ("I", "M"):
                self.i += 1
        else:
            return
        self.skip_blanks()
        if self.peek() == ",":
            self.i += 1
            self.skip_blanks()
            if self.peek() in ("+", "~"):
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
            else:
                self.address()

    def to_end_of_command(self) -> None:
        self.skip_blanks()
        c = self.peek()
        if c in ("", ";", "\n", "}", "#"):
            return
        raise _Refused(f"has `{c}` where a command ends")

    def rest_of_line(self) -> None:
        while True:
            c = self.take()
            if c in ("", "\n"):
                return
            if c == "\\":
                self.take()

    def run(self) -> None:
        while True:
            while self.peek() in (" ", "\t", "\n", ";"):
                self.i += 1
            if self.peek() == "":
                return
            if self.peek() == "#":
                self.rest_of_line()
                continue
            self.address()
            self.skip_blanks()
            while self.peek() == "!":
                self.i += 1
                self.skip_blanks()
            cmd = self.take()
            if cmd in ("{", "}"):
                continue
            if cmd in ("w", "W"):
                raise _Refused(f"writes files (`{cmd}`)")
            if cmd == "e":
                raise _Refused("runs commands (`e`)")
            if cmd in _SIMPLE or cmd in _WITH_NUMBER:
                self.skip_blanks()
                while self.peek().isdigit():
                    self.i += 1
                self.to_end_of_command()
            elif cmd == ":" or cmd in _WITH_LABEL:
                self.label()
            elif cmd in _WITH_TEXT or cmd in _READS_FILE:
                self.rest_of_line()
            elif cmd == "s":
                self.substitute()
            elif cmd == "y":
                delim = self.take()
                if delim in ("", "\n", "\\"):
                    raise _Refused("has a `y` this reader does not know")
                self.delimited(delim)
                self.delimited(delim)
                self.to_end_of_command()
            elif cmd == "v":
                self.label()
            else:
                raise _Refused(f"has a command this check does not know (`{cmd}`)")

    def label(self) -> None:
        while self.peek() not in ("", ";", "\n"):
            self.i += 1

    def substitute(self) -> None:
        delim = self.take()
        if delim in ("", "\n", "\\"):
            raise _Refused("has an `s` this reader does not know")
        self.delimited(delim)
        self.delimited(delim)
        while True:
            c = self.peek()
            if c in ("", ";", "\n", "}", "#", " ", "\t"):
                self.to_end_of_command()
                return
            self.i += 1
            if c == "w":
                raise _Refused("writes files (the `w` flag of `s`)")
            if c == "e":
                raise _Refused("runs commands (the `e` flag of `s`)")
            if c not in _S_FLAGS:
                raise _Refused(f"has an `s` flag this check does not know (`{c}`)")


def sed_script_problem(script: str) -> str | None:
    """Why ``script`` is not read-only (a phrase after "`sed` script"), or None."""
    try:
        _Reader(script).run()
    except _Refused as exc:
        return str(exc)
    return None
