"""Where the store keeps a derived view's place, and a database of the layout before.

A view that follows a fact in its batch is kept on the fact's row (``views``), one that
follows none in a row of its own (``derived``). Whichever, a seq is held once: a repeat is
a duplicate and another topic at its seq a conflict; every view is made again byte for
byte wherever the batches were cut. A database made by the layout before (``topic`` and
``round`` columns, every place in ``derived``, no ``views``) is read as it is, and a
recorder opening it adds the ``views`` column and records on.
"""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
from collections.abc import Iterator
from typing import Any

from baccarat.floor.derived import VIEWS, Arrivals, rebuilt
from baccarat.floor.schema import MAX_ATTACHED, views_places
from baccarat.floor.store import DerivedSeq, Received, Store, open_store
from floor.test_derived_fold import _messages


def _received(seq: int, kind: str, ts: float | None, **fields: Any) -> Received:
    body = {"schema": 1, "seq": seq, "ts": ts, "type": kind, **fields}
    text = json.dumps(body, separators=(",", ":"))
    return Received("T1", f"baccarat/T1/{kind}", body, text, 1000.0 + seq, place=kind in VIEWS)


@contextlib.contextmanager
def _sql(db: str) -> Iterator[Any]:
    """A plain connection to the database, to look at its rows or write the old layout."""
    if db.startswith("postgresql:"):
        import psycopg

        with psycopg.connect(db) as connection:
            yield connection
    else:
        with contextlib.closing(sqlite3.connect(db)) as connection, connection:
            yield connection


def _rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    with _sql(db) as connection:
        return [tuple(row) for row in connection.execute(sql).fetchall()]


def _inputs(messages: list[Received]) -> list[list[Received]]:
    """The messages grouped by the input that made them (the engine's ts is the input's)."""
    groups: list[list[Received]] = []
    for message in messages:
        if not groups or message.body.get("ts") != groups[-1][-1].body.get("ts"):
            groups.append([])
        groups[-1].append(message)
    return groups


def _made_again(store: Store, messages: list[Received]) -> None:
    """Every derived view of the tape is held and rebuilt byte for byte; every seq is held."""
    truth = {m.seq: m.payload for m in messages}
    stored, places = store.stored("T1"), store.derived("T1")
    assert [seq for _, seq in store.seqs("T1")] == sorted(truth)
    assert sorted([b["seq"] for b, _ in stored] + [p.seq for p in places]) == sorted(truth)
    for topic in VIEWS:
        for seq, body in rebuilt(stored, places, topic):
            assert body == truth[seq], f"{topic} at seq {seq}"


def test_the_views_after_a_fact_are_kept_on_its_row_with_their_own_ts(
    store: Store, db_url: str
) -> None:
    batch = [
        _received(1, "shoe", 5.0, shoe=1, cards_left=416),
        _received(2, "roads", 5.0, shoe=1),
        _received(3, "recall", 7.25),
        _received(4, "round", None, shoe=1, round=1),
        _received(5, "card", 8.0, shoe=1, round=1, position="P1", card="9S"),
        _received(6, "round", 8.0, shoe=1, round=1),
    ]
    result = store.add(batch)
    assert result.stored == 6
    assert _rows(db_url, "SELECT seq, views FROM messages ORDER BY seq") == [
        (1, "roads recall@7.25 round@"), (5, "round"),
    ]
    assert _rows(db_url, "SELECT COUNT(*) FROM derived") == [(0,)]
    assert store.derived("T1") == [
        DerivedSeq(2, "roads", 5.0), DerivedSeq(3, "recall", 7.25),
        DerivedSeq(4, "round", None), DerivedSeq(6, "round", 8.0),
    ]
    assert store.derived("T1", since_seq=3, until_seq=4) == [
        DerivedSeq(3, "recall", 7.25), DerivedSeq(4, "round", None),
    ]
    assert [seq for _, seq in store.seqs()] == [1, 2, 3, 4, 5, 6]
    assert [t.last_seq for t in store.tails()] == [6]
    assert store.count() == 2


