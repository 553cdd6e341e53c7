"""Where the floor recorder keeps every table's messages: SQLite or PostgreSQL.

One row per engine message, keyed by the table and the message's ``seq`` (up by one per
message of a table, docs/design.md invariant 3), so a message delivered twice (QoS 1, a
reconnection, a recorder restart) is stored once. The body comes back exactly as
published: a row keeps it after its envelope where the row's own columns make that again
(:func:`~baccarat.floor.records.stored_body`), else whole.
A second message with the same table and ``seq`` but another body is not a duplicate: a
table whose journal was wiped starts its numbering again. It is kept in ``conflicts`` and
counted, never silently dropped.

Only facts are kept whole. A derived view (``roads``: :data:`baccarat.floor.bodies.DERIVED_TOPICS`),
a function of the table's earlier messages that :mod:`baccarat.floor.derived` makes again
byte for byte, is kept whole only as the table's latest of its topic (``latest``); of every
other one its ``seq``, topic (the last level) and ``ts`` are kept, on the row of the fact it
follows (``views``) or in ``derived`` (:mod:`~baccarat.floor.schema`), so that a gap in a
table's ``seq`` is still told from a view not stored, and a view of any moment can be
rebuilt with its own ``seq`` and ``ts``.

Schema (the same on both databases)::

    messages  (tbl, seq)  seq, shoe, ts, received, tbl, type, views, body  -- by (tbl, shoe)
    derived   (tbl, seq)  topic, ts        -- a place that follows no fact of its batch
    latest    (tbl, topic) seq, received, body  -- the newest derived view, whole
    conflicts            tbl, seq, topic, received, body
    status    (tbl)      received, body    -- the table's latest retained status
    quarantine           received, topic, reason, size, payload (bytes)  -- by (topic, received)

``quarantine`` keeps what came from the broker and must not be stored as a message: a body
the screen refused (:mod:`baccarat.floor.bodies`), or one the database itself refused
(:class:`StoreRefusedError`), with the reason, the topic, the time it came, its size and its
first :data:`QUARANTINE_KEEP` bytes as they came (BLOB on SQLite, BYTEA on PostgreSQL).

The store is in five modules: this one opens a database (:class:`SqliteStore`,
:class:`PostgresStore`, :func:`open_store`) and names everything the others hold;
:mod:`~baccarat.floor.records` the values it takes and gives, its errors and the
:class:`Store` interface; :mod:`~baccarat.floor.schema` the tables, statements and rows;
:mod:`~baccarat.floor.sql` the writing (a transaction per batch, the latest views paced);
:mod:`~baccarat.floor.queries` the reads.

``open_store("floor.db")`` or ``open_store("sqlite:///var/lib/floor.db")`` gives SQLite
(WAL, synchronous=FULL: a batch is on disk when :meth:`Store.add` returns);
``open_store("postgresql://user@host/db")`` gives PostgreSQL through psycopg 3. Every
method is blocking: the recorder calls them from one worker thread.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from baccarat.floor.records import (
    QUARANTINE_KEEP,
    AddResult,
    DerivedSeq,
    LatestView,
    Quarantined,
    QuarantineTopic,
    Received,
    ShoeStart,
    ShoeSummary,
    Store,
    StoreError,
    StoreRefusedError,
    StoreUnavailableError,
    TableTail,
)
from baccarat.floor.schema import is_derived
from baccarat.floor.sql import LATEST_EVERY, SqlStore

__all__ = [
    "LATEST_EVERY", "QUARANTINE_KEEP", "AddResult", "DerivedSeq", "LatestView",
    "PostgresStore", "QuarantineTopic", "Quarantined", "Received", "ShoeStart", "ShoeSummary",
    "SqliteStore", "Store", "StoreError", "StoreRefusedError", "StoreUnavailableError",
    "TableTail", "is_derived", "open_store",
]


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
    tuned = tuple(
        f"ALTER INDEX {index} SET (fillfactor = 100)"
        for index in ("messages_pkey", "messages_by_shoe", "derived_pkey")
    )
    """Index pages filled whole: each table's keys only grow, so a page left behind by a
    split takes no more rows (the 10 % kept free by default would stay free)."""

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
