"""The publisher draining its outbox into a real mosquitto: order, window, outages."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiomqtt
import pytest

from baccarat.controller import publisher as publisher_module
from baccarat.controller.config import BrokerConfig
from baccarat.controller.outbox import Outbox, OutMessage
from baccarat.controller.publisher import MAX_INFLIGHT, Publisher
from support.mosquitto import Mosquitto, MosquittoFactory

TOPIC = "baccarat/T9/card"


@contextlib.asynccontextmanager
async def running(broker: Mosquitto, outbox: Outbox) -> AsyncIterator[Publisher]:
    publisher = Publisher(
        BrokerConfig(host=broker.host, port=broker.port),
        topic_base="baccarat/T9",
        table="T9",
        outbox=outbox,
    )
    task = asyncio.create_task(publisher.run())
    try:
        yield publisher
    finally:
        publisher.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def put(outbox: Outbox, first: int, last: int) -> None:
    for seq in range(first, last + 1):
        outbox.put(OutMessage(TOPIC, f"m{seq}".encode(), seq=seq))


async def acked(outbox: Outbox, seq: int, within: float = 30.0) -> None:
    async with asyncio.timeout(within):
        await outbox.wait_empty()
    assert outbox.acked_seq == seq


async def collect(sub: aiomqtt.Client, count: int, within: float = 30.0) -> list[int]:
    got: list[int] = []
    async with asyncio.timeout(within):
        async for message in sub.messages:
            assert isinstance(message.payload, bytes)
            got.append(int(message.payload[1:]))
            if len(set(got)) >= count:
                return got
    return got


def in_order_without_gaps(got: list[int], count: int) -> bool:
    """Every seq 1..count arrived; after a resend a subscriber may see one twice."""
    firsts = list(dict.fromkeys(got))
    return firsts == list(range(1, count + 1))


async def test_what_was_acknowledged_out_of_order_before_a_reconnection_is_not_skipped() -> None:
    outbox = Outbox()
    put(outbox, 1, 4)
    first, second = await outbox.next_unsent(), await outbox.next_unsent()
    outbox.ack(second)  # 2 acknowledged, 1 not: the connection drops
    outbox.rewind()
    assert await outbox.next_unsent() is first
    outbox.ack(first)  # 1 and 2 leave the outbox
    assert [m.seq for m in outbox] == [3, 4]
    assert outbox.acked_seq == 2
    assert [(await outbox.next_unsent()).message.seq for _ in range(2)] == [3, 4]


async def test_a_backlog_larger_than_the_window_goes_out_in_order(mosquitto: Mosquitto) -> None:
    outbox = Outbox()
    count = MAX_INFLIGHT * 5 + 7
    put(outbox, 1, count)  # all waiting before the first connection
    async with mosquitto.client() as sub:
        await sub.subscribe(TOPIC, qos=1)
        async with running(mosquitto, outbox):
            got = await collect(sub, count)
            await acked(outbox, count)
    assert in_order_without_gaps(got, count)


async def test_broker_away_then_back_with_more_than_a_window_waiting(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(persistence=True)
    outbox = Outbox()
    async with broker.client(identifier="board", clean_session=False) as sub:
        await sub.subscribe(TOPIC, qos=1)
    async with running(broker, outbox) as publisher:
        put(outbox, 1, 50)
        await acked(outbox, 50)
        await broker.stop_async()
        put(outbox, 51, 51 + MAX_INFLIGHT * 3)  # the first ones meet a dead connection
        await asyncio.sleep(1.0)
        await broker.start_async()
        last = 51 + MAX_INFLIGHT * 3
        await acked(outbox, last)
        assert publisher.counters.connects >= 2
        assert publisher.counters.failures >= 1
        assert publisher.backoff.failures == 0  # the delays start over after a connection
    async with broker.client(identifier="board", clean_session=False) as sub:
        await sub.subscribe(TOPIC, qos=1)  # a board that was away all along gets everything
        got = await collect(sub, last)
    assert in_order_without_gaps(got, last)


async def test_at_most_a_window_of_messages_waits_for_the_broker(mosquitto: Mosquitto) -> None:
    outbox = Outbox()
    async with running(mosquitto, outbox) as publisher:
        put(outbox, 1, 3)
        await acked(outbox, 3)
        mosquitto.pause()  # SIGSTOP: nothing is acknowledged
        try:
            put(outbox, 4, 3 + MAX_INFLIGHT * 3)
            await asyncio.sleep(0.5)
            assert publisher.counters.in_flight == MAX_INFLIGHT
            assert len(outbox) == MAX_INFLIGHT * 3
        finally:
            mosquitto.resume()
        await acked(outbox, 3 + MAX_INFLIGHT * 3)
        assert publisher.counters.in_flight == 0


async def test_a_broker_that_stops_acknowledging_fails_the_session(
    mosquitto: Mosquitto, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(publisher_module, "PUBLISH_TIMEOUT", 1.0)
    outbox = Outbox()
    async with running(mosquitto, outbox) as publisher:
        put(outbox, 1, 5)
        await acked(outbox, 5)
        mosquitto.pause()  # SIGSTOP: the TCP connection stays up, nothing answers
        try:
            put(outbox, 6, 10)
            await asyncio.sleep(3.0)
            assert "no PUBACK within 1 s" in caplog.text
            assert publisher.counters.failures >= 1
            assert len(outbox) == 5  # kept for the next connection
        finally:
            mosquitto.resume()
        await acked(outbox, 10)