def test_a_place_that_follows_no_fact_of_its_batch_has_a_row_of_its_own(
    store: Store, db_url: str
) -> None:
    store.add([_received(1, "card", 1.0, shoe=1), _received(2, "round", 1.0, shoe=1)])
    store.add([_received(3, "round", 2.0, shoe=1)])  # a round opened by an input of its own
    long = [_received(4, "shoe", 3.0, shoe=1)] + [
        _received(seq, "round", 3.0, shoe=1) for seq in range(5, 6 + MAX_ATTACHED)
    ]
    store.add(long)
    assert _rows(db_url, "SELECT seq FROM derived ORDER BY seq") == [(3,), (5 + MAX_ATTACHED,)]
    assert [p.seq for p in store.derived("T1")] == [2, 3, *range(5, 6 + MAX_ATTACHED)]
    assert [seq for _, seq in store.seqs("T1")] == list(range(1, 6 + MAX_ATTACHED))


def test_a_view_held_before_is_a_duplicate_wherever_its_place_is(store: Store) -> None:
    store.add([_received(1, "card", 1.0, shoe=1), _received(2, "round", 1.0, shoe=1)])
    store.add([_received(3, "round", 2.0, shoe=1)])
    again = store.add([  # the broker delivers them again: places, and one not folded (whole)
        _received(1, "card", 1.0, shoe=1), _received(2, "round", 1.0, shoe=1),
        _received(3, "round", 2.0, shoe=1), _received(4, "card", 3.0, shoe=1),
    ])
    assert (again.stored, again.duplicates, again.conflicts) == (1, 3, 0)
    whole = _received(2, "round", 1.0, shoe=1)
    repeat = store.add([Received(whole.table, whole.topic, whole.body, whole.payload, 9.0)])
    assert (repeat.stored, repeat.duplicates) == (0, 1)
    other = store.add([_received(2, "roads", 1.0, shoe=1), _received(3, "recall", 2.0)])
    assert (other.stored, other.duplicates, other.conflicts) == (0, 0, 2)
    assert [seq for _, seq in store.seqs("T1")] == [1, 2, 3, 4]
    assert [p.seq for p in store.derived("T1")] == [2, 3]


def test_every_view_is_made_again_wherever_the_batches_were_cut(store: Store) -> None:
    messages = _messages("macau", 21)
    pick = random.Random(21)
    arrivals = Arrivals()
    at = 0
    while at < len(messages):  # batches of 1 to 12 messages, cut anywhere
        size = pick.randint(1, 12)
        store.add(arrivals.mark(messages[at:at + size]))
        at += size
    assert arrivals.places > 0.8 * sum(1 for m in messages if m.body["type"] in VIEWS)
    _made_again(store, messages)
    assert len(store.derived("T1")) == arrivals.places


OLD_LAYOUT = (  # the tables as 2f6686f made them
    """CREATE TABLE messages (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL, type TEXT NOT NULL,
        shoe BIGINT, round BIGINT, ts DOUBLE PRECISION, received DOUBLE PRECISION NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (tbl, seq))""",
    "CREATE INDEX messages_by_shoe ON messages (tbl, shoe, seq)",
    """CREATE TABLE derived (
        tbl TEXT NOT NULL, seq BIGINT NOT NULL, topic TEXT NOT NULL, ts DOUBLE PRECISION,
        PRIMARY KEY (tbl, seq))""",
)


def _old_database(db: str, marked: list[Received]) -> None:
    """The tables of the layout before, holding these messages as it held them."""
    mark = "%s" if db.startswith("postgresql:") else "?"
    with _sql(db) as connection:
        for statement in OLD_LAYOUT:
            connection.execute(statement)
        for m in marked:
            kind = m.topic.rsplit("/", 1)[-1]
            if m.place:
                connection.execute(f"INSERT INTO derived VALUES ({', '.join([mark] * 4)})",
                                   (m.table, m.seq, kind, m.body.get("ts")))
            else:
                connection.execute(
                    f"INSERT INTO messages VALUES ({', '.join([mark] * 9)})",
                    (m.table, m.seq, kind, m.body["type"], m.body.get("shoe"),
                     m.body.get("round"), m.body.get("ts"), m.received, m.payload),
                )
        connection.commit()


