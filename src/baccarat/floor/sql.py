"""Writing the store: a transaction per batch, repeats told from conflicts, latest views paced.

:class:`SqlStore` is what SQLite and PostgreSQL share (:mod:`baccarat.floor.store` has the
two); the reads are :class:`baccarat.floor.queries.SqlReads`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any, Final

from baccarat.errors import BaccaratError
from baccarat.floor.queries import SqlReads
from baccarat.floor.records import (
    QUARANTINE_SAMPLE,
    AddResult,
    Quarantined,
    Received,
    StoreError,
    StoreRefusedError,
    StoreUnavailableError,
    float_or_none,
    published,
)
from baccarat.floor.schema import (
    ADD_VIEWS,
    COUNTS_FROM_SAMPLE,
    INSERT_CHAIN,
    INSERT_QUARANTINE,
    SCHEMA,
    TRIM_QUARANTINE,
    UPSERT_LATEST,
    UPSERT_QUARANTINE_COUNT,
    UPSERT_STATUS,
    is_derived,
    is_view,
    kind,
    latest_rows,
    sort_batch,
)

log = logging.getLogger(__name__)

LATEST_EVERY: Final = 10.0
"""Seconds between two writes of one table's latest derived view of a topic (why:
docs/benchmarks.md, "Facts, not copies"). The views in between are made again from the facts,
and the newest is written at most this much later (and at close)."""

class _RepeatedError(BaccaratError):
    """A batch held messages stored before: it is stored again one by one."""



class SqlStore(SqlReads):
    """The SQL both databases share; ``mark`` is the driver's parameter placeholder."""

    blob = "BLOB"
    without_rowid = " WITHOUT ROWID"
    """SQLite keeps a table with no rowid in its primary key's b-tree: one copy, not two."""
    tuned: tuple[str, ...] = ()
    """Statements of the database's own run after the tables are made (PostgreSQL's)."""
    refusals: tuple[type[BaseException], ...] = (ValueError, TypeError, OverflowError)
    """Errors that mean the database refused a value (with the connection still good)."""

    quarantine_keep: int = QUARANTINE_SAMPLE
    """Quarantined bodies kept, the newest; 0: none (every one is counted all the same)."""

    def __init__(self, connection: Any) -> None:
        self._db = connection
        self._latest_pending: dict[tuple[str, str], tuple[Any, ...]] = {}
        self._latest_written: dict[tuple[str, str], float] = {}

    def _create(self) -> None:
        """Make the tables, or add the ``views`` column to a database made before it."""
        with self._transaction() as cursor:
            for statement in SCHEMA:
                typed = statement.replace("BLOB", self.blob)
                cursor.execute(typed.replace(" WITHOUT ROWID", self.without_rowid))
            if "views" not in self._columns(cursor):
                cursor.execute(ADD_VIEWS)
            cursor.execute(COUNTS_FROM_SAMPLE)
            for statement in self.tuned:
                cursor.execute(statement)
        self._layout_found = None

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
        layout = self._layout()
        sorted_ = sort_batch(batch, attach=layout.has_views)
        alone = [fact for fact, views in sorted_.facts if not views]
        attached = [(fact, views) for fact, views in sorted_.facts if views]
        statuses = [m for m in batch if m.seq is None and m.topic.endswith("/status")]
        try:
            with self._transaction() as cursor:
                for statement, rows in (
                    (layout.insert_message, [layout.row(m) for m in alone]),
                    (layout.insert_attached, [layout.attached_row(m, v) for m, v in attached]),
                    (layout.insert_view, [layout.view_row(m) for m in sorted_.wholes]),
                    (layout.insert_derived, [layout.derived_row(m) for m in sorted_.places]),
                ):
                    if rows:
                        cursor.executemany(self._q(statement), rows)
                        if cursor.rowcount != len(rows):
                            raise _RepeatedError  # noqa: TRY301 - rolls the transaction back
                links = [row for row in (m.chain_row() for m in batch) if row is not None]
                if links:
                    cursor.executemany(self._q(INSERT_CHAIN), links)
                views = [m for m in batch if is_view(m)]
                due = self._due_latest(latest_rows(views))
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
            stored=sum(1 + len(v) for _, v in sorted_.facts) + len(sorted_.wholes)
            + len(sorted_.places),
            statuses=len(statuses), quarantined=len(quarantine),
        )

    def _quarantine(self, cursor: Any, quarantine: Sequence[Quarantined]) -> None:
        """Count them for ever; keep their bodies as the sample, the oldest beyond it deleted."""
        if not quarantine:
            return
        counts: dict[tuple[str, str], list[Any]] = {}
        for q in quarantine:
            row = q.row()
            key = (row[1], q.cause)
            found = counts.get(key)
            if found is None:
                counts[key] = [row[1], q.cause, 1, q.received, row[2]]
            else:
                found[2] += 1
                found[3], found[4] = max(found[3], q.received), row[2]
        cursor.executemany(self._q(UPSERT_QUARANTINE_COUNT), [tuple(c) for c in counts.values()])
        keep = self.quarantine_keep
        if keep <= 0:
            return
        cursor.executemany(self._q(INSERT_QUARANTINE), [q.row() for q in quarantine[-keep:]])
        cursor.execute(self._q(TRIM_QUARANTINE), (keep - 1,))

    def reconnect(self) -> None:
        """Open the database again (after :class:`StoreUnavailableError`); StoreError if not."""
        with contextlib.suppress(Exception):
            self._db.close()
        self._db = self._connect()

    def _connect(self) -> Any:
        raise NotImplementedError

    def _add_one(self, cursor: Any, message: Received, result: AddResult) -> None:
        """One message alone: new, a repeat, or a conflict (same seq, another body)."""
        seq = message.seq
        if seq is None:
            if message.topic.endswith("/status"):
                cursor.execute(
                    self._q(UPSERT_STATUS), (message.table, message.received, message.payload)
                )
                result.statuses += 1
            return
        layout = self._layout()
        if is_derived(message):
            cursor.execute(self._q(layout.insert_derived), layout.derived_row(message))
        elif is_view(message):
            cursor.execute(self._q(layout.insert_view), layout.view_row(message))
        else:
            cursor.execute(self._q(layout.insert_message), layout.row(message))
        if cursor.rowcount == 1:
            link = message.chain_row()
            if link is not None:
                cursor.execute(self._q(INSERT_CHAIN), link)
            if is_view(message):
                due = self._due_latest(latest_rows([message]))
                if due:
                    cursor.executemany(self._q(UPSERT_LATEST), due)
            result.stored += 1
            return
        if self._kept_before(cursor, message):
            result.duplicates += 1
            return
        cursor.execute(
            self._q(
                "INSERT INTO conflicts (tbl, seq, topic, received, body) VALUES (?, ?, ?, ?, ?)"
            ),
            (message.table, seq, message.topic, message.received, message.payload),
        )
        result.conflicts += 1

    def _kept_before(self, cursor: Any, message: Received) -> bool:
        """Is what the store holds at this message's seq this message (whole, or its place)?

        A place (of its own, or on the row before it) is the same message when its topic
        is: its body is the view of that seq.
        """
        key = (message.table, message.seq)
        cursor.execute(
            self._q("SELECT seq, ts, type, body FROM messages WHERE tbl = ? AND seq = ?"), key
        )
        row = cursor.fetchone()
        if row is not None:
            text = published(int(row[0]), float_or_none(row[1]), str(row[2]), str(row[3]))
            return bool(json.loads(text) == message.body)
        cursor.execute(self._q("SELECT topic FROM derived WHERE tbl = ? AND seq = ?"), key)
        row = cursor.fetchone()
        if row is None and message.seq is not None:
            place = self._attached(cursor, message.table, message.seq)
            row = None if place is None else (place.topic,)
        return row is not None and row[0] == kind(message.topic) and is_view(message)

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
