"""Where the floor recorder keeps every table's messages: SQLite or PostgreSQL.

One row per engine message, keyed by the table and the message's ``seq`` (up by one per
message of a table, docs/design.md invariant 3), so a message delivered twice (QoS 1, a
reconnection, a recorder restart) is stored once. The body is kept exactly as published.
A second message with the same table and ``seq`` but another body is not a duplicate: a
table whose journal was wiped starts its numbering again. It is kept in ``conflicts`` and
counted, never silently dropped.

Only facts are kept whole. A derived view (``roads``: :data:`baccarat.floor.bodies.DERIVED_TOPICS`),
a function of the table's earlier messages that :mod:`baccarat.floor.derived` makes again
byte for byte, is kept whole only as the table's latest of its topic (``latest``); of every
other one its ``seq``, topic (the last level) and ``ts`` are kept in ``derived``, so that a
gap in a table's ``seq`` is still told from a view not stored, and a view of any moment
can be rebuilt with its own ``seq`` and ``ts``.

Schema (the same on both databases)::

    messages  (tbl, seq)  topic, type, shoe, round, ts, received, body
    derived   (tbl, seq)  topic, ts        -- a derived view's place in the sequence
    latest    (tbl, topic) seq, received, body  -- the newest derived view, whole
    conflicts            tbl, seq, topic, received, body
    status    (tbl)      received, body    -- the table's latest retained status
    quarantine           received, topic, reason, size, payload (bytes)  -- by (topic, received)

``quarantine`` keeps what came from the broker and must not be stored as a message: a body
the screen refused (:mod:`baccarat.floor.bodies`), or one the database itself refused
(:class:`StoreRefusedError`), with the reason, the topic, the time it came, its size and its
first :data:`QUARANTINE_KEEP` bytes as they came (BLOB on SQLite, BYTEA on PostgreSQL).

``open_store("floor.db")`` or ``open_store("sqlite:///var/lib/floor.db")`` gives SQLite
(WAL, synchronous=FULL: a batch is on disk when :meth:`Store.add` returns);
``open_store("postgresql://user@host/db")`` gives PostgreSQL through psycopg 3. Every
method is blocking: the recorder calls them from one worker thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from baccarat.errors import BaccaratError
from baccarat.floor.bodies import DERIVED_TOPICS

log = logging.getLogger(__name__)

SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS messages (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL, type TEXT NOT NULL,
        shoe BIGINT, round BIGINT, ts DOUBLE PRECISION, received DOUBLE PRECISION NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (tbl, seq))""",
    """CREATE INDEX IF NOT EXISTS messages_by_shoe ON messages (tbl, shoe, seq)""",
    """CREATE TABLE IF NOT EXISTS conflicts (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL,
        received DOUBLE PRECISION NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS status (
        tbl TEXT PRIMARY KEY, received DOUBLE PRECISION NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS quarantine (
        received DOUBLE PRECISION NOT NULL, topic TEXT NOT NULL, reason TEXT NOT NULL,
        size BIGINT NOT NULL, payload BLOB NOT NULL)""",
    """CREATE INDEX IF NOT EXISTS quarantine_by_topic ON quarantine (topic, received)""",
    """CREATE TABLE IF NOT EXISTS derived (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL, ts DOUBLE PRECISION,
        PRIMARY KEY (tbl, seq)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS latest (
        tbl TEXT NOT NULL, topic TEXT NOT NULL, seq BIGINT NOT NULL,
        received DOUBLE PRECISION NOT NULL, body TEXT NOT NULL, PRIMARY KEY (tbl, topic))""",
)
LATEST_EVERY: Final = 10.0
"""Seconds between two writes of one table's latest derived view of a topic. A 20 kB roads
body rewritten in place at every result slowed the recorder (bench/README.md, "Facts, not
copies"); the views in between are made again from the facts, and the newest is written at
most this much later (and at close)."""
QUARANTINE_KEEP: Final = 64 * 1024
"""Bytes of a quarantined body that are kept (its size is kept whole)."""


class StoreError(BaccaratError):
    """The database cannot be opened or written; the text says which and why."""


