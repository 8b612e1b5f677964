"""The workspace store: one database (an SQLite file, or PostgreSQL in team mode), repositories
returning frozen core values.

Writes are serialised through one lock per process and the backend's write lock across processes
(SQLite's, or an advisory lock on PostgreSQL: see store/dialect.py); readers run beside them. Each
method is one unit of work."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import func, text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import Session, col, select

from control_center.core.approvals import (
    Approval,
    ApprovalCounts,
    ApprovalKind,
    ApprovalQuery,
    ApprovalStatus,
)
from control_center.core.errors import OperatorError
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.plan import parse_plan
from control_center.core.plan_review import PlanComment, PlanReviewError, check_comment, comments_of
from control_center.core.records import (
    AgentRecord,
    Gate,
    MessageHit,
    MessageRecord,
    PipelineRecord,
    PlanRecord,
    Presence,
    ProjectRecord,
    ProposalRecord,
    ReviewNodeRecord,
    ReviewRecord,
    Space,
    SpaceLanding,
    TicketRecord,
    ToolCallRecord,
    Turn,
)
from control_center.store import health
from control_center.store.comments import CommentStore
from control_center.store.db import DB_FILENAME as DB_FILENAME  # re-exported: its old home
from control_center.store.db import StoreError, open_database
from control_center.store.dialect import dialect_for, search_words
from control_center.store.rules import RuleStore, approval_row_value
from control_center.store.tables import (
    AgentRow,
    ApprovalRow,
    ConversationRow,
    MessageRow,
    PipelineRow,
    PlanRow,
    PresenceRow,
    ProjectRow,
    ProposalRow,
    ReviewNodeRow,
    ReviewRow,
    SpaceLandingRow,
    SpaceRow,
    TicketRow,
    ToolCallRow,
    TurnEventRow,
    TurnRow,
    WorkspaceMeta,
)

#: The PostgreSQL NOTIFY channel that announces new turn events (payload: the request id, then the
#: pipeline id when the request is a pipeline step).
TURN_EVENTS_CHANNEL = "cc_turn_events"


_id_lock = threading.Lock()
_last_micros = 0
_id_tail = itertools.count(int.from_bytes(os.urandom(3)))


def new_id() -> str:
    """A 20-hex-digit id that sorts in creation order: 13 digits of microseconds (made strictly
    increasing within a process) and 7 random-started digits that keep ids of different processes
    apart. Ordering by ``(created_at, id)`` is then insertion order on both backends."""
    global _last_micros
    with _id_lock:
        micros = max(time.time_ns() // 1000, _last_micros + 1)
        _last_micros = micros
        tail = (next(_id_tail) + int.from_bytes(os.urandom(2))) & 0xFFFFFFF
    return f"{micros:013x}{tail:07x}"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


#: Ids bound per ``IN (...)`` query: far under SQLite's variable limit (32,766 by default, 999 on
#: old builds).
_IN_CHUNK = 500


class NotFound(StoreError):
    pass


#: Statuses in which a turn holds its space (the unique index ``ux_turn_active_space``).
ACTIVE_TURN_STATUSES = (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL)


class SpaceBusy(StoreError):
    """The space already has a turn running or waiting; ``turn`` is that turn."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        what = "is running" if turn.status is TurnStatus.RUNNING else "waits for the operator"
        super().__init__(f"turn {turn.id} {what} in this space")


class ClaimLost(StoreError):
    """Another process claimed (or finished) the turn between reading it and claiming it."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        super().__init__(f"turn {turn.id} was claimed by another process (now {turn.status.value})")


# One INSERT, the next sequence number computed inside it (runs for every message of every turn).
_INSERT_MESSAGE = text(
    "INSERT INTO message (id, conversation_id, seq, turn_id, role, kind, text, blocks, meta, created_at) "
    "VALUES (:id, :conversation_id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM message WHERE "
    "conversation_id = :seq_conversation_id), :turn_id, :role, :kind, :text, :blocks, :meta, :created_at)"
)


@dataclasses.dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to add (``Store.add_messages``)."""

    role: str
    kind: str
    text: str = ""
    blocks: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    #: The id to store it under (a streamed reply's, announced by its deltas); None: a new one.
    id: str | None = None


#: MessageRecord's fields, in order, as columns of the message table.
_MESSAGE_COLUMNS = "id, conversation_id, seq, turn_id, role, kind, text, blocks, meta, created_at"

_RecordT = TypeVar("_RecordT")


@functools.cache
def _field_names(record_type: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(record_type))


def _record(record_type: type[_RecordT], row: Any) -> _RecordT:
    """The frozen value of an ORM row: the row never leaves the store."""
    return record_type(*(getattr(row, name) for name in _field_names(record_type)))


def _maybe(record_type: type[_RecordT], row: Any) -> _RecordT | None:
    return None if row is None else _record(record_type, row)


def _space(row: SpaceRow) -> Space:
    return Space(
        id=row.id,
        name=row.name,
        mode=Mode(row.mode),
        autonomy=Autonomy(row.autonomy),
        transport=Transport(row.transport),
        worktree=Path(row.worktree),
        branch=row.branch,
        conversation_id=row.conversation_id,
        created_at=row.created_at,
        archived=row.archived,
        pr_base=row.pr_base,
        pr_head=row.pr_head,
        gates=tuple(Gate(g["name"], g["command"], bool(g.get("network", False))) for g in row.gates),
    )


def _turn(row: TurnRow) -> Turn:
    return Turn(
        id=row.id,
        space_id=row.space_id,
        conversation_id=row.conversation_id,
        mode=Mode(row.mode),
        transport=Transport(row.transport),
        status=TurnStatus(row.status),
        settings=dict(row.settings),
        worktree=Path(row.worktree),
        created_at=row.created_at,
        delivered=row.delivered,
        nudged=row.nudged,
        error=row.error,
        model_calls=row.model_calls,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        cost_usd=row.cost_usd,
        cursor=row.cursor,
        state=dict(row.state),
        claim=row.claim or 0,
    )


def _call_record(row: ToolCallRow) -> ToolCallRecord:
    return ToolCallRecord(
        turn_id=row.turn_id,
        call_id=row.call_id,
        name=row.name,
        status=row.status,
        started_at=row.started_at,
        pid=row.pid,
        spool=row.spool,
        output=row.output,
        is_error=row.is_error,
    )


def _settled_message(row: ApprovalRow) -> str:
    if row.status == ApprovalStatus.SUPERSEDED.value:
        return f"approval {row.id} was superseded by a newer version; decide the newest one"
    # Two operators deciding at once: the write lock lets one in, the other reads this.
    verb = "answered" if row.status == ApprovalStatus.ANSWERED.value else "decided"
    return (
        f"approval {row.id} was already {verb} by {row.decided_by or 'someone'} "
        f"({row.status} at {row.decided_at})"
    )


