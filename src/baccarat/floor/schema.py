"""The store's tables and statements, the same on SQLite and PostgreSQL, and the rows they take.

A fact's row (``messages``) holds, beside its body, the columns the reads filter on
(``tbl``, ``seq``, ``type``, ``shoe``, ``ts``) and when the recorder got it; the other
fields are in the body alone. The derived views that follow a fact in the table's
``seq`` (``round`` after a card, ``roads`` and ``recall`` after a shoe message) are kept
on the fact's row as its ``views``: their topics in order, the first at ``seq + 1``, each
with its ``ts`` when it is not the fact's (``round``, ``roads recall``,
``round@1796216847.771807``; ``round@`` a null ts). A view that does not follow a fact of
its batch (a round opened by an input of its own, a batch that ended between them) has
its place in ``derived``, a row of its own.

A row's ``body`` is the text after the body's envelope (``{"schema":1,"seq":N,"ts":T,
"type":K,``) where its ``seq``, ``ts`` and ``type`` make that again byte for byte, else the
body whole (:func:`baccarat.floor.records.stored_body`; the reads put it back).

Each event's link in its table's chain (``chain``: ``after``, ``prev``, the key's id, the
event's hash and its signature; docs/record.md) is kept in a table of its own, by (table,
seq), so that a place keeps its signature as a fact does.

A database made before (its ``messages`` with ``topic`` and ``round`` columns, every place
in ``derived``, bodies whole) is read as it is; a recorder opening it adds the ``views``
column and writes the columns its table has (:class:`Layout`). ``messages`` keeps its
rowid on SQLite: rows come in time order, so its pages fill up, where a table kept in its
(table, seq) key would be split half empty by a floor's tables taking turns; ``derived``
is kept in its key alone.
On PostgreSQL the columns of eight bytes come first (no padding between them), and
``messages_by_shoe`` is on (table, shoe) alone: its B-tree keeps each shoe's key once with
the list of its rows (PostgreSQL 13's deduplication), where (table, shoe, seq) made every
key unique.

Each statement is written with ``?`` placeholders; :class:`baccarat.floor.sql.SqlStore`
puts the driver's own in. ``BLOB`` and ``WITHOUT ROWID`` are SQLite's words, replaced for
PostgreSQL when the tables are made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from baccarat.floor.bodies import DERIVED_TOPICS
from baccarat.floor.records import (
    DerivedSeq,
    Received,
    float_or_none,
    int_or_none,
    stored_body,
)

SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS messages (
        seq BIGINT NOT NULL, shoe BIGINT, ts DOUBLE PRECISION, received DOUBLE PRECISION NOT NULL,
        tbl TEXT NOT NULL, type TEXT NOT NULL, views TEXT, body TEXT NOT NULL,
        PRIMARY KEY (tbl, seq))""",
    """CREATE INDEX IF NOT EXISTS messages_by_shoe ON messages (tbl, shoe)""",
    """CREATE TABLE IF NOT EXISTS conflicts (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL,
        received DOUBLE PRECISION NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS status (
        tbl TEXT PRIMARY KEY, received DOUBLE PRECISION NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS quarantine (
        received DOUBLE PRECISION NOT NULL, topic TEXT NOT NULL, reason TEXT NOT NULL,
        size BIGINT NOT NULL, payload BLOB NOT NULL)""",
    """CREATE INDEX IF NOT EXISTS quarantine_by_topic ON quarantine (topic, received)""",
    """CREATE INDEX IF NOT EXISTS quarantine_by_received ON quarantine (received)""",
    """CREATE TABLE IF NOT EXISTS quarantine_counts (
        topic TEXT NOT NULL, cause TEXT NOT NULL, n BIGINT NOT NULL,
        newest DOUBLE PRECISION NOT NULL, reason TEXT NOT NULL, PRIMARY KEY (topic, cause))""",
    """CREATE TABLE IF NOT EXISTS derived (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL, ts DOUBLE PRECISION,
        PRIMARY KEY (tbl, seq)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS chain (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, after BIGINT, prev BLOB NOT NULL,
        key TEXT NOT NULL, hash BLOB NOT NULL, sig BLOB NOT NULL,
        PRIMARY KEY (tbl, seq)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS latest (
        tbl TEXT NOT NULL, topic TEXT NOT NULL, seq BIGINT NOT NULL,
        received DOUBLE PRECISION NOT NULL, body TEXT NOT NULL, PRIMARY KEY (tbl, topic))""",
)
ADD_VIEWS: Final = "ALTER TABLE messages ADD COLUMN views TEXT"
"""A database made before the ``views`` column: the recorder adds it (nothing is rewritten)."""
MAX_ATTACHED: Final = 8
"""The most views one fact's row keeps (a longer run goes on in ``derived``): a seq's row
is found among the eight rows before it."""