class StoreUnavailableError(StoreError):
    """The database cannot take anything now (connection lost, disk full, locked): retry."""


class StoreRefusedError(StoreError):
    """The database refused what it was given (a value it cannot hold): not worth a retry."""


@dataclass(frozen=True, slots=True)
class Received:
    """One message as it came from the broker, parsed enough to be stored."""

    table: str
    topic: str
    body: dict[str, Any]
    payload: str
    received: float

    @property
    def seq(self) -> int | None:
        """The engine's sequence number, if the body has one."""
        seq = self.body.get("seq")
        return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


@dataclass(frozen=True, slots=True)
class Quarantined:
    """Something from the broker that is kept aside, not stored as a message, and why."""

    topic: str
    payload: bytes
    reason: str
    received: float
    cause: str = "shape"
    """The reason's class (:data:`baccarat.floor.bodies.CAUSES`), for the recorder's count."""

    def row(self) -> tuple[Any, ...]:
        """The ``quarantine`` row: the topic and reason made safe for any database."""
        return (
            self.received, _safe_text(self.topic, 1024), _safe_text(self.reason, 1024),
            len(self.payload), self.payload[:QUARANTINE_KEEP],
        )


@dataclass
class AddResult:
    """What one :meth:`Store.add` did with its batch."""

    stored: int = 0
    duplicates: int = 0
    conflicts: int = 0
    statuses: int = 0
    quarantined: int = 0


@dataclass(frozen=True, slots=True)
class TableTail:
    """A table's newest stored message and its latest status, as the store holds them."""

    table: str
    last_seq: int | None
    last_received: float | None
    status: dict[str, Any] | None
    status_received: float | None


@dataclass(frozen=True, slots=True)
class QuarantineTopic:
    """What the quarantine holds of one topic: how many, and the newest one's time and reason."""

    topic: str
    count: int
    newest: float
    reason: str


@dataclass(frozen=True, slots=True)
class ShoeSummary:
    """One shoe of a table as stored: its number, how many messages, first and last ``ts``."""

    shoe: int
    messages: int
    first: float | None
    last: float | None


@dataclass(frozen=True, slots=True)
class DerivedSeq:
    """A derived view the store did not keep whole: its ``seq``, topic (last level) and ``ts``."""

    seq: int
    topic: str
    ts: float | None


@dataclass(frozen=True, slots=True)
class LatestView:
    """A table's newest derived view of a topic, as published."""

    table: str
    topic: str
    seq: int
    body: str


