"""The composer's pure parts: fuzzy ranking of the worktree's files for ``@`` completion, finding
the ``@path`` mentions of a message, and the custom command files ``/`` offers.

Pure: no I/O, no Qt. The harness resolves mentions against the worktree and reads command files;
the UI only ranks and shows."""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass

from control_center.core.errors import OperatorError

#: How many completions a popup shows.
COMPLETION_LIMIT = 50

#: ``@path``: at the start or after whitespace (an e-mail address is not a mention), up to the next
#: whitespace. Trailing punctuation of the sentence is not part of the path.
_MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@`]+)")
_TRAILING = ".,;:!?)]}'\""


def mentioned_paths(text: str) -> list[str]:
    """The ``@path`` tokens of ``text``, in order, each once, sentence punctuation stripped."""
    seen: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        path = match.group(1).rstrip(_TRAILING)
        if path:
            seen.setdefault(path, None)
    return list(seen)


class FileIndex:
    """The files of one worktree, ranked by a fuzzy subsequence match.

    Each keystroke that extends the query narrows the previous keystroke's matches instead of
    scanning every path again: typing is the common case and it gets cheaper as it goes."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths: tuple[str, ...] = tuple(paths)
        self._lowered = tuple(p.lower() for p in self.paths)
        self._base_at = tuple(p.rfind("/") + 1 for p in self._lowered)
        self._last_query = ""
        self._last_matches: list[int] = list(range(len(self.paths)))

    def __len__(self) -> int:
        return len(self.paths)

    def search(self, query: str, limit: int = COMPLETION_LIMIT) -> list[str]:
        """The best ``limit`` paths for ``query`` (case-insensitive subsequence), best first: a
        substring of the file name beats a substring of the path beats a scattered match; shorter
        paths win ties."""
        q = query.lower()
        if not q:
            self._last_query, self._last_matches = "", list(range(len(self.paths)))
            return list(self.paths[:limit])
        pool = self._last_matches if q.startswith(self._last_query) else range(len(self.paths))
        pattern = re.compile(".*?".join(re.escape(c) for c in q))
        lowered = self._lowered
        matches = [i for i in pool if pattern.search(lowered[i]) is not None]
        self._last_query, self._last_matches = q, matches
        base_at = self._base_at

        def score(i: int) -> tuple[int, int, int]:
            path = lowered[i]
            base = path[base_at[i] :]
            at = base.find(q)
            if at >= 0:
                tier = 0 if at == 0 else 1
            elif q in path:
                tier = 2
            elif pattern.search(base) is not None:
                tier = 3
            else:
                tier = 4
            return (tier, len(path), i)

        best = heapq.nsmallest(limit, matches, key=score)
        return [self.paths[i] for i in best]


# -- custom commands --------------------------------------------------------------------------

#: A command file larger than this is refused (it is a prompt, not a document).
MAX_COMMAND_BYTES = 16 * 1024
#: A command's name: the file's stem.
COMMAND_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_FRONT_KEYS = ("description", "mode", "model")
_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$")


class CommandFileError(OperatorError):
    """A command file that cannot be used, said in one line."""


@dataclass(frozen=True)
class CustomCommand:
    name: str
    #: "repository" or "operator" (the config folder): who wrote it, shown in the list.
    source: str
    description: str
    body: str
    #: A Mode value, or None: the command runs in the space's mode.
    mode: str | None = None
    model: str | None = None

    def expand(self, arguments: str) -> str:
        """The message this command sends: ``$ARGUMENTS`` replaced by what followed the name
        (appended on a line of its own when the body does not say where)."""
        arguments = arguments.strip()
        if "$ARGUMENTS" in self.body:
            return self.body.replace("$ARGUMENTS", arguments).strip()
        return f"{self.body.strip()}\n\n{arguments}".strip() if arguments else self.body.strip()


def parse_command_file(name: str, source: str, data: bytes, modes: Sequence[str]) -> CustomCommand:
    """A command file's front matter (``description``, ``mode``, ``model``; ``key: value`` lines
    between ``---`` lines) and body. ``modes``: the mode values a command may name. Everything
    else is refused in one line: the file may come from a hostile repository."""
    if not COMMAND_NAME.match(name):
        raise CommandFileError(f"command {name!r}: a name is lower-case letters, digits, - and _")
    if len(data) > MAX_COMMAND_BYTES:
        raise CommandFileError(f"command {name!r}: the file is over {MAX_COMMAND_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CommandFileError(f"command {name!r}: the file is not UTF-8 text") from None
    if "\x00" in text:
        raise CommandFileError(f"command {name!r}: the file is not text")
    fields: dict[str, str] = {}
    body = text
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration:
            raise CommandFileError(f"command {name!r}: the front matter has no closing ---") from None
        for line in lines[1:end]:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            key = key.strip()
            if not sep or key not in _FRONT_KEYS:
                raise CommandFileError(
                    f"command {name!r}: unknown front matter line {line.strip()[:40]!r} "
                    f"(expected {', '.join(_FRONT_KEYS)})"
                )
            fields[key] = value.strip().strip("\"'")
        body = "\n".join(lines[end + 1 :])
    mode = fields.get("mode") or None
    if mode is not None and mode not in modes:
        raise CommandFileError(f"command {name!r}: mode {mode!r} is not one of {', '.join(modes)}")
    model = fields.get("model") or None
    if model is not None and not _MODEL_ID.match(model):
        raise CommandFileError(f"command {name!r}: {model[:40]!r} is not a model id")
    if not body.strip():
        raise CommandFileError(f"command {name!r}: the body is empty")
    description = " ".join(fields.get("description", "").split())[:200]
    return CustomCommand(name, source, description, body, mode, model)


def split_command(text: str) -> tuple[str, str] | None:
    """``/name rest`` -> (name, rest) when the message is a command (a ``/`` first, then a
    name); None for an ordinary message (``/usr/bin is…`` is a path, not a command)."""
    match = re.match(r"^/([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+|$)(.*)\Z", text.strip(), re.DOTALL)
    if match is None:
        return None
    return match.group(1).lower(), match.group(2)
