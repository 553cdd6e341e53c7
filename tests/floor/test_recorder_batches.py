"""The recorder's batches without a broker: screened, stored, quarantined, never retried.

The deliveries are handed to :meth:`Recorder.record` as its consumer would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from baccarat.floor import recorder as recorder_module
from baccarat.floor.recorder import BrokerAddress, Delivery, Recorder
from baccarat.floor.store import (
    AddResult,
    Quarantined,
    Received,
    Store,
    StoreRefusedError,
    StoreUnavailableError,
)


def delivery(topic: str, payload: bytes | dict[str, Any], mid: int = 1) -> Delivery:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Delivery(topic, data, mid, 1, 100.0)


def card(seq: int) -> dict[str, Any]:
    return {"schema": 1, "type": "card", "seq": seq, "ts": 1.0, "shoe": 1, "round": 1,
            "position": "P1", "card": "9S"}


class Refusing:
    """A store that refuses any batch holding a seq of ``refused``, and is away ``away`` times."""

    def __init__(self, store: Store, refused: set[int], away: int = 0) -> None:
        self.store, self.refused, self.away = store, refused, away
        self.calls = 0
        self.reconnects = 0

    def add(self, batch: Sequence[Received], quarantine: Sequence[Quarantined] = ()) -> AddResult:
        self.calls += 1
        if self.away:
            self.away -= 1
            raise StoreUnavailableError("OperationalError: the connection is closed")
        if any(m.seq in self.refused for m in batch):
            raise StoreRefusedError("DataError: value out of range")
        return self.store.add(batch, quarantine)

    def reconnect(self) -> None:
        self.reconnects += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def recorder_on(store: Any) -> Recorder:
    return Recorder(BrokerAddress(), store)


async def test_the_repro_is_quarantined_and_the_rest_stored(store: Store) -> None:
    """The audit's repro: one out-of-range seq on a limits topic no longer stops the rest."""
    recorder = recorder_on(store)
    await recorder.record([
        delivery("baccarat/T1/limits", b'{"type":"limits","seq":1180591620717411303424}'),
        delivery("baccarat/T1/card", card(1)),
        delivery("baccarat/T1/card", b'{"type":"\\ud800","seq":2}'),
        delivery("baccarat/T1/card", card(3)),
    ])
    assert [b["seq"] for _, b in store.messages()] == [1, 3]
    reasons = [reason for _, reason, _ in store.quarantined()]
    assert len(reasons) == 2
    assert "outside 64 bits" in reasons[0]
    assert "lone surrogate" in reasons[1]
    assert recorder.counters.quarantined == 2
    assert recorder.counters.quarantined_by == {"shape": 1, "encoding": 1}


async def test_a_batch_the_database_refuses_is_stored_one_by_one(store: Store) -> None:
    refusing = Refusing(store, refused={3})
    recorder = recorder_on(refusing)
    await recorder.record([delivery("baccarat/T1/card", card(n), n) for n in range(1, 6)])
    assert [b["seq"] for _, b in store.messages()] == [1, 2, 4, 5]
    ((topic, reason, payload),) = store.quarantined()
    assert topic == "baccarat/T1/card"
    assert reason.startswith("the database refused it: DataError")
    assert json.loads(payload) == card(3)
    assert (recorder.counters.refused, recorder.counters.quarantined) == (1, 1)
    assert recorder.counters.quarantined_by == {"database": 1}
    assert refusing.calls == 1 + 5 + 1  # the batch, each alone, the quarantine row


async def test_an_unavailable_database_is_waited_for_with_backoff(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorder_module, "RETRY_FIRST", 0.01)
    monkeypatch.setattr(recorder_module, "RETRY_CAP", 0.02)
    refusing = Refusing(store, refused=set(), away=4)
    recorder = recorder_on(refusing)
    await recorder.record([delivery("baccarat/T1/card", card(n), n) for n in range(1, 4)])
    assert [b["seq"] for _, b in store.messages()] == [1, 2, 3]
    assert refusing.reconnects == 4
    assert recorder.counters.store_failures == 4
    assert store.quarantined() == []


async def test_commands_and_a_cleared_fault_are_not_quarantined(store: Store) -> None:
    recorder = recorder_on(store)
    await recorder.record([
        delivery("baccarat/T1/cmd/void", b'{"anything": 1}'),
        delivery("baccarat/T1/fault", b""),
        delivery("baccarat/T1/card", b""),
        delivery("baccarat/T1/card/extra", card(1)),
        delivery("baccarat/" + "T" * 65 + "/card", card(1)),
    ])
    reasons = [reason for _, reason, _ in store.quarantined()]
    assert reasons[0] == "empty body"
    assert "topic is not" in reasons[1]
    assert "table name" in reasons[2]
    assert len(reasons) == 3
    assert store.count() == 0