NOT_ATTACHED: Final = (
    " AND COALESCE((SELECT seq + CASE WHEN views IS NULL THEN 0 ELSE"
    " LENGTH(views) - LENGTH(REPLACE(views, ' ', '')) + 1 END FROM messages"
    " WHERE tbl = ? AND seq < ? AND seq >= ? ORDER BY seq DESC LIMIT 1), 0) < ?"
)
"""The row before the seq does not keep it among its views (params: :func:`attached_params`).

Only the nearest row before it can: a row's views are the seqs right after it."""
INSERT_CHAIN: Final = (
    "INSERT INTO chain (tbl, seq, after, prev, key, hash, sig) VALUES (?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (tbl, seq) DO NOTHING"
)
"""An event's link in its table's chain (docs/record.md): kept for every event, the derived
views kept as their place too; the first one received for a seq is kept."""
INSERT_QUARANTINE: Final = (
    "INSERT INTO quarantine (received, topic, reason, size, payload) VALUES (?, ?, ?, ?, ?)"
)
UPSERT_QUARANTINE_COUNT: Final = (
    "INSERT INTO quarantine_counts (topic, cause, n, newest, reason) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (topic, cause) DO UPDATE SET n = quarantine_counts.n + EXCLUDED.n,"
    " newest = EXCLUDED.newest, reason = EXCLUDED.reason"
)
"""Every quarantined body counted for ever, by its topic and its reason's class."""
TRIM_QUARANTINE: Final = (
    "DELETE FROM quarantine WHERE received < (SELECT received FROM quarantine"
    " ORDER BY received DESC LIMIT 1 OFFSET ?)"
)
"""The quarantine's sample kept to its newest rows (param: how many, less one)."""
COUNTS_FROM_SAMPLE: Final = (
    "INSERT INTO quarantine_counts (topic, cause, n, newest, reason)"
    " SELECT topic, 'earlier', COUNT(*), MAX(received), MAX(reason) FROM quarantine"
    " WHERE NOT EXISTS (SELECT 1 FROM quarantine_counts) GROUP BY topic"
)
"""A database made before the counts: its quarantine rows counted once, as ``earlier``."""
UPSERT_LATEST: Final = (
    "INSERT INTO latest (tbl, topic, seq, received, body) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (tbl, topic) DO UPDATE SET seq = EXCLUDED.seq, received = EXCLUDED.received,"
    " body = EXCLUDED.body WHERE EXCLUDED.seq > latest.seq"
)
UPSERT_STATUS: Final = (
    "INSERT INTO status (tbl, received, body) VALUES (?, ?, ?)"
    " ON CONFLICT (tbl) DO UPDATE SET received = EXCLUDED.received, body = EXCLUDED.body"
)


@dataclass(frozen=True)
class Layout:
    """The columns a database's ``messages`` has, and the statements that write them."""

    columns: tuple[str, ...]

    @property
    def has_views(self) -> bool:
        """Can a fact's row keep the views that follow it (else every place is in derived)?"""
        return "views" in self.columns

    def _insert(self, values: str = "SELECT") -> str:
        names = ", ".join(self.columns)
        marks = ", ".join("?" for _ in self.columns)
        return f"INSERT INTO messages ({names}) {values} {marks}"

    def _not_attached(self) -> str:
        return NOT_ATTACHED if self.has_views else ""

    @property
    def insert_message(self) -> str:
        """A fact, unless its seq is stored (a repeat or a conflict)."""
        return f"{self._insert('VALUES (')}) ON CONFLICT (tbl, seq) DO NOTHING"

    @property
    def insert_attached(self) -> str:
        """A fact with the views that follow it, unless one of their seqs is held already."""
        return (
            f"{self._insert()} WHERE NOT EXISTS (SELECT 1 FROM derived WHERE tbl = ?"  # noqa: S608
            " AND seq > ? AND seq <= ?) AND NOT EXISTS (SELECT 1 FROM messages WHERE tbl = ?"
            " AND seq > ? AND seq <= ?) ON CONFLICT (tbl, seq) DO NOTHING"
        )

    @property
    def insert_view(self) -> str:
        """A derived view kept whole, unless its place is kept already (a repeat)."""
        return (
            f"{self._insert()} WHERE NOT EXISTS (SELECT 1 FROM derived WHERE tbl = ? AND"  # noqa: S608
            f" seq = ?){self._not_attached()} ON CONFLICT (tbl, seq) DO NOTHING"
        )

    @property
    def insert_derived(self) -> str:
        """A derived view's place, unless its seq is held already (a repeat).

        A seq is kept once: whole, as a place of its own, or on the row before it.
        """
        return (
            "INSERT INTO derived (tbl, seq, topic, ts) SELECT ?, ?, ?, ? WHERE NOT EXISTS"  # noqa: S608
            f" (SELECT 1 FROM messages WHERE tbl = ? AND seq = ?){self._not_attached()}"
            " ON CONFLICT (tbl, seq) DO NOTHING"
        )

    def row(self, message: Received, views: Sequence[Received] = ()) -> tuple[Any, ...]:
        """The ``messages`` row of an engine message (one with a ``seq``)."""
        body = message.body
        ts, type_ = float_or_none(body.get("ts")), str(body.get("type", ""))
        values = {
            "tbl": message.table, "seq": message.seq, "topic": kind(message.topic),
            "type": type_, "shoe": int_or_none(body.get("shoe")),
            "round": int_or_none(body.get("round")), "ts": ts, "received": message.received,
            "views": views_text(ts, views) if views else None,
            "body": stored_body(message.payload, message.seq or 0, ts, type_),
        }
        return tuple(values[column] for column in self.columns)

    def attached_row(self, message: Received, views: Sequence[Received]) -> tuple[Any, ...]:
        """The :attr:`insert_attached` row of a fact and the views that follow it."""
        first, last = (message.seq or 0) + 1, (message.seq or 0) + len(views)
        return (*self.row(message, views), message.table, first - 1, last,
                message.table, first - 1, last)

    def view_row(self, message: Received) -> tuple[Any, ...]:
        """The :attr:`insert_view` row of a derived view kept whole."""
        guard = attached_params(message) if self.has_views else ()
        return (*self.row(message), message.table, message.seq, *guard)

    def derived_row(self, message: Received) -> tuple[Any, ...]:
        """The :attr:`insert_derived` row of a derived view kept as its own place."""
        guard = attached_params(message) if self.has_views else ()
        return (message.table, message.seq, kind(message.topic),
                float_or_none(message.body.get("ts")), message.table, message.seq, *guard)


