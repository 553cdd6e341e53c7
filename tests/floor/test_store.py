"""The recorder's database, SQLite and PostgreSQL alike: once per (table, seq), nothing lost."""

from __future__ import annotations

import json
from typing import Any

from baccarat.floor.store import Received, Store, open_store


def received(table: str, body: dict[str, Any], topic: str = "card") -> Received:
    return Received(table, f"baccarat/{table}/{topic}", body, json.dumps(body), 1.0)


def card(seq: int, code: str = "9S", shoe: int = 1, rnd: int = 1) -> dict[str, Any]:
    return {"schema": 1, "type": "card", "seq": seq, "ts": 100.0 + seq, "shoe": shoe,
            "round": rnd, "position": "P1", "card": code}


def test_each_message_is_stored_once(store: Store) -> None:
    first = store.add([received("T1", card(1)), received("T1", card(2)), received("T2", card(1))])
    assert (first.stored, first.duplicates) == (3, 0)
    again = store.add([received("T1", card(2)), received("T1", card(3))])
    assert (again.stored, again.duplicates, again.conflicts) == (1, 1, 0)
    assert store.count() == 4
    assert [(t, b["seq"]) for t, b in store.messages()] == [
        ("T1", 1), ("T1", 2), ("T1", 3), ("T2", 1)
    ]


def test_the_same_seq_with_another_body_is_a_conflict_kept_aside(store: Store) -> None:
    store.add([received("T1", card(1, "9S"))])
    result = store.add([received("T1", card(1, "KD"))])
    assert (result.stored, result.duplicates, result.conflicts) == (0, 0, 1)
    assert [b["card"] for _, b in store.messages()] == ["9S"]


def test_a_batch_mixing_new_repeated_and_conflicting_messages_counts_each(store: Store) -> None:
    """The whole batch is sent at once; one stored before sends it again row by row."""
    store.add([received("T1", card(1, "9S")), received("T1", card(2, "AH"))])
    online = {"schema": 1, "type": "status", "state": "online", "table": "T1"}
    result = store.add([
        received("T1", card(3, "2C")),   # new
        received("T1", card(2, "AH")),   # a repeat, as after a reconnection
        received("T1", card(1, "KD")),   # the same seq with another body
        received("T1", online, "status"),
        received("T1", card(4, "3D")),   # new, then repeated within the batch
        received("T1", card(4, "3D")),
    ])
    assert (result.stored, result.duplicates, result.conflicts, result.statuses) == (2, 2, 1, 1)
    assert [(b["seq"], b["card"]) for _, b in store.messages()] == [
        (1, "9S"), (2, "AH"), (3, "2C"), (4, "3D")
    ]
    assert store.count() == 4


def test_an_all_new_batch_is_stored_whole(store: Store) -> None:
    batch = [received(f"T{n % 3}", card(n)) for n in range(1, 301)]
    result = store.add(batch)
    assert (result.stored, result.duplicates, result.conflicts) == (300, 0, 0)
    assert store.count() == 300
    assert sorted(b["seq"] for _, b in store.messages(table="T1")) == list(range(1, 301, 3))


def test_status_is_kept_as_the_latest_and_is_not_a_message(store: Store) -> None:
    online = {"schema": 1, "type": "status", "state": "online", "table": "T1"}
    result = store.add([received("T1", online, "status"), received("T1", online, "status")])
    assert result.statuses == 2
    assert store.count() == 0


