"""The composer's pure parts: fuzzy ranking of the worktree's files for ``@`` completion, finding
the ``@path`` mentions of a message, and the custom command files ``/`` offers.

Pure: no I/O, no Qt. The harness resolves mentions against the worktree and reads command files;
the UI only ranks and shows."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from control_center.core.errors import OperatorError

#: How many completions a popup shows.
COMPLETION_LIMIT = 50

#: At most this many candidates (the shortest) are ordered by tier in one keystroke.
TIER_WINDOW = 3000

#: ``@path``: at the start or after whitespace (an e-mail address is not a mention), up to the next
#: whitespace. Trailing punctuation of the sentence is not part of the path.
_MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@`]+)")
_TRAILING = ".,;:!?)]}'\""


#: File names that hold secrets by convention. A mention of one is never attached, whatever the
#: repository's ``.gitignore`` says: the repository is hostile, and a ``!.env`` line in it must not
#: turn the operator's own untracked ``.env`` into context sent to a model.
_SECRET_NAMES = re.compile(
    r"""(?ix)^(
        \.env(\..+)? | \.envrc | \.netrc | _netrc | \.npmrc | \.pypirc | \.pgpass | \.git-credentials
        | \.htpasswd | id_(rsa|dsa|ecdsa|ed25519)
        | (credentials|secrets?)(\.(json|ya?ml|toml|ini|txt|env|cfg|conf))?
        | .+\.(pem|key|p12|pfx|jks|keystore|kdbx|ovpn|tfvars|tfstate)
    )$"""
)
#: Folders whose every file holds secrets by convention.
_SECRET_FOLDERS = frozenset({".ssh", ".aws", ".gnupg", ".docker", ".kube"})
#: Templates of secret files hold none: ``.env.example`` is meant to be read.
_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".defaults")


def is_secret_file(rel: str) -> bool:
    """True when the worktree-relative path ``rel`` names a file that holds secrets by
    convention (``.env``, ``id_rsa``, ``*.pem``, anything under ``.ssh/``), templates excepted."""
    parts = [p for p in rel.split("/") if p]
    if not parts:
        return False
    if any(p.casefold() in _SECRET_FOLDERS for p in parts[:-1]):
        return True
    name = parts[-1]
    if name.casefold().endswith(_TEMPLATE_SUFFIXES):
        return False
    return _SECRET_NAMES.match(name) is not None


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

    A keystroke first narrows the candidates to the paths holding the query's letters in order
    (a possessive pattern: one linear pass per path, whatever the query), starting from the
    previous keystroke's candidates when the query grew; the tiers are then plain string tests
    over what is left, in C-level comprehensions that stop once the popup is full."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths: tuple[str, ...] = tuple(paths)
        self._original: dict[str, str] = {}
        for p in self.paths:
            self._original.setdefault(p.lower(), p)
        # shortest first: every list filtered from this one stays in that order, unsorted
        self._lowered = sorted(self._original, key=len)
        self._name = {p: p[p.rfind("/") + 1 :] for p in self._lowered}
        self._pool_query = ""
        self._pool = self._lowered

    def __len__(self) -> int:
        return len(self.paths)

    def search(self, query: str, limit: int = COMPLETION_LIMIT) -> list[str]:
        """The best ``limit`` paths for ``query`` (case-insensitive), best first: the file name
        starts with it, then contains it, then the path contains it, then the file name holds
        its letters in order, then the path does. Shorter paths first within a tier."""
        q = query.lower()
        if not q:
            return list(self.paths[:limit])
        pool = self._pool if self._pool_query and q.startswith(self._pool_query) else self._lowered
        if len(q) == 1:
            hits = [p for p in pool if q in p]
        else:
            match = re.compile("".join(f"[^{re.escape(c)}]*+{re.escape(c)}" for c in q)).match
            hits = [p for p in pool if match(p)]
        self._pool_query, self._pool = q, hits
        # With thousands of candidates the query is still vague: the tiers order the shortest
        # of them (more letters narrow the pool and bring every candidate back in).
        hits = hits[:TIER_WINDOW]
        name = self._name
        name_match = re.compile("".join(f"[^{re.escape(c)}/]*+{re.escape(c)}" for c in q)).match
        found: dict[str, None] = {}
        tiers = (
            (p for p in hits if name[p].startswith(q)),
            (p for p in hits if q in name[p]),
            (p for p in hits if q in p),
            (p for p in hits if name_match(name[p])),
            iter(hits),
        )
        for tier in tiers:
            for p in tier:
                found.setdefault(p, None)
                if len(found) >= limit:
                    return [self._original[p] for p in found]
        return [self._original[p] for p in found]


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


def parse_command_file(name: str, source: str, data: bytes, modes: Mapping[str, str]) -> CustomCommand:
    """A command file's front matter (``description``, ``mode``, ``model``; ``key: value`` lines
    between ``---`` lines) and body. ``modes``: the names a command may give a mode (a mode's
    value or its label, lower case) and the mode value each means. Everything else is refused in
    one line: the file may come from a hostile repository."""
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
    named = fields.get("mode") or None
    mode = modes.get(named.lower()) if named is not None else None
    if named is not None and mode is None:
        raise CommandFileError(f"command {name!r}: mode {named!r} is not one of {', '.join(modes)}")
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