def kind(topic: str) -> str:
    return topic.rsplit("/", 1)[-1]


def attached_params(message: Received) -> tuple[Any, ...]:
    """The parameters of :data:`NOT_ATTACHED` for this message's seq."""
    seq = message.seq or 0
    return (message.table, seq, seq - MAX_ATTACHED, seq)


def views_text(ts: float | None, views: Sequence[Received]) -> str:
    """The ``views`` of a fact's row: each view's topic, and its ts if not the fact's."""
    items = []
    for view in views:
        own = float_or_none(view.body.get("ts"))
        if own == ts:
            items.append(kind(view.topic))
        else:
            items.append(f"{kind(view.topic)}@{'' if own is None else repr(own)}")
    return " ".join(items)


def views_places(seq: int, ts: float | None, text: str) -> list[DerivedSeq]:
    """The places a fact's row keeps (:func:`views_text`); an item not understood is left out."""
    places = []
    for offset, item in enumerate(text.split(" "), 1):
        topic, at, own = item.partition("@")
        if topic not in DERIVED_TOPICS:
            continue
        if at:
            try:
                view_ts = float(own) if own else None
            except ValueError:
                continue
        else:
            view_ts = ts
        places.append(DerivedSeq(seq + offset, topic, view_ts))
    return places


@dataclass
class Sorted:
    """A batch's engine messages by where they go.

    Facts (each with the views that follow it), derived views kept whole, and places that
    follow no fact of the batch.
    """

    facts: list[tuple[Received, list[Received]]] = field(default_factory=list)
    wholes: list[Received] = field(default_factory=list)
    places: list[Received] = field(default_factory=list)


def sort_batch(batch: Sequence[Received], *, attach: bool) -> Sorted:
    """The batch's engine messages sorted.

    With ``attach``, a place right after a fact of its table (or after the places that
    follow it) goes on the fact's row.
    """
    out = Sorted()
    runs: dict[str, tuple[list[Received], int]] = {}
    for message in batch:
        seq = message.seq
        if seq is None:
            continue
        run = runs.get(message.table)
        if not is_view(message):
            views: list[Received] = []
            out.facts.append((message, views))
            runs[message.table] = (views, seq + 1)
        elif (attach and is_derived(message) and run is not None and run[1] == seq
              and len(run[0]) < MAX_ATTACHED):
            run[0].append(message)
            runs[message.table] = (run[0], seq + 1)
        else:
            runs.pop(message.table, None)
            (out.places if is_derived(message) else out.wholes).append(message)
    return out


def latest_rows(derived: Sequence[Received]) -> list[tuple[Any, ...]]:
    """The ``latest`` rows of a batch's derived views: the newest per table and topic."""
    newest: dict[tuple[str, str], Received] = {}
    for message in derived:
        key = (message.table, kind(message.topic))
        kept = newest.get(key)
        if kept is None or (message.seq or 0) > (kept.seq or 0):
            newest[key] = message
    return [(m.table, kind(m.topic), m.seq, m.received, m.payload) for m in newest.values()]


def is_view(message: Received) -> bool:
    """Is this a derived view (its table's latest of the topic is kept whole)?"""
    return message.seq is not None and kind(message.topic) in DERIVED_TOPICS


def is_derived(message: Received) -> bool:
    """Is this a derived view kept as its place (its seq, topic and ts)?"""
    return message.place and is_view(message)