def test_filters_by_table_shoe_and_time(store: Store) -> None:
    store.add([received("T1", card(n, shoe=1 + n // 3)) for n in range(1, 7)])
    store.add([received("T2", card(1))])
    assert [b["seq"] for _, b in store.messages(table="T1", shoe=2)] == [3, 4, 5]
    assert [b["seq"] for _, b in store.messages(table="T1", since=102.0, until=104.0)] == [2, 3]


def test_a_body_comes_back_exactly_as_published(store: Store) -> None:
    body = card(1) | {"text": "carte étrangère: 9S (Art. 10) 異常"}
    store.add([received("T1", body)])
    assert next(store.messages())[1] == body


def test_sqlite_keeps_everything_after_reopening(tmp_path: Any) -> None:
    path = str(tmp_path / "floor.db")
    first = open_store(path)
    first.add([received("T1", card(n)) for n in range(1, 101)])
    first.close()
    again = open_store(f"sqlite://{path}")
    assert again.count() == 100
    again.close()


def test_a_value_the_database_cannot_hold_is_refused_not_raised(store: Store) -> None:
    """An integer past 64 bits or a lone surrogate: StoreRefusedError, the connection good."""
    import pytest

    from baccarat.floor.store import StoreRefusedError

    huge = Received("T1", "baccarat/T1/card", card(1) | {"seq": 2**70}, "{}", 1.0)
    with pytest.raises(StoreRefusedError):
        store.add([huge])
    surrogate = Received("T1", "baccarat/T1/card", card(2) | {"type": "\ud800"}, "{}", 1.0)
    with pytest.raises(StoreRefusedError):
        store.add([surrogate])
    assert store.add([received("T1", card(3))]).stored == 1  # the store goes on
    assert store.count() == 1


def test_quarantined_messages_are_kept_with_their_reason(store: Store) -> None:
    from baccarat.floor.store import QUARANTINE_KEEP, Quarantined

    hostile = [
        Quarantined("baccarat/T1/card", b"\xff\x00 not json", "not UTF-8", 5.0),
        Quarantined("baccarat/T1/\ud800\x00", b"{}", "odd topic \udfff", 6.0),
        Quarantined("baccarat/T1/card", b"x" * (QUARANTINE_KEEP + 10), "too big", 7.0),
    ]
    result = store.add([received("T1", card(1))], hostile)
    assert (result.stored, result.quarantined) == (1, 3)
    kept = store.quarantined()
    assert kept[0] == ("baccarat/T1/card", "not UTF-8", b"\xff\x00 not json")
    assert kept[1][0] == "baccarat/T1/\\ud800\\x00"
    assert kept[1][1] == "odd topic \\udfff"
    assert kept[2][2] == b"x" * QUARANTINE_KEEP
    assert store.count() == 1


def test_the_quarantine_by_topic_counts_and_names_the_newest_reason(store: Store) -> None:
    from baccarat.floor.store import Quarantined, QuarantineTopic

    assert store.quarantine_topics() == []
    store.add([], [
        Quarantined("baccarat/T1/card", b"a", "first", 5.0),
        Quarantined("baccarat/T2/round", b"b", "second", 6.0),
        Quarantined("baccarat/T1/card", b"c", "third", 7.0),
    ])
    assert store.quarantine_topics() == [
        QuarantineTopic("baccarat/T1/card", 2, 7.0, "third"),
        QuarantineTopic("baccarat/T2/round", 1, 6.0, "second"),
    ]
    assert [t.topic for t in store.quarantine_topics(1)] == ["baccarat/T1/card"]


def test_the_store_reconnects(store: Store) -> None:
    store.add([received("T1", card(1))])
    store.reconnect()
    store.add([received("T1", card(2))])
    assert store.count() == 2


def test_tails_give_each_tables_newest_message_and_status(store: Store) -> None:
    online = {"schema": 1, "type": "status", "state": "online", "table": "T1"}
    store.add([received("T1", card(1)), received("T1", card(2)), received("T2", card(5))])
    store.add([Received("T3", "baccarat/T3/status", online, json.dumps(online), 9.0)])
    tails = {t.table: t for t in store.tails()}
    assert (tails["T1"].last_seq, tails["T2"].last_seq, tails["T3"].last_seq) == (2, 5, None)
    assert tails["T3"].status == online
    assert tails["T3"].status_received == 9.0
    assert tails["T1"].status is None


def test_the_quarantine_keeps_a_sample_of_the_newest_and_counts_every_one(store: Store) -> None:
    """A flood of garbage: counted for ever by topic and cause; only the newest bodies kept."""
    from baccarat.floor.store import Quarantined

    store.quarantine_keep = 5
    for batch in range(4):
        store.add([], [
            Quarantined("baccarat/T1/limits", b"\xff" * 2000, "body too long",
                        100.0 + batch * 10 + n, "size")
            for n in range(6)
        ])
    store.add([], [Quarantined("baccarat/T2/card", b"[]", "not an object", 500.0, "shape")])
    kept = store.quarantined()
    assert len(kept) == 5  # the newest five, the oldest deleted
    assert kept[-1] == ("baccarat/T2/card", "not an object", b"[]")
    assert all(payload == b"\xff" * 1024 for _, _, payload in kept[:-1])  # a size's start
    assert store.quarantine_counts() == {
        ("baccarat/T1/limits", "size"): 24, ("baccarat/T2/card", "shape"): 1,
    }
    topics = store.quarantine_topics()
    assert [(t.topic, t.count) for t in topics] == [
        ("baccarat/T2/card", 1), ("baccarat/T1/limits", 24),
    ]
    store.quarantine_keep = 0  # none kept, every one counted
    store.add([], [Quarantined("baccarat/T1/limits", b"x", "too long", 600.0, "size")])
    assert len(store.quarantined()) == 5
    assert store.quarantine_counts()[("baccarat/T1/limits", "size")] == 25