def test_a_database_of_the_layout_before_is_read_and_recorded_on(db_url: str) -> None:
    messages = _messages("macau", 23)
    cut = len(messages) // 2
    first = Arrivals()
    _old_database(db_url, first.mark(messages[:cut]))
    reader = open_store(db_url, create=False)  # the history, the pit: nothing changed
    try:
        _made_again(reader, messages[:cut])
        assert reader.shoe_start("T1") is not None
    finally:
        reader.close()
    assert "views" not in {c for (c,) in _column_names(db_url)}

    recorder = open_store(db_url)  # a recorder of this layout: adds the views column
    try:
        again = Arrivals()
        again.resume(recorder, "T1")
        for batch in _inputs(messages[cut:]):
            recorder.add(again.mark(batch))
        assert again.places > 0.8 * sum(1 for m in messages[cut:] if m.body["type"] in VIEWS)
        _made_again(recorder, messages)
    finally:
        recorder.close()
    assert _rows(db_url, f"SELECT COUNT(*) FROM messages WHERE seq <= {cut}"
                 " AND views IS NOT NULL") == [(0,)]  # the old rows as they were
    assert _rows(db_url, f"SELECT COUNT(*) FROM messages WHERE seq > {cut}"
                 " AND views IS NOT NULL")[0][0] > 10
    assert _rows(db_url, "SELECT COUNT(*) FROM messages WHERE topic IS NULL"
                 " OR round IS NULL AND type = 'card' AND body LIKE '%\"round\":1%'") == [(0,)]


def _column_names(db: str) -> list[tuple[str]]:
    if db.startswith("postgresql:"):
        return [(str(name),) for (name,) in _rows(
            db, "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'messages'")]
    return [(str(row[1]),) for row in _rows(db, "PRAGMA table_info(messages)")]


def test_a_views_text_not_understood_is_left_out() -> None:
    assert views_places(10, 5.0, "round roads@6.5 recall@") == [
        DerivedSeq(11, "round", 5.0), DerivedSeq(12, "roads", 6.5), DerivedSeq(13, "recall", None),
    ]
    assert views_places(10, 5.0, "card round@x  roads") == [DerivedSeq(14, "roads", 5.0)]
    assert views_places(10, None, "") == []


def test_a_body_is_kept_after_the_envelope_its_row_makes_again(store: Store, db_url: str) -> None:
    messages = _messages("macau", 25)[:40]
    store.add(Arrivals().mark(messages))
    kept = _rows(db_url, "SELECT seq, body FROM messages ORDER BY seq")
    assert len(kept) == sum(1 for m in messages if m.body["type"] not in VIEWS) > 15
    assert all(body.startswith('"') for _, body in kept)  # the text after the envelope
    by_seq = {m.seq: m.payload for m in messages}
    assert [(b["seq"], text) for b, text in store.stored("T1")] == [
        (seq, by_seq[seq]) for seq, _ in kept
    ]
    assert [b for _, b in store.messages("T1")] == [json.loads(by_seq[s]) for s, _ in kept]
    odd = [  # an integer ts, a schema 2, a body of another shape: each kept whole
        '{"schema":1,"seq":41,"ts":5,"type":"card","shoe":1}',
        '{"schema":2,"seq":42,"ts":5.5,"type":"card","shoe":1}',
        ' {"schema":1,"seq":43,"ts":6.5,"type":"card","shoe":1}',
    ]
    store.add([Received("T1", "baccarat/T1/card", json.loads(t), t, 1.0) for t in odd])
    assert _rows(db_url, "SELECT body FROM messages WHERE seq > 40 ORDER BY seq") == [
        (t,) for t in odd
    ]
    assert [text for _, text in store.stored("T1", since_seq=41)] == odd


def test_postgresql_fills_the_index_pages_whole(store: Store, db_url: str) -> None:
    if not db_url.startswith("postgresql:"):
        return  # SQLite has no fillfactor: it fills a page before it splits it
    found = dict(_rows(db_url, "SELECT relname, reloptions FROM pg_class WHERE relname IN"
                       " ('messages_pkey', 'messages_by_shoe', 'derived_pkey')"))
    assert found == {index: ["fillfactor=100"]
                     for index in ("messages_pkey", "messages_by_shoe", "derived_pkey")}