class Store(Protocol):
    """A database of floor messages."""

    def add(
        self, batch: Sequence[Received], quarantine: Sequence[Quarantined] = ()
    ) -> AddResult:
        """Store a batch and quarantine rows in one transaction; durable when this returns.

        :class:`StoreUnavailableError` if the database cannot take it now,
        :class:`StoreRefusedError` if it refused a value of the batch.
        """
        ...

    def reconnect(self) -> None:
        """Open the database again (after :class:`StoreUnavailableError`); StoreError if not."""
        ...

    def quarantined(self) -> list[tuple[str, str, bytes]]:
        """(topic, reason, payload) of every quarantined message, oldest first."""
        ...

    def quarantine_topics(self, most: int = 1000) -> list[QuarantineTopic]:
        """The quarantine by topic: the ``most`` topics quarantined most recently, newest first."""
        ...

    def tails(self) -> list[TableTail]:
        """Each table's newest stored message and latest status, by table."""
        ...

    def facts(self, table: str, until_seq: int | None = None) -> list[dict[str, Any]]:
        """The table's stored facts (bodies), by ``seq``, up to ``until_seq`` if given."""
        ...

    def derived(self, table: str, until_seq: int | None = None) -> list[DerivedSeq]:
        """The table's derived views not kept whole: (seq, topic, ts), by ``seq``."""
        ...

    def latest(self, table: str | None = None) -> list[LatestView]:
        """The newest derived view of each table and topic, whole, by table then topic."""
        ...

    def seqs(self, table: str | None = None) -> Iterator[tuple[str, int]]:
        """(table, seq) of every message stored or recorded as derived, by table then seq."""
        ...

    def messages(
        self,
        table: str | None = None,
        shoe: int | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(table, body) of the stored messages, by table then ``seq``."""
        ...

    def shoes(self, table: str, newest: int = 500) -> list[ShoeSummary]:
        """The table's ``newest`` shoes (by their first message), oldest first."""
        ...

    def count(self) -> int:
        """How many messages are stored."""
        ...

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query (``?`` placeholders) of a module's own (floor/shuffle_store)."""
        ...

    def write(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement for each row, in one transaction; StoreError if it fails."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


INSERT_MESSAGE: Final = (
    "INSERT INTO messages (tbl, seq, topic, type, shoe, round, ts, received, body)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tbl, seq) DO NOTHING"
)
INSERT_QUARANTINE: Final = (
    "INSERT INTO quarantine (received, topic, reason, size, payload) VALUES (?, ?, ?, ?, ?)"
)
INSERT_DERIVED: Final = (
    "INSERT INTO derived (tbl, seq, topic, ts) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (tbl, seq) DO NOTHING"
)
UPSERT_LATEST: Final = (
    "INSERT INTO latest (tbl, topic, seq, received, body) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (tbl, topic) DO UPDATE SET seq = EXCLUDED.seq, received = EXCLUDED.received,"
    " body = EXCLUDED.body WHERE EXCLUDED.seq > latest.seq"
)
UPSERT_STATUS: Final = (
    "INSERT INTO status (tbl, received, body) VALUES (?, ?, ?)"
    " ON CONFLICT (tbl) DO UPDATE SET received = EXCLUDED.received, body = EXCLUDED.body"
)


class _RepeatedError(Exception):
    """A batch held messages stored before: it is stored again one by one."""


def _row(message: Received) -> tuple[Any, ...]:
    """The ``messages`` row of an engine message (one with a ``seq``)."""
    body = message.body
    return (
        message.table, message.seq, message.topic, str(body.get("type", "")),
        _int_or_none(body.get("shoe")), _int_or_none(body.get("round")),
        _float_or_none(body.get("ts")), message.received, message.payload,
    )


def _kind(topic: str) -> str:
    return topic.rsplit("/", 1)[-1]


def _derived_row(message: Received) -> tuple[Any, ...]:
    return (message.table, message.seq, _kind(message.topic),
            _float_or_none(message.body.get("ts")))


def _latest_rows(derived: Sequence[Received]) -> list[tuple[Any, ...]]:
    """The ``latest`` rows of a batch's derived views: the newest per table and topic."""
    newest: dict[tuple[str, str], Received] = {}
    for message in derived:
        key = (message.table, _kind(message.topic))
        kept = newest.get(key)
        if kept is None or (message.seq or 0) > (kept.seq or 0):
            newest[key] = message
    return [(m.table, _kind(m.topic), m.seq, m.received, m.payload) for m in newest.values()]


def is_derived(message: Received) -> bool:
    """Is this a derived view (kept as its seq, topic and ts, and as the latest whole)?"""
    return message.seq is not None and _kind(message.topic) in DERIVED_TOPICS


class SqlStore:
    """The SQL both databases share; ``mark`` is the driver's parameter placeholder."""

    mark = "?"
    blob = "BLOB"
    without_rowid = " WITHOUT ROWID"
    """SQLite keeps a table with no rowid in its primary key's b-tree: one copy, not two."""
    refusals: tuple[type[BaseException], ...] = (ValueError, TypeError, OverflowError)
    """Errors that mean the database refused a value (with the connection still good)."""

    def __init__(self, connection: Any) -> None:
        self._db = connection
        self._latest_pending: dict[tuple[str, str], tuple[Any, ...]] = {}
        self._latest_written: dict[tuple[str, str], float] = {}

    def _q(self, sql: str) -> str:
        return sql.replace("?", self.mark)

    def _create(self) -> None:
        with self._transaction() as cursor:
            for statement in SCHEMA:
                typed = statement.replace("BLOB", self.blob)
                cursor.execute(typed.replace(" WITHOUT ROWID", self.without_rowid))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        cursor = self._db.cursor()
        try:
            yield cursor
            self._db.commit()
        except BaseException:
            with contextlib.suppress(Exception):  # a lost connection cannot roll back
                self._db.rollback()
            raise
        finally:
            with contextlib.suppress(Exception):
                cursor.close()

    def _alive(self) -> bool:
        """Is the connection still good (so an error was the data's, not the link's)?"""
        return True

    def _failure(self, exc: Exception) -> StoreError:
        """The StoreError an error of the driver's is: refused data, or no database now."""
        text = f"{type(exc).__name__}: {exc}".strip()
        if isinstance(exc, self.refusals) and self._alive():
            return StoreRefusedError(text)
        return StoreUnavailableError(text)

    def add(
        self, batch: Sequence[Received], quarantine: Sequence[Quarantined] = ()
    ) -> AddResult:
        """Store a batch and quarantine rows in one transaction; durable when this returns.

        The usual batch is all new: it goes in with one ``executemany`` per statement (on
        PostgreSQL, psycopg pipelines it: one round trip, not one per message). If fewer rows
        went in than were sent, some were stored before (a repeat after a reconnection, or a
        conflict): that transaction is rolled back and the batch stored one message at a
        time, each repeat told from a conflict by its body. Raises :class:`StoreUnavailableError`
        or :class:`StoreRefusedError`, never the driver's own errors.
        """
        try:
            return self._add(batch, quarantine)
        except Exception as exc:
            raise self._failure(exc) from exc

    def _add(self, batch: Sequence[Received], quarantine: Sequence[Quarantined]) -> AddResult:
        derived = [m for m in batch if is_derived(m)]
        messages = [m for m in batch if m.seq is not None and not is_derived(m)]
        statuses = [m for m in batch if m.seq is None and m.topic.endswith("/status")]
        try:
            with self._transaction() as cursor:
                if messages:
                    cursor.executemany(self._q(INSERT_MESSAGE), [_row(m) for m in messages])
                    if cursor.rowcount != len(messages):
                        raise _RepeatedError  # noqa: TRY301 - rolls the transaction back
                if derived:
                    cursor.executemany(self._q(INSERT_DERIVED), [_derived_row(m) for m in derived])
                    if cursor.rowcount != len(derived):
                        raise _RepeatedError  # noqa: TRY301 - rolls the transaction back
                    due = self._due_latest(_latest_rows(derived))
                    if due:
                        cursor.executemany(self._q(UPSERT_LATEST), due)
                if statuses:
                    cursor.executemany(
                        self._q(UPSERT_STATUS),
                        [(m.table, m.received, m.payload) for m in statuses],
                    )
                self._quarantine(cursor, quarantine)
        except _RepeatedError:
            result = AddResult(quarantined=len(quarantine))
            with self._transaction() as cursor:
                for message in batch:
                    self._add_one(cursor, message, result)
                self._quarantine(cursor, quarantine)
            return result
        return AddResult(
            stored=len(messages) + len(derived), statuses=len(statuses),
            quarantined=len(quarantine),
        )

    def _quarantine(self, cursor: Any, quarantine: Sequence[Quarantined]) -> None:
        if quarantine:
            cursor.executemany(self._q(INSERT_QUARANTINE), [q.row() for q in quarantine])

    def reconnect(self) -> None:
        """Open the database again (after :class:`StoreUnavailableError`); StoreError if not."""
        with contextlib.suppress(Exception):
            self._db.close()
        self._db = self._connect()

    def _connect(self) -> Any:
        raise NotImplementedError

    def _add_one(self, cursor: Any, message: Received, result: AddResult) -> None:
        seq = message.seq
        if seq is None:
            if message.topic.endswith("/status"):
                cursor.execute(
                    self._q(UPSERT_STATUS), (message.table, message.received, message.payload)
                )
                result.statuses += 1
            return
        if is_derived(message):
            self._add_derived(cursor, message, result)
            return
        body = message.body
        cursor.execute(self._q(INSERT_MESSAGE), _row(message))
        if cursor.rowcount == 1:
            result.stored += 1
            return
        cursor.execute(
            self._q("SELECT body FROM messages WHERE tbl = ? AND seq = ?"), (message.table, seq)
        )
        (kept,) = cursor.fetchone()
        if json.loads(kept) == body:
            result.duplicates += 1
            return
        cursor.execute(
            self._q(
                "INSERT INTO conflicts (tbl, seq, topic, received, body) VALUES (?, ?, ?, ?, ?)"
            ),
            (message.table, seq, message.topic, message.received, message.payload),
        )
        result.conflicts += 1

    def _add_derived(self, cursor: Any, message: Received, result: AddResult) -> None:
        """A derived view alone: new, a repeat (same seq and topic), or a conflict."""
        cursor.execute(self._q(INSERT_DERIVED), _derived_row(message))
        if cursor.rowcount == 1:
            due = self._due_latest(_latest_rows([message]))
            if due:
                cursor.executemany(self._q(UPSERT_LATEST), due)
            result.stored += 1
            return
        cursor.execute(
            self._q("SELECT topic FROM derived WHERE tbl = ? AND seq = ?"),
            (message.table, message.seq),
        )
        (kept,) = cursor.fetchone()
        if kept == _kind(message.topic):
            result.duplicates += 1  # its body is the view of that seq: rebuilt, the same
            return
        cursor.execute(
            self._q(
                "INSERT INTO conflicts (tbl, seq, topic, received, body) VALUES (?, ?, ?, ?, ?)"
            ),
            (message.table, message.seq, message.topic, message.received, message.payload),
        )
        result.conflicts += 1

    def facts(self, table: str, until_seq: int | None = None) -> list[dict[str, Any]]:
        """The table's stored facts (bodies), by ``seq``, up to ``until_seq`` if given."""
        sql = "SELECT body FROM messages WHERE tbl = ?"
        params: list[Any] = [table]
        if until_seq is not None:
            sql += " AND seq <= ?"
            params.append(until_seq)
        return [json.loads(body) for (body,) in self._read(sql + " ORDER BY seq", params)]

    def derived(self, table: str, until_seq: int | None = None) -> list[DerivedSeq]:
        """The table's derived views not kept whole: (seq, topic, ts), by ``seq``."""
        sql = "SELECT seq, topic, ts FROM derived WHERE tbl = ?"
        params: list[Any] = [table]
        if until_seq is not None:
            sql += " AND seq <= ?"
            params.append(until_seq)
        return [
            DerivedSeq(int(seq), str(topic), _float_or_none(ts))
            for seq, topic, ts in self._read(sql + " ORDER BY seq", params)
        ]

    def latest(self, table: str | None = None) -> list[LatestView]:
        """The newest derived view of each table and topic, whole, by table then topic."""
        sql = "SELECT tbl, topic, seq, body FROM latest"
        params: list[Any] = []
        if table is not None:
            sql += " WHERE tbl = ?"
            params.append(table)
        return [
            LatestView(str(tbl), str(topic), int(seq), str(body))
            for tbl, topic, seq, body in self._read(sql + " ORDER BY tbl, topic", params)
        ]

    def seqs(self, table: str | None = None) -> Iterator[tuple[str, int]]:
        """(table, seq) of every message stored or recorded as derived, by table then seq."""
        where = "" if table is None else " WHERE tbl = ?"
        params = [] if table is None else [table]
        sql = (f"SELECT tbl, seq FROM messages{where} UNION ALL"  # noqa: S608 - no input in it
               f" SELECT tbl, seq FROM derived{where} ORDER BY 1, 2")
        for tbl, seq in self._read(sql, params * 2):
            yield str(tbl), int(seq)

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query (``?`` placeholders) of a module's own (floor/shuffle_store)."""
        try:
            return self._read(sql, params)
        except Exception as exc:
            raise self._failure(exc) from exc

    def write(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement for each row, in one transaction; StoreError if it fails."""
        try:
            with self._transaction() as cursor:
                for row in rows:
                    cursor.execute(self._q(sql), list(row))
        except Exception as exc:
            raise self._failure(exc) from exc

    def _read(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        cursor = self._db.cursor()
        try:
            cursor.execute(self._q(sql), list(params))
            return list(cursor)
        finally:
            cursor.close()
            self._db.rollback()

    def messages(
        self,
        table: str | None = None,
        shoe: int | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(table, body) of the stored messages, by table then ``seq``."""
        where, params = [], []
        for column, op, value in (
            ("tbl", "=", table), ("shoe", "=", shoe), ("ts", ">=", since), ("ts", "<", until)
        ):
            if value is not None:
                where.append(f"{column} {op} ?")
                params.append(value)
        sql = "SELECT tbl, body FROM messages"
        if where:
            sql += " WHERE " + " AND ".join(where)
        cursor = self._db.cursor()
        try:
            cursor.execute(self._q(sql + " ORDER BY tbl, seq"), params)
            for tbl, body in cursor:
                yield tbl, json.loads(body)
        finally:
            cursor.close()
            self._db.rollback()  # end the read transaction (PostgreSQL opens one)

    def shoes(self, table: str, newest: int = 500) -> list[ShoeSummary]:
        """The table's ``newest`` shoes (by their first message), oldest first."""
        cursor = self._db.cursor()
        try:
            cursor.execute(
                self._q(
                    "SELECT shoe, COUNT(*), MIN(ts), MAX(ts) FROM messages"
                    " WHERE tbl = ? AND shoe IS NOT NULL GROUP BY shoe"
                    " ORDER BY MIN(seq) DESC LIMIT ?"
                ),
                (table, newest),
            )
            found = [
                ShoeSummary(int(shoe), int(count), _float_or_none(first), _float_or_none(last))
                for shoe, count, first, last in cursor
            ]
            return found[::-1]
        finally:
            cursor.close()
            self._db.rollback()

    def quarantined(self) -> list[tuple[str, str, bytes]]:
        """(topic, reason, payload) of every quarantined message, oldest first."""
        cursor = self._db.cursor()
        try:
            cursor.execute("SELECT topic, reason, payload FROM quarantine ORDER BY received")
            return [(topic, reason, bytes(payload)) for topic, reason, payload in cursor]
        finally:
            cursor.close()
            self._db.rollback()

    def quarantine_topics(self, most: int = 1000) -> list[QuarantineTopic]:
        """The quarantine by topic: the ``most`` topics quarantined most recently, newest first."""
        cursor = self._db.cursor()
        try:
            cursor.execute(
                self._q(
                    "SELECT q.topic, g.n, g.newest, q.reason FROM quarantine q JOIN"
                    " (SELECT topic, COUNT(*) AS n, MAX(received) AS newest FROM quarantine"
                    "  GROUP BY topic ORDER BY MAX(received) DESC LIMIT ?) g"
                    " ON q.topic = g.topic AND q.received = g.newest"
                    " ORDER BY g.newest DESC, q.topic"
                ),
                (most,),
            )
            found: dict[str, QuarantineTopic] = {}
            for topic, count, newest, reason in cursor:
                if topic not in found:  # two rows at the same newest time: either reason
                    found[topic] = QuarantineTopic(topic, int(count), float(newest), reason)
            return list(found.values())
        finally:
            cursor.close()
            self._db.rollback()

    def tails(self) -> list[TableTail]:
        """Each table's newest stored message and latest status, by table."""
        cursor = self._db.cursor()
        try:
            cursor.execute(
                "SELECT m.tbl, m.seq, m.received FROM messages m JOIN"
                " (SELECT tbl, MAX(seq) AS seq FROM messages GROUP BY tbl) newest"
                " ON m.tbl = newest.tbl AND m.seq = newest.seq"
            )
            newest = {tbl: (int(seq), float(received)) for tbl, seq, received in cursor}
            cursor.execute("SELECT tbl, seq, received FROM latest")
            for tbl, seq, received in cursor:  # a derived view may be the newest of all
                if tbl not in newest or int(seq) > newest[tbl][0]:
                    newest[tbl] = (int(seq), float(received))
            cursor.execute("SELECT tbl, received, body FROM status")
            statuses = {tbl: (float(received), _object_or_none(body))
                        for tbl, received, body in cursor}
        finally:
            cursor.close()
            self._db.rollback()
        tails = []
        for table in sorted(newest.keys() | statuses.keys()):
            seq, received = newest.get(table, (None, None))
            status_received, status = statuses.get(table, (None, None))
            tails.append(TableTail(table, seq, received, status, status_received))
        return tails

    def count(self) -> int:
        """How many messages are stored."""
        cursor = self._db.cursor()
        try:
            cursor.execute("SELECT COUNT(*) FROM messages")
            return int(cursor.fetchone()[0])
        finally:
            cursor.close()
            self._db.rollback()

    def _due_latest(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Of these ``latest`` rows and those held back, the ones to write now.

        One per table and topic, at most every :data:`LATEST_EVERY` seconds; the others
        wait (the newest of each), for a later batch or :meth:`close`.
        """
        now = time.monotonic()
        for row in rows:
            key = (row[0], row[1])
            held = self._latest_pending.get(key)
            if held is None or row[2] > held[2]:
                self._latest_pending[key] = row
        due = [
            key for key in self._latest_pending
            if now - self._latest_written.get(key, -LATEST_EVERY) >= LATEST_EVERY
        ]
        for key in due:
            self._latest_written[key] = now
        return [self._latest_pending.pop(key) for key in due]

    def close(self) -> None:
        """Write the latest views held back, then close the connection."""
        held = list(self._latest_pending.values())
        self._latest_pending.clear()
        if held:
            try:
                with self._transaction() as cursor:
                    cursor.executemany(self._q(UPSERT_LATEST), held)
            except Exception:
                log.warning("the latest derived views could not be written at close")
        self._db.close()


class SqliteStore(SqlStore):
    """A SQLite file: the embedded default, for one pit or a test."""

    refusals = (
        *SqlStore.refusals, sqlite3.DataError, sqlite3.IntegrityError, sqlite3.InterfaceError,
        sqlite3.ProgrammingError,
    )

    def __init__(self, path: Path, create: bool = True) -> None:
        if not create and not path.is_file():
            raise StoreError(f"cannot open {path}: no such database file (the recorder makes it)")
        self.path = path
        self._closed = False
        super().__init__(self._connect())
        if create:
            self._create()

    def _connect(self) -> sqlite3.Connection:
        try:
            connection = sqlite3.connect(
                self.path, isolation_level="DEFERRED", check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as exc:
            raise StoreUnavailableError(f"cannot open {self.path}: {exc}") from None
        self._closed = False
        return connection

    def _alive(self) -> bool:
        return not self._closed

    def close(self) -> None:
        """Close the connection."""
        self._closed = True
        super().close()


class PostgresStore(SqlStore):
    """A PostgreSQL database, for a floor."""

    mark = "%s"
    blob = "BYTEA"
    without_rowid = ""

    def __init__(self, url: str, create: bool = True) -> None:
        import psycopg

        self.url = url
        self.refusals = (
            *SqlStore.refusals, psycopg.DataError, psycopg.IntegrityError,
            psycopg.ProgrammingError, psycopg.NotSupportedError,
        )
        super().__init__(self._connect())
        if create:
            self._create()

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self.url)
        except psycopg.Error as exc:
            raise StoreUnavailableError(
                f"cannot connect to {_without_password(self.url)}: {exc}"
            ) from None

    def _alive(self) -> bool:
        return not (self._db.closed or self._db.broken)


def open_store(where: str, *, create: bool = True) -> Store:
    """The store a URL or path names: ``postgresql://...``, ``sqlite:///path`` or a path.

    ``create`` False opens it for reading only (the pit's history): it makes neither the
    tables nor a SQLite file, so a read-only database account is enough.
    """
    if where.startswith(("postgresql://", "postgres://")):
        return PostgresStore(where, create)
    path = where.removeprefix("sqlite://") if where.startswith("sqlite://") else where
    return SqliteStore(Path(path), create)


def _without_password(url: str) -> str:
    head, at, tail = url.rpartition("@")
    if not at or "://" not in head:
        return url
    scheme, _, credentials = head.partition("://")
    return f"{scheme}://{credentials.split(':', 1)[0]}@{tail}"


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float_or_none(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _object_or_none(text: str) -> dict[str, Any] | None:
    try:
        body = json.loads(text)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _safe_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, surrogates and NULs escaped: any database takes it."""
    text = text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("\x00", "\\x00")
