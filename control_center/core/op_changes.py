"""What an operation changed, as one frozen value (anki's ``OpChanges`` is the model).

Every runtime operation that writes returns one (or raises), and the same value reaches every
panel through one signal: a panel looks at the parts that concern it and ignores the rest. The
change feeds of other processes (PostgreSQL's NOTIFY, the SQLite watcher) produce the same value,
so a panel never tells "this app did it" from "another window did it".

Parts are sets of keys: space ids for ``spaces``, ``turns``, ``messages`` and ``pipelines``
(``""``: a pipeline of no space), approval ids for ``approvals``. :data:`EVERY` means "anything
of that part may have changed: read it again" (a watcher that only knows the file changed, a
reconnect after missed notifications)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

Keys = frozenset[str]

#: The key that stands for every key of a part.
ANY = "*"
EVERY: Keys = frozenset({ANY})
NONE: Keys = frozenset()


def keys(*values: str | None) -> Keys:
    """The given keys (None dropped: an operation on no space changes no space's part)."""
    return frozenset(v for v in values if v is not None)


def _touches(part: Keys, key: str | None) -> bool:
    if not part:
        return False
    return key is None or ANY in part or key in part


@dataclass(frozen=True)
class Changes:
    #: Spaces whose record changed: created, renamed, moved to another mode, archived, restored.
    spaces: Keys = NONE
    #: Spaces whose turns changed: started, waiting, ended (their live state moves).
    turns: Keys = NONE
    #: Inbox items (approvals, questions) created, decided, expired or withdrawn.
    approvals: Keys = NONE
    #: Spaces whose stored conversation changed in a way the live stream did not show (another
    #: process wrote it, a rewind cut it).
    messages: Keys = NONE
    #: The operator's settings were replaced.
    settings: bool = False
    #: Spaces whose pipelines or plans changed (a node's status, its budget use).
    pipelines: Keys = NONE
    #: Scoped grants' rules added or revoked.
    rules: bool = False
    #: Why the operation failed, in one line; the status area shows it.
    error: str | None = None
    #: Every space's live state (``SpaceState`` by space id), read after the change when
    #: ``turns`` moved: panels show it without reading the store on the GUI thread.
    states: Mapping[str, Any] | None = field(default=None, compare=False)
    #: Team mode: what other operators' apps show now (a tuple of ``Presence``), when it moved.
    presence: tuple[Any, ...] | None = field(default=None, compare=False)
    #: Approvals that entered their warning window: ``(Approval, "expires in …")`` pairs.
    expiring: tuple[tuple[Any, str], ...] = field(default=(), compare=False)

    def __bool__(self) -> bool:
        """Whether it tells anything; a payload is told when present, even empty (nobody else
        here any more is news)."""
        payloads = (self.states, self.presence)
        parts = (self.spaces, self.turns, self.approvals, self.messages, self.pipelines, self.expiring)
        told = self.settings or self.rules or self.error is not None
        return told or any(parts) or any(p is not None for p in payloads)

    def __or__(self, other: Changes) -> Changes:
        """Both changes as one (a later part's payload wins: it was read later)."""
        return Changes(
            spaces=self.spaces | other.spaces,
            turns=self.turns | other.turns,
            approvals=self.approvals | other.approvals,
            messages=self.messages | other.messages,
            settings=self.settings or other.settings,
            pipelines=self.pipelines | other.pipelines,
            rules=self.rules or other.rules,
            error="; ".join(e for e in (self.error, other.error) if e) or None,
            states=other.states if other.states is not None else self.states,
            presence=other.presence if other.presence is not None else self.presence,
            expiring=self.expiring + other.expiring,
        )

    # -- what a panel asks ----------------------------------------------------------------------

    def space_list(self) -> bool:
        """Whether the list of spaces (names, modes, archive) must be read again."""
        return bool(self.spaces)

    def touches_space(self, space_id: str | None) -> bool:
        """Whether anything of ``space_id`` (its record, turns, conversation, pipelines) moved;
        None: of any space."""
        return any(_touches(p, space_id) for p in (self.spaces, self.turns, self.messages, self.pipelines))

    def conversation_of(self, space_id: str | None) -> bool:
        """Whether the stored conversation of ``space_id`` must be read again."""
        return _touches(self.messages, space_id)

    def pipelines_of(self, space_id: str | None) -> bool:
        """Whether the plans and pipelines of ``space_id`` (side tabs) must be read again."""
        return _touches(self.pipelines, space_id) or _touches(self.pipelines, "")

    def inbox(self) -> bool:
        return bool(self.approvals)

    def rule_list(self) -> bool:
        """Whether the Rules view must be read again: a rule changed, or an item was decided
        (a scoped grant makes a rule, and a rule's count of uses moves with the calls it let)."""
        return self.rules or bool(self.approvals)


@dataclass(frozen=True)
class Done(Generic[T]):
    """An operation's result beside what it changed (anki's ``OpChangesWithId``): a created
    space, a decision's outcome."""

    value: T
    changes: Changes


class OperationFailed(Exception):
    """An operation refused or failed; its :class:`Changes` (``error`` set) were already told
    to every listener, so the status area has the line: a caller must not show it again."""

    def __init__(self, changes: Changes) -> None:
        super().__init__(changes.error or "the operation failed")
        self.changes = changes


#: Convenience builders for the common cases (one place that says which parts each one touches).


def space_changed(*space_ids: str | None) -> Changes:
    return Changes(spaces=keys(*space_ids) or EVERY)


def approvals_changed(*approval_ids: str | None, spaces: Iterable[str | None] = ()) -> Changes:
    """Inbox items moved: the spaces they belong to change state too."""
    return Changes(approvals=keys(*approval_ids) or EVERY, turns=keys(*spaces))


#: Another process changed something, and only that much is known.
EVERYTHING = Changes(spaces=EVERY, turns=EVERY, approvals=EVERY, messages=EVERY, pipelines=EVERY, rules=True)
