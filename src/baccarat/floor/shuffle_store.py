"""The shuffle check's queries: the day's cards from the store, and its findings kept.

Its own module (the store's own reads are in :mod:`baccarat.floor.queries`, its writing in
:mod:`baccarat.floor.sql`): what the floor-wide check (:mod:`baccarat.floor.shuffle`) reads
and writes, through the store's generic :meth:`~baccarat.floor.records.Store.read` and
``write``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from baccarat.floor.records import float_or_none, published
from baccarat.floor.store import Store

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS shuffle_suspects ("
    " tbl TEXT NOT NULL, shoe BIGINT NOT NULL, earlier_tbl TEXT NOT NULL,"
    " earlier_shoe BIGINT NOT NULL, ts DOUBLE PRECISION NOT NULL, body TEXT NOT NULL)"
)
CardRow = tuple[str, int, int, float, str | None]
"""(table, shoe, seq, ts, card code or None) of one stored card message."""


def create(store: Store) -> None:
    """Make the findings' table if it is not there."""
    store.write(SCHEMA, [()])


def day_cards(store: Store, since: float) -> Iterator[CardRow]:
    """Every stored card since ``since`` (Unix seconds), by table then ``seq``.

    Bodies were screened when stored (a card's ``shoe`` an integer, ``card`` a string or
    null); a row that still is not one is skipped.
    """
    rows = store.read(
        "SELECT tbl, shoe, seq, ts, body FROM messages WHERE type = ? AND ts >= ?"
        " ORDER BY tbl, seq", ["card", since],
    )
    for table, shoe, seq, ts, body in rows:
        try:
            code = json.loads(published(int(seq), float_or_none(ts), "card", body)).get("card")
        except (ValueError, AttributeError):
            continue
        if isinstance(shoe, int) and isinstance(ts, float | int) and (
            code is None or isinstance(code, str)
        ):
            yield table, shoe, seq, float(ts), code


def record(store: Store, findings: list[dict[str, Any]]) -> None:
    """Keep the findings (their published bodies); StoreError if the database cannot."""
    store.write(
        "INSERT INTO shuffle_suspects (tbl, shoe, earlier_tbl, earlier_shoe, ts, body)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (f["table"], f["shoe"], f["earlier"]["table"], f["earlier"]["shoe"], f["ts"],
             json.dumps(f, separators=(",", ":")))
            for f in findings
        ],
    )


def findings(store: Store) -> list[dict[str, Any]]:
    """Every finding kept, oldest first."""
    rows = store.read("SELECT body FROM shuffle_suspects ORDER BY ts")
    return [json.loads(body) for (body,) in rows]
