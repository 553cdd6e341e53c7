"""The store's tables and statements, the same on SQLite and PostgreSQL, and the rows they take.

Each statement is written with ``?`` placeholders; :class:`baccarat.floor.sql.SqlStore`
puts the driver's own in. ``BLOB`` and ``WITHOUT ROWID`` are SQLite's words, replaced for
PostgreSQL when the tables are made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from baccarat.floor.bodies import DERIVED_TOPICS
from baccarat.floor.records import Received, float_or_none, int_or_none

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

INSERT_MESSAGE: Final = (
    "INSERT INTO messages (tbl, seq, topic, type, shoe, round, ts, received, body)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tbl, seq) DO NOTHING"
)
INSERT_QUARANTINE: Final = (
    "INSERT INTO quarantine (received, topic, reason, size, payload) VALUES (?, ?, ?, ?, ?)"
)
INSERT_VIEW: Final = (
    "INSERT INTO messages (tbl, seq, topic, type, shoe, round, ts, received, body)"
    " SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS"
    " (SELECT 1 FROM derived WHERE tbl = ? AND seq = ?) ON CONFLICT (tbl, seq) DO NOTHING"
)
"""A derived view kept whole, unless its place is kept already (a repeat)."""
INSERT_DERIVED: Final = (
    "INSERT INTO derived (tbl, seq, topic, ts) SELECT ?, ?, ?, ? WHERE NOT EXISTS"
    " (SELECT 1 FROM messages WHERE tbl = ? AND seq = ?) ON CONFLICT (tbl, seq) DO NOTHING"
)
"""A derived view's place, unless it is kept whole already (a repeat): a seq is in one table."""
UPSERT_LATEST: Final = (
    "INSERT INTO latest (tbl, topic, seq, received, body) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (tbl, topic) DO UPDATE SET seq = EXCLUDED.seq, received = EXCLUDED.received,"
    " body = EXCLUDED.body WHERE EXCLUDED.seq > latest.seq"
)
UPSERT_STATUS: Final = (
    "INSERT INTO status (tbl, received, body) VALUES (?, ?, ?)"
    " ON CONFLICT (tbl) DO UPDATE SET received = EXCLUDED.received, body = EXCLUDED.body"
)



def message_row(message: Received) -> tuple[Any, ...]:
    """The ``messages`` row of an engine message (one with a ``seq``)."""
    body = message.body
    return (
        message.table, message.seq, message.topic, str(body.get("type", "")),
        int_or_none(body.get("shoe")), int_or_none(body.get("round")),
        float_or_none(body.get("ts")), message.received, message.payload,
    )


def kind(topic: str) -> str:
    return topic.rsplit("/", 1)[-1]


def view_row(message: Received) -> tuple[Any, ...]:
    """The :data:`INSERT_VIEW` row of a derived view kept whole."""
    return (*message_row(message), message.table, message.seq)


def derived_row(message: Received) -> tuple[Any, ...]:
    """The :data:`INSERT_DERIVED` row of a derived view kept as its place."""
    return (message.table, message.seq, kind(message.topic),
            float_or_none(message.body.get("ts")), message.table, message.seq)


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