class Store(RuleStore, CommentStore):
    def __init__(self, target: Path | str, *, create: bool = False, read_only: bool = False) -> None:
        """``target`` is the SQLite file, or a ``postgresql://`` URL (team mode). ``read_only``:
        nothing is ever written (every write unit is refused with one line saying so)."""
        self.path: Path | None = target if isinstance(target, Path) else None
        self.read_only = read_only
        self.engine = open_database(target, create=create, read_only=read_only)
        self.dialect = dialect_for(self.engine)
        self._write_lock = threading.RLock()
        #: Set when an operation found the file damaged: every later write is refused.
        self.damaged: str | None = None
        if self.path is not None and not read_only:
            health.keep_reserve(self.path)
            self._prune_writer_stamps()

    def _prune_writer_stamps(self) -> None:
        """Drop the change stamps of SQLite writers whose process has ended (store.changes)."""
        from control_center.store.changes import WRITER_PREFIX, writer_pid

        try:
            with Session(self.engine) as s:
                keys = s.exec(
                    select(WorkspaceMeta.key).where(col(WorkspaceMeta.key).startswith(WRITER_PREFIX))
                ).all()
                dead = [k for k in keys if not _pid_alive(writer_pid(k))]
                for key in dead:
                    row = s.get(WorkspaceMeta, key)
                    if row is not None:
                        s.delete(row)
                if dead:
                    s.commit()
        except DBAPIError:
            return  # best effort: a stale stamp only costs a watcher one look

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.dialect.name

    @property
    def location(self) -> str:
        """The SQLite file, or the database URL without its password."""
        if self.path is not None:
            return str(self.path)
        return self.engine.url.render_as_string(hide_password=True).replace("+psycopg", "")

    def close(self) -> None:
        # An SQLite writer's connections keep the health stamp current as they close (the last
        # close checkpoints the WAL): see health.stamp_keeping_connection.
        self.engine.dispose()

    @contextmanager
    def _read(self) -> Iterator[Session]:
        try:
            with Session(self.engine, expire_on_commit=False) as s:
                yield s
        except IntegrityError:
            raise  # a constraint said no: the callers' business, not a broken file
        except DBAPIError as exc:
            raise self._database_error(exc) from None

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        """A plain connection for a read on a hot path (no ORM session), errors as ``_read``'s."""
        try:
            with self.engine.connect() as conn:
                yield conn
        except DBAPIError as exc:
            raise self._database_error(exc) from None

    @contextmanager
    def _write(self, *, insert_only: bool = False) -> Iterator[Session]:
        """A write unit, under the workspace's write lock; ``insert_only`` (rows no unit reads
        then writes) goes without it where the backend allows (``Dialect.concurrent_inserts``)."""
        if self.read_only:
            raise StoreError(f"the workspace {self.location} is open read-only: nothing can be changed")
        if self.damaged is not None and self.path is not None:
            raise health.damaged_error(self.path, self.damaged)
        serialized = not (insert_only and self.dialect.concurrent_inserts)
        try:
            with (
                self._write_lock if serialized else nullcontext(),
                Session(self.engine, expire_on_commit=False) as s,
            ):
                # Take the backend's write lock up front: a unit that reads then writes (the next
                # message seq, a name check) must not interleave with a writer on another
                # connection, e.g. another process on the same workspace.
                if serialized:
                    self.dialect.begin_write(s.connection())
                yield s
                self.dialect.stamp_write(s.connection())
                s.commit()
        except IntegrityError:
            raise  # a constraint said no (a claim lost, a duplicate): the callers' business
        except DBAPIError as exc:
            raise self._database_error(exc) from None

    def _database_error(self, exc: DBAPIError) -> OperatorError:
        """One line naming the database and the cause; damage to an SQLite file marks it and
        refuses every later write."""
        cause = str(exc.orig) if exc.orig is not None else str(exc).splitlines()[0]
        if self.path is not None and ("disk is full" in cause or health.is_damage(cause)):
            free = health.disk_full(self.path)
            if free is not None or "disk is full" in cause:
                # Not damage: the write found no room, and SQLite rolled it back. The reserve
                # goes back to the disk so the caller's next write (a turn ending failed) fits.
                health.release_reserve(self.path)
                return StoreError(
                    f"workspace database {self.location}: the disk is full ({free or 0} bytes free); "
                    "nothing was written: free some space and try again"
                )
        if self.path is not None and health.is_damage(cause):
            self.damaged = cause
            if not self.read_only:  # a read-only open leaves the folder as it found it
                health.mark_damaged(self.path, cause)
            return health.damaged_error(self.path, cause)
        return StoreError(f"workspace database {self.location}: {cause}")

    # -- workspace metadata -------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        with self._read() as s:
            row = s.get(WorkspaceMeta, key)
            return row.value if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as s:
            row = s.get(WorkspaceMeta, key)
            if row:
                row.value = value
            else:
                s.add(WorkspaceMeta(key=key, value=value))

    # -- spaces ---------------------------------------------------------------------------------

    def create_space(
        self,
        *,
        name: str,
        mode: Mode,
        autonomy: Autonomy,
        transport: Transport,
        worktree: Path,
        branch: str,
        space_id: str | None = None,
        pr_base: str | None = None,
        pr_head: str | None = None,
        gates: Sequence[Gate] = (),
    ) -> Space:
        sid = space_id or new_id()
        ts = now_iso()
        with self._write() as s:
            if s.exec(select(SpaceRow).where(SpaceRow.name == name)).first():
                raise StoreError(f"a space named {name!r} already exists")
            conv = ConversationRow(id=new_id(), space_id=None, created_at=ts)
            row = SpaceRow(
                id=sid,
                name=name,
                mode=mode.value,
                autonomy=autonomy.value,
                transport=transport.value,
                worktree=str(worktree),
                branch=branch,
                conversation_id=conv.id,
                created_at=ts,
                last_active_at=ts,
                pr_base=pr_base,
                pr_head=pr_head,
                gates=[
                    {"name": g.name, "command": g.command, **({"network": True} if g.network else {})}
                    for g in gates
                ],
            )
            s.add(row)
            s.flush()
            conv.space_id = sid
            s.add(conv)
            s.flush()
            return _space(row)

    def space(self, space_id: str) -> Space | None:
        with self._read() as s:
            row = s.get(SpaceRow, space_id)
            return _space(row) if row else None

    def find_space(self, id_or_name: str) -> Space | None:
        """A space by id, else by name; None when it is not in this workspace."""
        with self._read() as s:
            row = (
                s.get(SpaceRow, id_or_name)
                or s.exec(select(SpaceRow).where(SpaceRow.name == id_or_name)).first()
            )
            return _space(row) if row else None

    def spaces(self, *, include_archived: bool = False) -> list[Space]:
        with self._read() as s:
            q = select(SpaceRow).order_by(col(SpaceRow.created_at))
            if not include_archived:
                q = q.where(SpaceRow.archived == False)  # noqa: E712
            return [_space(r) for r in s.exec(q)]

    def most_recent_space(self) -> Space | None:
        with self._read() as s:
            row = s.exec(
                select(SpaceRow)
                .where(SpaceRow.archived == False)  # noqa: E712
                .order_by(col(SpaceRow.last_active_at).desc())
            ).first()
            return _space(row) if row else None

    def update_space(self, space_id: str, **fields: Any) -> Space:
        allowed = {"mode", "autonomy", "transport", "name", "archived"}
        with self._write() as s:
            row = s.get(SpaceRow, space_id)
            if row is None:
                raise NotFound(f"no space {space_id!r} in this workspace")
            for key, value in fields.items():
                if key not in allowed:
                    raise ValueError(f"cannot update space field {key!r}")
                if key == "name" and value != row.name:
                    clash = s.exec(select(SpaceRow).where(SpaceRow.name == value)).first()
                    if clash:
                        raise StoreError(f"a space named {value!r} already exists")
                setattr(row, key, value.value if hasattr(value, "value") else value)
            s.add(row)
            s.flush()
            return _space(row)

    def landing(self, space_id: str) -> SpaceLanding | None:
        """The space's base branch and last landing; None for a space made before they were kept."""
        with self._read() as s:
            row = s.get(SpaceLandingRow, space_id)
            return _record(SpaceLanding, row) if row else None

    def record_landing(self, space_id: str, **fields: str | None) -> SpaceLanding:
        """Set some of the space's landing fields (``base_branch``, ``pr_url``, ``method``,
        ``landed_at``, ``landed_commit``); the others keep their values."""
        allowed = {"base_branch", "pr_url", "method", "landed_at", "landed_commit"}
        with self._write() as s:
            if s.get(SpaceRow, space_id) is None:
                raise NotFound(f"no space {space_id!r} in this workspace")
            row = s.get(SpaceLandingRow, space_id) or SpaceLandingRow(space_id=space_id)
            for key, value in fields.items():
                if key not in allowed:
                    raise ValueError(f"cannot set landing field {key!r}")
                setattr(row, key, value)
            s.add(row)
            s.flush()
            return _record(SpaceLanding, row)

    def touch_space(self, space_id: str) -> None:
        with self._write() as s:
            row = s.get(SpaceRow, space_id)
            if row:
                row.last_active_at = now_iso()
                s.add(row)

    # -- conversations and messages ------------------------------------------------------------

    def create_conversation(self, *, space_id: str | None, parent_message_id: str | None = None) -> str:
        with self._write() as s:
            conv = ConversationRow(
                id=new_id(), space_id=space_id, parent_message_id=parent_message_id, created_at=now_iso()
            )
            s.add(conv)
            return conv.id

    def thread_of(self, message_id: str) -> str | None:
        with self._read() as s:
            row = s.exec(
                select(ConversationRow).where(ConversationRow.parent_message_id == message_id)
            ).first()
            return row.id if row else None

    def add_message(
        self,
        conversation_id: str,
        *,
        role: str,
        kind: str,
        text: str = "",
        blocks: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        turn_id: str | None = None,
        turn_fields: dict[str, Any] | None = None,
        message_id: str | None = None,
    ) -> str:
        """``turn_fields`` updates the turn (``turn_id``) in the same transaction: a model reply
        and the turn's position after it (its script cursor, usage) are saved together, so a crash
        never leaves one without the other. ``message_id``: the id its live stream announced."""
        message = NewMessage(role, kind, text, blocks, meta, message_id)
        return self.add_messages(conversation_id, [message], turn_id=turn_id, turn_fields=turn_fields)[0]

    def add_messages(
        self,
        conversation_id: str,
        messages: Sequence[NewMessage],
        *,
        turn_id: str | None = None,
        turn_fields: dict[str, Any] | None = None,
    ) -> list[str]:
        """Messages of one turn in order, and ``turn_fields``, in one transaction (one commit)."""
        # One INSERT each, the next sequence number computed inside it: this runs for every
        # message of every turn, so it skips the ORM.
        update = self._turn_update(turn_id, turn_fields) if turn_id and turn_fields else None
        ids = [m.id or new_id() for m in messages]
        created_at = now_iso()
        with self._write() as s:
            if update is not None and s.execute(update).rowcount == 0:
                raise NotFound(f"no turn {turn_id!r} in this workspace")
            conn = s.connection()
            for message_id, m in zip(ids, messages, strict=True):
                conn.execute(
                    _INSERT_MESSAGE,
                    {
                        "id": message_id,
                        "conversation_id": conversation_id,
                        "seq_conversation_id": conversation_id,
                        "turn_id": turn_id,
                        "role": m.role,
                        "kind": m.kind,
                        "text": m.text,
                        "blocks": json.dumps(m.blocks or []),
                        "meta": json.dumps(m.meta or {}),
                        "created_at": created_at,
                    },
                )
        return ids

    def update_message_meta(self, message_id: str, **meta: Any) -> None:
        with self._write() as s:
            row = s.get(MessageRow, message_id)
            if row is None:
                raise NotFound(f"no message {message_id!r}")
            row.meta = {**row.meta, **meta}
            s.add(row)

    def update_message_text(self, message_id: str, text: str, **meta: Any) -> None:
        """Rewrite a system note in place (a run of mode changes is one note, not one each)."""
        with self._write() as s:
            row = s.get(MessageRow, message_id)
            if row is None:
                raise NotFound(f"no message {message_id!r}")
            row.text = text
            row.meta = {**row.meta, **meta}
            s.add(row)

    def messages(self, conversation_id: str, *, limit: int | None = None) -> list[MessageRecord]:
        """Rows in order. Callers inside the store layer's clients turn them into values at once
        (the transcript builder); rows are detached and safe to read on any thread."""
        with self._read() as s:
            q = select(MessageRow).where(MessageRow.conversation_id == conversation_id)
            if limit is not None:
                q = q.order_by(col(MessageRow.seq).desc()).limit(limit)
                return [_record(MessageRecord, r) for r in reversed(s.exec(q).all())]
            return [_record(MessageRecord, r) for r in s.exec(q.order_by(col(MessageRow.seq)))]

    def messages_page(
        self,
        conversation_id: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[MessageRecord]:
        """Rows strictly between two seq keys, in seq order (``newest_first``: the newest
        ``limit`` of them, still returned oldest first). A keyset page: its cost is its own size,
        never the conversation's, and it binds at most four variables. Plain SQL on a connection:
        the turn loop reads the conversation's new rows before every model call."""
        where = ["conversation_id = :conversation_id"]
        params: dict[str, Any] = {"conversation_id": conversation_id}
        if after_seq is not None:
            where.append("seq > :after_seq")
            params["after_seq"] = after_seq
        if before_seq is not None:
            where.append("seq < :before_seq")
            params["before_seq"] = before_seq
        sql = f"SELECT {_MESSAGE_COLUMNS} FROM message WHERE {' AND '.join(where)} ORDER BY seq"
        if newest_first:
            sql += " DESC"
        if limit is not None:
            sql += " LIMIT :limit"
            params["limit"] = limit
        load_json = self.dialect.load_json
        with self._connect() as conn:
            rows = [
                MessageRecord(
                    r[0], r[1], r[2], r[3], r[4], r[5], r[6], load_json(r[7]), load_json(r[8]), r[9]
                )
                for r in conn.execute(text(sql), params)
            ]
        return rows[::-1] if newest_first else rows

    def turn_messages(self, turn_id: str) -> list[MessageRecord]:
        """The messages one turn wrote, in order (an index lookup: its cost is the turn's size,
        not the conversation's)."""
        with self._read() as s:
            q = select(MessageRow).where(MessageRow.turn_id == turn_id).order_by(col(MessageRow.seq))
            return [_record(MessageRecord, r) for r in s.exec(q)]

    def last_message_of_kind(self, conversation_id: str, kind: str) -> MessageRecord | None:
        """The newest row of ``kind`` (an index lookup, not a scan of the conversation)."""
        with self._read() as s:
            return _maybe(
                MessageRecord,
                s.exec(
                    select(MessageRow)
                    .where(MessageRow.conversation_id == conversation_id, MessageRow.kind == kind)
                    .order_by(col(MessageRow.seq).desc())
                    .limit(1)
                ).first(),
            )

    def messages_from(self, message_id: str) -> int:
        """How many messages of its conversation are at or after ``message_id`` (0: no such
        message): the page that shows it, counted from the newest."""
        with self._read() as s:
            row = s.get(MessageRow, message_id)
            if row is None:
                return 0
            q = select(func.count()).where(
                MessageRow.conversation_id == row.conversation_id, MessageRow.seq >= row.seq
            )
            return int(s.exec(q).one())

    def search_messages(
        self, query: str, *, space_id: str | None = None, limit: int = 50
    ) -> list[MessageHit]:
        """Messages of every conversation (threads included) holding every word of ``query``,
        the last word as a prefix; newest first. The snippet marks hits with ``HIT_START`` /
        ``HIT_END`` (store.dialect). No words: no hits."""
        words = search_words(query)
        if not words:
            return []
        with self._read() as s:
            rows = self.dialect.search_messages(s.connection(), words, space_id, max(1, min(limit, 500)))
        return [
            MessageHit(
                message_id=r[0],
                conversation_id=r[1],
                seq=int(r[2]),
                kind=r[3],
                role=r[4],
                created_at=str(r[5]),
                snippet=r[6] or "",
                space_id=r[7],
                thread_of=r[8],
            )
            for r in rows
        ]

    def thread_counts(self, conversation_id: str, message_ids: Sequence[str] | None = None) -> dict[str, int]:
        """Message id -> number of messages in the thread hanging off it (restricted to
        ``message_ids`` when given: a page of a long conversation). Ids are bound in chunks, so
        no query carries more variables than SQLite allows."""
        if message_ids is not None:
            out: dict[str, int] = {}
            ids = list(message_ids)
            for start in range(0, len(ids), _IN_CHUNK):
                out.update(self._thread_counts(conversation_id, ids[start : start + _IN_CHUNK]))
            return out
        return self._thread_counts(conversation_id, None)

    def _thread_counts(self, conversation_id: str, message_ids: list[str] | None) -> dict[str, int]:
        with self._read() as s:
            parent: Any = (
                message_ids
                if message_ids is not None
                else select(MessageRow.id)
                .where(MessageRow.conversation_id == conversation_id)
                .scalar_subquery()
            )
            rows = s.exec(
                select(ConversationRow.parent_message_id, func.count(MessageRow.id))
                .join(MessageRow, MessageRow.conversation_id == ConversationRow.id)
                .where(col(ConversationRow.parent_message_id).in_(parent))
                .group_by(ConversationRow.parent_message_id)
            ).all()
            return {str(pid): int(n) for pid, n in rows}

    # -- turns ----------------------------------------------------------------------------------

    def create_turn(
        self,
        *,
        space_id: str | None,
        conversation_id: str | None,
        mode: Mode,
        transport: Transport,
        settings: dict[str, Any],
        worktree: Path,
        state: dict[str, Any] | None = None,
    ) -> Turn:
        """A new ``running`` turn, which claims its space in this one INSERT: the unique index
        on a space's active turn lets exactly one of any number of simultaneous creators (threads
        or processes) succeed. The others get :class:`SpaceBusy` naming the holder, and nothing
        is stored. ``state`` (the owner's pid) is written in the same statement, so a sweep of
        dead turns never sees this one without its owner."""
        ts = now_iso()
        row = TurnRow(
            id=new_id(),
            space_id=space_id,
            conversation_id=conversation_id,
            mode=mode.value,
            transport=transport.value,
            status=TurnStatus.RUNNING.value,
            settings=settings,
            worktree=str(worktree),
            created_at=ts,
            updated_at=ts,
            state=dict(state or {}),
            claim=1,
        )
        try:
            with self._write() as s:
                s.add(row)
                s.flush()
                return _turn(row)
        except IntegrityError:
            raise self._busy(space_id) from None

    def _busy(self, space_id: str | None) -> StoreError:
        holder = self.active_turn(space_id) if space_id else None
        if holder is None:  # released in between: say so rather than name nothing
            return StoreError("the space's turn changed while this one started; try again")
        return SpaceBusy(holder)

    def active_turn(self, space_id: str) -> Turn | None:
        """The turn holding ``space_id`` (running or waiting), if any."""
        with self._read() as s:
            row = s.exec(
                select(TurnRow).where(
                    TurnRow.space_id == space_id,
                    col(TurnRow.status).in_([st.value for st in ACTIVE_TURN_STATUSES]),
                )
            ).first()
            return _turn(row) if row else None

    def claim_turn(self, seen: Turn, *, state: dict[str, Any]) -> Turn:
        """Make ``seen`` (as read by the caller) ``running`` for this process, in one conditional
        UPDATE: it succeeds only while the turn still has the claim counter and status the caller
        read, so of any number of simultaneous resumers exactly one wins; the others get
        :class:`ClaimLost` and nothing changes. A resumed turn also needs its space free (an
        interrupted turn whose space another turn holds gets :class:`SpaceBusy`)."""
        table = TurnRow.__table__  # type: ignore[attr-defined]
        try:
            with self._write() as s:
                result = s.execute(
                    table.update()
                    .where(
                        table.c.id == seen.id,
                        table.c.claim == seen.claim,
                        table.c.status == seen.status.value,
                    )
                    .values(
                        status=TurnStatus.RUNNING.value,
                        error=None,
                        state=state,
                        claim=seen.claim + 1,
                        updated_at=now_iso(),
                    )
                )
                won = result.rowcount == 1
        except IntegrityError:
            raise self._busy(seen.space_id) from None
        current = self.turn(seen.id)
        if current is None:
            raise NotFound(f"no turn {seen.id!r} in this workspace")
        if not won:
            raise ClaimLost(current)
        return current

    def turn(self, turn_id: str) -> Turn | None:
        with self._read() as s:
            row = s.get(TurnRow, turn_id)
            return _turn(row) if row else None

    _TURN_FIELDS = frozenset(TurnRow.model_fields) - {"id"}

    def write_turn(self, turn_id: str, **fields: Any) -> None:
        """Set fields of a turn with one UPDATE (no read): the turn loop calls this after every
        step, and loading the row (its settings hold the whole script) would cost more."""
        update = self._turn_update(turn_id, fields)
        with self._write() as s:
            if s.execute(update).rowcount == 0:
                raise NotFound(f"no turn {turn_id!r} in this workspace")

    def _turn_update(self, turn_id: str, fields: dict[str, Any]) -> Any:
        values: dict[str, Any] = {}
        for key, value in fields.items():
            if key not in self._TURN_FIELDS:
                raise ValueError(f"cannot update turn field {key!r}")
            if isinstance(value, Path):
                value = str(value)
            values[key] = value.value if isinstance(value, TurnStatus | Mode | Transport) else value
        values["updated_at"] = now_iso()
        table = TurnRow.__table__  # type: ignore[attr-defined]
        return table.update().where(table.c.id == turn_id).values(**values)

    def update_turn(self, turn_id: str, **fields: Any) -> Turn:
        with self._write() as s:
            row = s.get(TurnRow, turn_id)
            if row is None:
                raise NotFound(f"no turn {turn_id!r} in this workspace")
            for key, value in fields.items():
                if not hasattr(row, key) or key == "id":
                    raise ValueError(f"cannot update turn field {key!r}")
                if isinstance(value, Path):
                    value = str(value)
                setattr(row, key, value.value if isinstance(value, TurnStatus | Mode | Transport) else value)
            row.updated_at = now_iso()
            s.add(row)
            s.flush()
            return _turn(row)

    def turns(self, *, status: TurnStatus | None = None, space_id: str | None = None) -> list[Turn]:
        with self._read() as s:
            q = select(TurnRow).order_by(col(TurnRow.created_at))
            if status is not None:
                q = q.where(TurnRow.status == status.value)
            if space_id is not None:
                q = q.where(TurnRow.space_id == space_id)
            return [_turn(r) for r in s.exec(q)]

    def space_usage(self, space_id: str) -> dict[str, Any]:
        """Token and cost totals of a space's turns, and those of its latest turn."""
        with self.engine.connect() as conn:
            total = conn.execute(
                text(
                    "SELECT COUNT(*), COALESCE(SUM(input_tokens + output_tokens), 0), "
                    "COALESCE(SUM(cost_usd), 0) FROM turn WHERE space_id = :space"
                ),
                {"space": space_id},
            ).one()
            last = conn.execute(
                text(
                    "SELECT input_tokens + output_tokens, cost_usd FROM turn WHERE space_id = :space "
                    "ORDER BY created_at DESC, id DESC LIMIT 1"
                ),
                {"space": space_id},
            ).first()
        return {
            "turns": int(total[0]),
            "tokens": int(total[1]),
            "cost": float(total[2]),
            "last_turn_tokens": int(last[0]) if last else 0,
            "last_turn_cost": float(last[1]) if last else 0.0,
        }

    def space_overview(self) -> tuple[dict[str, tuple[str, str, str | None]], dict[str, tuple[int, str]]]:
        """What each space's live state is folded from, in two queries: space id -> its most
        recently updated turn (id, status, error), and space id -> (pending items, the oldest
        pending item's summary)."""
        with self.engine.connect() as conn:
            turns = conn.exec_driver_sql(
                "SELECT space_id, id, status, error FROM (SELECT space_id, id, status, error, "
                "ROW_NUMBER() OVER (PARTITION BY space_id ORDER BY updated_at DESC, id DESC) AS n "
                "FROM turn WHERE space_id IS NOT NULL) AS latest WHERE n = 1"
            ).fetchall()
            pending = conn.exec_driver_sql(
                "SELECT space_id, summary FROM approval WHERE status = 'pending' AND space_id IS NOT NULL "
                "ORDER BY created_at"
            ).fetchall()
        waiting: dict[str, tuple[int, str]] = {}
        for space_id, summary in pending:
            count, first = waiting.get(space_id, (0, summary))
            waiting[space_id] = (count + 1, first)
        return {r[0]: (r[1], r[2], r[3]) for r in turns}, waiting

    def mark_running_turns_interrupted(
        self,
        is_alive: Callable[[dict[str, Any]], bool] = lambda _state: False,
        *,
        space_id: str | None = None,
    ) -> list[str]:
        """A turn still ``running`` whose process is gone (``is_alive(state)`` false) belongs to a
        process that died; it becomes ``interrupted`` (resumable) and frees its space. Run at
        start-up for all spaces, and before a turn claims ``space_id``. Nothing to free (nearly
        always) costs one read: the write unit, and its lock every other writer waits on, is
        taken only when a dead turn was seen (and the rows are read again under it)."""
        q = select(TurnRow).where(TurnRow.status == TurnStatus.RUNNING.value)
        if space_id is not None:
            q = q.where(TurnRow.space_id == space_id)
        with self._read() as s:
            if all(is_alive(dict(r.state or {})) for r in s.exec(q).all()):
                return []
        with self._write() as s:
            rows = s.exec(q).all()
            rows = [r for r in rows if not is_alive(dict(r.state or {}))]
            for row in rows:
                row.status = TurnStatus.INTERRUPTED.value
                row.error = "the process running this turn stopped; resume to continue"
                row.updated_at = now_iso()
                s.add(row)
            return [r.id for r in rows]

    # -- approvals ------------------------------------------------------------------------------

    # -- the tool call journal (at most once) ---------------------------------------------------

    def begin_call(
        self,
        turn_id: str,
        call_id: str,
        *,
        name: str,
        args: dict[str, Any],
        pid: int,
        spool: Path | None = None,
        allowed_by: str | None = None,
        allowed_ref: str | None = None,
    ) -> ToolCallRecord | None:
        """Claim the call before it runs, durably (one conditional INSERT). None: the caller owns
        it and may run it now. A record: someone started it before (maybe this turn before a
        crash, maybe another process right now); it must not run again."""
        # Portable across SQLite and PostgreSQL: the primary key refuses a second start.
        row = ToolCallRow(
            turn_id=turn_id,
            call_id=call_id,
            name=name,
            args=args,
            status="started",
            pid=pid,
            spool=str(spool) if spool is not None else None,
            started_at=now_iso(),
            allowed_by=allowed_by,
            allowed_ref=allowed_ref,
        )
        try:
            with self._write() as s:
                s.add(row)
                s.flush()
            return None
        except IntegrityError:
            existing = self.call_record(turn_id, call_id)
            assert existing is not None
            return existing

    def finish_call(self, turn_id: str, call_id: str, *, output: str, is_error: bool) -> None:
        """Record the call's result (only over a start that has none: a result is never replaced)."""
        table = ToolCallRow.__table__  # type: ignore[attr-defined]
        with self._write() as s:
            s.execute(
                table.update()
                .where(table.c.turn_id == turn_id, table.c.call_id == call_id, table.c.status == "started")
                .values(status="finished", output=output, is_error=is_error, finished_at=now_iso())
            )

    def call_record(self, turn_id: str, call_id: str) -> ToolCallRecord | None:
        with self._read() as s:
            row = s.get(ToolCallRow, (turn_id, call_id))
            return _call_record(row) if row is not None else None

    def call_records(self, turn_id: str) -> list[ToolCallRecord]:
        with self._read() as s:
            rows = s.exec(
                select(ToolCallRow)
                .where(ToolCallRow.turn_id == turn_id)
                .order_by(col(ToolCallRow.started_at))
            ).all()
            return [_call_record(r) for r in rows]

    def create_approval(
        self,
        *,
        kind: ApprovalKind,
        space_id: str | None,
        turn_id: str | None,
        summary: str,
        payload: dict[str, Any],
    ) -> Approval:
        with self._write() as s:
            if kind.versioned and space_id is not None:
                # In the same write: a newer plan or proposal version retires the older pending
                # one, so it neither waits in the Inbox nor keeps its space "needs you".
                s.connection().execute(
                    text(
                        "UPDATE approval SET status = :new, decided_at = :at, decided_by = :by, "
                        "reason = :reason WHERE kind = :kind AND space_id = :space AND status = :old"
                    ),
                    {
                        "new": ApprovalStatus.SUPERSEDED.value,
                        "at": now_iso(),
                        "by": "system",
                        "reason": "a newer version replaced it",
                        "kind": kind.value,
                        "space": space_id,
                        "old": ApprovalStatus.PENDING.value,
                    },
                )
            row = ApprovalRow(
                id=new_id(),
                kind=kind.value,
                status=ApprovalStatus.PENDING.value,
                space_id=space_id,
                turn_id=turn_id,
                summary=summary,
                payload=payload,
                created_at=now_iso(),
            )
            s.add(row)
            s.flush()
            return approval_row_value(row)

    def approval(self, approval_id: str | None) -> Approval | None:
        if not approval_id:  # a call whose Inbox item was never opened (see loop's recovery)
            return None
        with self._read() as s:
            row = s.get(ApprovalRow, approval_id)
            return approval_row_value(row) if row else None

    def approvals(
        self,
        *,
        status: ApprovalStatus | None = None,
        kind: ApprovalKind | None = None,
        space_id: str | None = None,
        turn_id: str | None = None,
        changed_since: str | None = None,
        limit: int | None = None,
    ) -> list[Approval]:
        """Newest first, at most ``limit``. ``changed_since`` (an ISO timestamp) keeps those
        created or decided at or after it: an Inbox refresh reads what changed, not the whole
        history. (store/reader.py answers the same query with the standard library's sqlite3.)"""
        # Straight SQL and one json.loads per row: a listing may read the whole history, and mapped
        # objects (or even typed Core rows) cost seconds at 100,000 approvals. Timestamps have
        # millisecond resolution; ids (which sort in creation order) break ties.
        where: list[str] = []
        params: dict[str, Any] = {}
        for column, value in (
            ("status", status.value if status else None),
            ("kind", kind.value if kind else None),
            ("space_id", space_id),
            ("turn_id", turn_id),
        ):
            if value is not None:
                where.append(f"{column} = :{column}")
                params[column] = value
        if changed_since is not None:
            where.append("(created_at >= :since OR decided_at >= :since)")
            params["since"] = changed_since
        sql = (
            "SELECT id, kind, status, space_id, turn_id, summary, payload, created_at, decided_at, "
            "decided_by, reason FROM approval"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY created_at DESC, id DESC"
            + (" LIMIT :limit" if limit is not None else "")
        )
        if limit is not None:
            params["limit"] = max(0, limit)
        with self.engine.connect() as conn:
            rows = conn.execute(text(sql), params).fetchall()
        return self._approval_values(rows)

    # -- the Inbox's window onto the approval history (keyset pages, counts by index) -----------

    @staticmethod
    def _approval_query_where(query: ApprovalQuery) -> tuple[list[str], dict[str, Any]]:
        where: list[str] = []
        params: dict[str, Any] = {}
        if query.kind is not None:
            where.append("kind = :kind")
            params["kind"] = query.kind.value
        if query.space_id is not None:
            where.append("space_id = :space_id")
            params["space_id"] = query.space_id
        if query.status != "all":
            where.append("status = :pending" if query.status == "pending" else "status <> :pending")
            params["pending"] = ApprovalStatus.PENDING.value
        return where, params

    def approval_page(
        self, query: ApprovalQuery, *, before: tuple[str, str] | None = None, limit: int = 200
    ) -> list[Approval]:
        """At most ``limit`` approvals matching ``query``, newest first, strictly older than the
        key ``before`` (created_at, id) when given: a keyset page, one index range per call
        however long the history (indexes: status/kind/space + created_at, created_at)."""
        where, params = self._approval_query_where(query)
        if before is not None:
            where.append("(created_at < :before_at OR (created_at = :before_at AND id < :before_id))")
            params["before_at"], params["before_id"] = before
        params["limit"] = max(0, limit)
        sql = (
            "SELECT id, kind, status, space_id, turn_id, summary, payload, created_at, decided_at, "
            "decided_by, reason FROM approval"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY created_at DESC, id DESC LIMIT :limit"
        )
        with self.engine.connect() as conn:
            rows = conn.execute(text(sql), params).fetchall()
        return self._approval_values(rows)

    def approval_counts(self, query: ApprovalQuery) -> ApprovalCounts:
        """How many approvals match ``query`` and how many wait (two counts over indexes)."""

        def count(q: ApprovalQuery) -> str:
            where, _ = self._approval_query_where(q)
            return "(SELECT count(*) FROM approval" + (" WHERE " + " AND ".join(where) if where else "") + ")"

        _, params = self._approval_query_where(query)
        if query.status == "decided":
            # Everything minus what waits: two index ranges, where "status <> 'pending'" would
            # scan every row.
            params["pending"] = ApprovalStatus.PENDING.value
            every, waiting = replace(query, status="all"), replace(query, status="pending")
            sql = f"SELECT {count(every)} - {count(waiting)}"
        else:
            sql = f"SELECT {count(query)}"
        with self.engine.connect() as conn:
            matching = conn.execute(text(sql), params).scalar_one()
            pending = conn.execute(
                text("SELECT count(*) FROM approval WHERE status = :pending"),
                {"pending": ApprovalStatus.PENDING.value},
            ).scalar_one()
        return ApprovalCounts(int(matching), int(pending))

    def approval_space_ids(self) -> list[str]:
        """The spaces that have approvals (the Inbox's space filter), from the space index."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                text("SELECT DISTINCT space_id FROM approval WHERE space_id IS NOT NULL")
            ).fetchall()
        return sorted(r[0] for r in rows)

    def approval_watermark(self) -> str:
        """The newest creation or decision time in the history ("" when there is none): changes
        after it are what a live Inbox asks for (both columns are indexed: two index lookups)."""
        with self.engine.connect() as conn:
            created, decided = conn.execute(
                text("SELECT (SELECT max(created_at) FROM approval), (SELECT max(decided_at) FROM approval)")
            ).one()
        return max(created or "", decided or "")

    def _approval_values(self, rows: Sequence[Any]) -> list[Approval]:
        load_json = self.dialect.load_json
        return [
            Approval(
                id=r[0],
                kind=ApprovalKind(r[1]),
                status=ApprovalStatus(r[2]),
                space_id=r[3],
                turn_id=r[4],
                summary=r[5],
                payload=load_json(r[6]) if r[6] else {},
                created_at=r[7],
                decided_at=r[8],
                decided_by=r[9],
                reason=r[10],
            )
            for r in rows
        ]

    def approvals_by_id(self, approval_ids: Sequence[str]) -> dict[str, Approval]:
        """id -> approval for the given ids (what a transcript page's cards show), bound in
        chunks like :meth:`thread_counts`."""
        ids = list(approval_ids)
        out: dict[str, Approval] = {}
        with self._read() as s:
            for start in range(0, len(ids), _IN_CHUNK):
                rows = s.exec(
                    select(ApprovalRow).where(col(ApprovalRow.id).in_(ids[start : start + _IN_CHUNK]))
                )
                out.update({r.id: approval_row_value(r) for r in rows})
        return out

    def decide_approval(
        self, approval_id: str, status: ApprovalStatus, *, by: str, reason: str | None = None
    ) -> Approval:
        with self._write() as s:
            row = s.get(ApprovalRow, approval_id)
            if row is None:
                raise NotFound(f"no approval {approval_id!r} in this workspace")
            if row.status != ApprovalStatus.PENDING.value:
                raise StoreError(_settled_message(row))
            if (row.kind == ApprovalKind.QUESTION.value) != (status is ApprovalStatus.ANSWERED):
                raise StoreError(
                    f"approval {approval_id} is a question: answer it (control-center approvals answer)"
                    if row.kind == ApprovalKind.QUESTION.value
                    else f"approval {approval_id} is not a question; decide it with grant or reject"
                )
            row.status = status.value
            row.decided_at = now_iso()
            row.decided_by = by
            row.reason = reason
            s.add(row)
            s.flush()
            return approval_row_value(row)

    def answer_question(self, approval_id: str, answer: str, *, by: str) -> Approval:
        """Record the operator's answer to a ``question`` (status ``answered``), in one write."""
        with self._write() as s:
            row = s.get(ApprovalRow, approval_id)
            if row is None:
                raise NotFound(f"no approval {approval_id!r} in this workspace")
            if row.kind != ApprovalKind.QUESTION.value:
                raise StoreError(f"approval {approval_id} is a {row.kind} approval, not a question")
            if row.status != ApprovalStatus.PENDING.value:
                raise StoreError(_settled_message(row))
            row.status = ApprovalStatus.ANSWERED.value
            row.decided_at = now_iso()
            row.decided_by = by
            row.payload = {**row.payload, "answer": answer}
            s.add(row)
            s.flush()
            return approval_row_value(row)

    def update_approval_payload(self, approval_id: str, **payload: Any) -> Approval:
        with self._write() as s:
            row = s.get(ApprovalRow, approval_id)
            if row is None:
                raise NotFound(f"no approval {approval_id!r}")
            row.payload = {**row.payload, **payload}
            s.add(row)
            s.flush()
            return approval_row_value(row)

    # -- plans ----------------------------------------------------------------------------------

    def add_plan(
        self, *, space_id: str, turn_id: str | None, graph: dict[str, Any], content_hash: str
    ) -> tuple[str, int]:
        """Store a new plan version (earlier pending versions become superseded)."""
        with self._write() as s:
            prior = s.exec(select(PlanRow).where(PlanRow.space_id == space_id)).all()
            for p in prior:
                if p.status == "pending":
                    p.status = "superseded"
                    s.add(p)
            row = PlanRow(
                id=new_id(),
                space_id=space_id,
                turn_id=turn_id,
                version=len(prior) + 1,
                graph=graph,
                content_hash=content_hash,
                status="pending",
                created_at=now_iso(),
            )
            s.add(row)
            return row.id, row.version

    def plans(self, space_id: str) -> list[PlanRecord]:
        with self._read() as s:
            return [
                _record(PlanRecord, r)
                for r in s.exec(
                    select(PlanRow).where(PlanRow.space_id == space_id).order_by(col(PlanRow.version))
                )
            ]

    def plan(self, plan_id: str) -> PlanRecord | None:
        with self._read() as s:
            return _maybe(PlanRecord, s.get(PlanRow, plan_id))

    def update_plan(self, plan_id: str, **fields: Any) -> None:
        with self._write() as s:
            row = s.get(PlanRow, plan_id)
            if row is None:
                raise NotFound(f"no plan {plan_id!r}")
            for k, v in fields.items():
                setattr(row, k, v)
            s.add(row)

    def add_plan_comment(self, plan_id: str, node: str, text: str, *, by: str) -> PlanComment:
        """Store the operator's comment on a node of a plan version (checked in the same write,
        so two windows commenting at once cannot pass the bound together)."""
        with self._write() as s:
            row = s.get(PlanRow, plan_id)
            if row is None:
                raise NotFound(f"no plan {plan_id!r}")
            if row.status != "pending":
                raise StoreError(
                    f"plan v{row.version} is {row.status}: only a plan waiting for approval takes comments"
                )
            try:
                cleaned = check_comment(parse_plan(row.graph), node, text, len(row.comments or []))
            except PlanReviewError as exc:
                raise StoreError(str(exc)) from None
            comment = PlanComment(new_id(), node, cleaned, by, now_iso())
            row.comments = [*(row.comments or []), comment.to_json()]
            s.add(row)
            return comment

    def remove_plan_comment(self, plan_id: str, comment_id: str) -> None:
        """Delete a comment not sent yet (a sent one is part of what the agent was told)."""
        with self._write() as s:
            row = s.get(PlanRow, plan_id)
            if row is None:
                raise NotFound(f"no plan {plan_id!r}")
            kept = [c for c in row.comments or [] if not (c.get("id") == comment_id and not c.get("sent"))]
            if len(kept) == len(row.comments or []):
                raise StoreError(f"plan v{row.version} has no unsent comment {comment_id!r}")
            row.comments = kept
            s.add(row)

    def mark_plan_comments_sent(self, plan_id: str) -> tuple[PlanComment, ...]:
        """Mark every unsent comment of the plan sent and return them (the rejection quotes them)."""
        with self._write() as s:
            row = s.get(PlanRow, plan_id)
            if row is None:
                raise NotFound(f"no plan {plan_id!r}")
            fresh = comments_of(c for c in row.comments or [] if not c.get("sent"))
            row.comments = [{**c, "sent": True} for c in row.comments or []]
            s.add(row)
            return fresh

    # -- orchestration proposals ----------------------------------------------------------------

    def add_proposal(self, *, space_id: str, turn_id: str | None, payload: dict[str, Any]) -> str:
        with self._write() as s:
            for p in s.exec(
                select(ProposalRow).where(ProposalRow.space_id == space_id, ProposalRow.status == "pending")
            ):
                p.status = "superseded"
                s.add(p)
            row = ProposalRow(
                id=new_id(),
                space_id=space_id,
                turn_id=turn_id,
                payload=payload,
                status="pending",
                created_at=now_iso(),
                created_ts=time.time(),
            )
            s.add(row)
            return row.id

    def proposals(self, space_id: str) -> list[ProposalRecord]:
        with self._read() as s:
            return [
                _record(ProposalRecord, r)
                for r in s.exec(
                    select(ProposalRow)
                    .where(ProposalRow.space_id == space_id)
                    .order_by(col(ProposalRow.created_ts))
                )
            ]

    def proposal(self, proposal_id: str) -> ProposalRecord | None:
        with self._read() as s:
            return _maybe(ProposalRecord, s.get(ProposalRow, proposal_id))

    def update_proposal(self, proposal_id: str, **fields: Any) -> None:
        with self._write() as s:
            row = s.get(ProposalRow, proposal_id)
            if row is None:
                raise NotFound(f"no proposal {proposal_id!r}")
            for k, v in fields.items():
                setattr(row, k, v)
            s.add(row)

    # -- review ---------------------------------------------------------------------------------

    def add_review_node(self, *, space_id: str, author: str, raw: dict[str, Any], **tracking: Any) -> str:
        """Store a finding in the review's current revision (``tracking``: the identity columns of
        a finding continued from an earlier revision)."""
        with self._write() as s:
            review = s.get(ReviewRow, space_id)
            row = ReviewNodeRow(
                id=new_id(),
                space_id=space_id,
                author=author,
                raw=raw,
                created_at=now_iso(),
                revision=review.revision if review is not None else 1,
            )
            for k, v in tracking.items():
                setattr(row, k, v)
            s.add(row)
            return row.id

    def review_nodes(self, space_id: str, revision: int | None = None) -> list[ReviewNodeRecord]:
        """The findings of one revision of the review (default: the current one), oldest first."""
        with self._read() as s:
            if revision is None:
                review = s.get(ReviewRow, space_id)
                revision = review.revision if review is not None else 1
            return [
                _record(ReviewNodeRecord, r)
                for r in s.exec(
                    select(ReviewNodeRow)
                    .where(ReviewNodeRow.space_id == space_id, ReviewNodeRow.revision == revision)
                    .order_by(col(ReviewNodeRow.created_at), col(ReviewNodeRow.id))
                )
            ]

    def update_review_nodes(self, changes: dict[str, dict[str, Any]]) -> None:
        """Write identity columns (fingerprint, lineage, status, operator decision...) of several
        findings in one transaction."""
        with self._write() as s:
            for node_id, fields in changes.items():
                row = s.get(ReviewNodeRow, node_id)
                if row is None:
                    raise NotFound(f"no review node {node_id!r}")
                for k, v in fields.items():
                    setattr(row, k, v)
                s.add(row)

    def reconcile_review_nodes(
        self,
        space_id: str,
        revision: int,
        updates: dict[str, dict[str, Any]],
        carried: list[dict[str, Any]],
    ) -> None:
        """One reconciliation of ``revision``, in one transaction (a reader never sees it half
        done): the copies the previous one continued are replaced by ``carried`` (each the
        fields of a new row), and ``updates`` are written to the revision's own findings."""
        with self._write() as s:
            for row in s.exec(
                select(ReviewNodeRow).where(
                    ReviewNodeRow.space_id == space_id,
                    ReviewNodeRow.revision == revision,
                    col(ReviewNodeRow.carried).is_(True),
                )
            ):
                s.delete(row)
            for node_id, fields in updates.items():
                found = s.get(ReviewNodeRow, node_id)
                if found is None:
                    raise NotFound(f"no review node {node_id!r}")
                for k, v in fields.items():
                    setattr(found, k, v)
                s.add(found)
            for fields in carried:
                s.add(
                    ReviewNodeRow(
                        id=new_id(),
                        space_id=space_id,
                        created_at=now_iso(),
                        revision=revision,
                        carried=True,
                        **fields,
                    )
                )

    def begin_review_revision(self, space_id: str, head_sha: str) -> int:
        """Start the next revision of a review at ``head_sha``: the current verdict, summary and
        gate results go to ``revisions`` (history) and the new revision starts unfinalized. The
        operator's decision stays. Returns the new revision's number."""
        with self._write() as s:
            row = s.get(ReviewRow, space_id) or ReviewRow(space_id=space_id)
            history = list(row.revisions or [])
            history.append(
                {
                    "revision": row.revision or 1,
                    "head_sha": row.head_sha,
                    "agent_verdict": row.agent_verdict,
                    "summary": row.summary,
                    "axes": list(row.axes or []),
                    "finalized_at": row.finalized_at,
                    "resolution_claims": list(row.resolution_claims or []),
                }
            )
            row.revisions = history
            row.revision = (row.revision or 1) + 1
            row.head_sha = head_sha
            row.agent_verdict = None
            row.summary = None
            row.axes = []
            row.finalized_at = None
            row.resolution_claims = []
            s.add(row)
            return row.revision

    def review_node(self, node_id: str) -> ReviewNodeRecord | None:
        with self._read() as s:
            return _maybe(ReviewNodeRecord, s.get(ReviewNodeRow, node_id))

    def set_review_node_state(self, node_id: str, *, state: str, confirmed_by: str) -> None:
        with self._write() as s:
            row = s.get(ReviewNodeRow, node_id)
            if row is None:
                raise NotFound(f"no review node {node_id!r}")
            row.state = state
            row.confirmed_by = confirmed_by
            s.add(row)

    def review(self, space_id: str) -> ReviewRecord | None:
        with self._read() as s:
            return _maybe(ReviewRecord, s.get(ReviewRow, space_id))

    def save_review(self, space_id: str, **fields: Any) -> None:
        with self._write() as s:
            row = s.get(ReviewRow, space_id) or ReviewRow(space_id=space_id)
            for k, v in fields.items():
                setattr(row, k, v)
            s.add(row)

    # -- tickets, agents, projects --------------------------------------------------------------

    def add_ticket(
        self,
        *,
        space_id: str | None,
        title: str,
        body: str,
        parent: str | None,
        created_by: str,
        ticket_id: str | None = None,
    ) -> str:
        with self._write() as s:
            if ticket_id and s.get(TicketRow, ticket_id):
                return ticket_id
            row = TicketRow(
                id=ticket_id or new_id(),
                space_id=space_id,
                title=title,
                body=body,
                parent=parent,
                created_by=created_by,
                created_at=now_iso(),
            )
            s.add(row)
            return row.id

    def tickets(self, space_id: str | None = None) -> list[TicketRecord]:
        with self._read() as s:
            q = select(TicketRow).order_by(col(TicketRow.created_at))
            if space_id is not None:
                q = q.where(TicketRow.space_id == space_id)
            return [_record(TicketRecord, r) for r in s.exec(q)]

    def ensure_agent(self, *, agent_id: str, name: str, role: str, instructions: str) -> bool:
        """Create the agent unless it exists; returns whether it was created (idempotent hire)."""
        with self._write() as s:
            if s.get(AgentRow, agent_id):
                return False
            s.add(
                AgentRow(id=agent_id, name=name, role=role, instructions=instructions, created_at=now_iso())
            )
            return True

    def agents(self) -> list[AgentRecord]:
        with self._read() as s:
            return [
                _record(AgentRecord, r) for r in s.exec(select(AgentRow).order_by(col(AgentRow.created_at)))
            ]

    def ensure_project(self, *, project_id: str, name: str, source: str) -> bool:
        with self._write() as s:
            if s.get(ProjectRow, project_id):
                return False
            s.add(ProjectRow(id=project_id, name=name, source=source, created_at=now_iso()))
            return True

    def projects(self) -> list[ProjectRecord]:
        with self._read() as s:
            return [_record(ProjectRecord, r) for r in s.exec(select(ProjectRow))]

    # -- pipelines ------------------------------------------------------------------------------

    def create_pipeline(
        self,
        *,
        space_id: str | None,
        source_kind: str,
        source_id: str,
        spec: dict[str, Any],
        state: dict[str, Any],
        pipeline_id: str | None = None,
    ) -> str:
        ts = now_iso()
        with self._write() as s:
            if pipeline_id and s.get(PipelineRow, pipeline_id):
                return pipeline_id
            row = PipelineRow(
                id=pipeline_id or new_id(),
                space_id=space_id,
                source_kind=source_kind,
                source_id=source_id,
                spec=spec,
                state=state,
                status="running",
                created_at=ts,
                updated_at=ts,
            )
            s.add(row)
            return row.id

    def pipeline(self, pipeline_id: str) -> PipelineRecord | None:
        with self._read() as s:
            return _maybe(PipelineRecord, s.get(PipelineRow, pipeline_id))

    def pipelines(
        self, *, space_id: str | None = None, status: str | None = None, statuses: Sequence[str] = ()
    ) -> list[PipelineRecord]:
        """Pipelines oldest first: of one space, in one status, or in any of ``statuses``."""
        with self._read() as s:
            q = select(PipelineRow).order_by(col(PipelineRow.created_at))
            if space_id is not None:
                q = q.where(PipelineRow.space_id == space_id)
            if status is not None:
                q = q.where(PipelineRow.status == status)
            if statuses:
                q = q.where(col(PipelineRow.status).in_(list(statuses)))
            return [_record(PipelineRecord, r) for r in s.exec(q)]

    def pipeline_ids(self) -> list[str]:
        """Every pipeline's id (no spec or state read): what a caller that keeps pipelines
        indexed checks for runs it has not seen."""
        with self._read() as s:
            return list(s.exec(select(PipelineRow.id)))

    def update_pipeline(self, pipeline_id: str, **fields: Any) -> None:
        with self._write() as s:
            row = s.get(PipelineRow, pipeline_id)
            if row is None:
                raise NotFound(f"no pipeline {pipeline_id!r}")
            for k, v in fields.items():
                setattr(row, k, v)
            row.updated_at = now_iso()
            s.add(row)

    # -- turn events (team mode: a worker's turn, streamed to the operator who queued it) -------

    def add_turn_event(
        self, request_id: str, seq: int, payload: dict[str, Any], *, turn_id: str | None, worker: str | None
    ) -> None:
        """Record one event and wake every listener (PostgreSQL NOTIFY on commit)."""
        self.add_turn_events(request_id, [(seq, payload, turn_id)], worker=worker)

    def add_turn_events(
        self,
        request_id: str,
        events: list[tuple[int, dict[str, Any], str | None]],
        *,
        worker: str | None,
        emitted_ts: list[float] | None = None,
        pipeline: str | None = None,
    ) -> None:
        """Record a request's events (seq, payload, turn id) in one transaction with one NOTIFY.
        Each keeps the time it was emitted (``emitted_ts``, else now): a batch's later events are
        not made to look older than they are. No write lock: these rows are only inserted (the
        unique (request, seq) index refuses a duplicate), so a worker's events never wait for
        another worker's write unit. The NOTIFY says the request, then the pipeline whose step
        it is (``pipeline``): a window follows every step without reading every request."""
        if not events:
            return
        now = time.time()
        stamps = emitted_ts if emitted_ts is not None else [now] * len(events)
        with self._write(insert_only=True) as s:
            for (seq, payload, turn_id), ts in zip(events, stamps, strict=True):
                s.add(
                    TurnEventRow(
                        id=new_id(),
                        request_id=request_id,
                        seq=seq,
                        turn_id=turn_id,
                        worker=worker,
                        payload=payload,
                        created_ts=ts,
                    )
                )
            s.flush()
            note = f"{request_id} {pipeline}" if pipeline else request_id
            self.dialect.notify(s.connection(), TURN_EVENTS_CHANNEL, note)

    def turn_events(self, request_id: str, *, after_seq: int = -1) -> list[tuple[int, dict[str, Any], float]]:
        """(seq, payload, created_ts) of the request's events after ``after_seq``, in order."""
        with self._read() as s:
            rows = s.exec(
                select(TurnEventRow)
                .where(TurnEventRow.request_id == request_id, TurnEventRow.seq > after_seq)
                .order_by(col(TurnEventRow.seq))
            ).all()
            return [(r.seq, dict(r.payload), r.created_ts) for r in rows]

    # -- presence (team mode: who is looking at what) -------------------------------------------

    def set_presence(
        self, viewer_id: str, operator: str, *, space_id: str | None, approval_id: str | None
    ) -> None:
        """Say what this app shows now (also its heartbeat: call it again to stay present)."""
        with self._write() as s:
            row = s.get(PresenceRow, viewer_id)
            if row is None:
                row = PresenceRow(viewer_id=viewer_id, operator=operator, seen_ts=0.0)
            row.operator, row.space_id, row.approval_id = operator, space_id, approval_id
            now = float(s.execute(text(f"SELECT {self.dialect.epoch_now}")).scalar_one())
            row.seen_ts = now
            s.add(row)
            # Apps that crashed leave a row; a day later it goes.
            s.execute(text("DELETE FROM presence WHERE seen_ts < :old"), {"old": now - 86400})

    def clear_presence(self, viewer_id: str) -> None:
        with self._write() as s:
            row = s.get(PresenceRow, viewer_id)
            if row is not None:
                s.delete(row)

    def presence(self, *, fresher_than_s: float) -> list[Presence]:
        """Every app that said what it shows within the last ``fresher_than_s`` seconds."""
        with self._read() as s:
            rows = s.execute(
                text(
                    f"SELECT viewer_id, operator, space_id, approval_id, {self.dialect.epoch_now} - seen_ts "
                    "FROM presence ORDER BY operator, viewer_id"
                )
            ).all()
        return [
            Presence(str(v), str(o), sp, ap, float(age))
            for v, o, sp, ap, age in rows
            if float(age) <= fresher_than_s
        ]


def _pid_alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
