"""End to end on real ptys: virtual shoe -> pty -> serial transport -> decoder -> events.

No mocks: the shoe writes to a pty master behind a symlink; SerialSource opens the symlink
with pyserial-asyncio-fast, exactly as it opens a USB-serial adapter.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import pytest

from baccarat.cards import Card
from baccarat.drivers import serial_source, source
from baccarat.drivers.codec import get_codec
from baccarat.drivers.events import (
    CardDrawn,
    DeviceEvent,
    Heartbeat,
    Hello,
    LinkDown,
    LinkUp,
    Rejected,
)
from baccarat.drivers.serial_source import SerialSource
from baccarat.reconnect import LinkState
from baccarat.sim_hardware.dealer import Dealer, shuffled_shoe
from baccarat.sim_hardware.faults import FaultPlan
from baccarat.sim_hardware.virtual_shoe import VirtualShoe

FULL_SHOE = shuffled_shoe(8, seed=2024)
E = TypeVar("E", bound=DeviceEvent)


async def next_of(events: AsyncIterator[DeviceEvent], kind: type[E], within: float = 5.0) -> E:
    """The next event of type ``kind`` (others are skipped), within ``within`` seconds."""
    async with asyncio.timeout(within):
        async for event in events:
            if isinstance(event, kind):
                return event
    raise AssertionError(f"the link ended before a {kind.__name__}")


async def collect_cards(
    events: AsyncIterator[DeviceEvent], count: int, within: float
) -> list[Card]:
    cards: list[Card] = []
    async with asyncio.timeout(within):
        async for event in events:
            if isinstance(event, CardDrawn):
                cards.append(event.card)
                if len(cards) == count:
                    break
    return cards


@pytest.mark.parametrize(
    ("protocol", "baud"),
    [
        ("line", 115200),
        ("framed", 115200),
        pytest.param("line", 9600, marks=pytest.mark.slow),
        pytest.param("framed", 9600, marks=pytest.mark.slow),
    ],
)
async def test_a_full_eight_deck_shoe_arrives_exactly(
    device_link: Path, protocol: str, baud: int
) -> None:
    async with (
        VirtualShoe(device_link, protocol, baud=baud) as shoe,
        SerialSource(str(device_link), protocol, baud=baud) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        started = time.monotonic()
        await shoe.play(CardDrawn(card) for card in FULL_SHOE)
        cards = await collect_cards(events, len(FULL_SHOE), within=30)
        elapsed = time.monotonic() - started
    assert cards == FULL_SHOE
    counters = link.counters
    assert counters["rejected_bytes"] == 0
    assert counters["frames_ok"] >= 416
    # paced at the baud rate: a 416-card shoe can't arrive faster than the wire allows
    frame_bytes = 5 if protocol == "line" else 9
    assert elapsed >= 0.9 * 416 * frame_bytes * 10 / baud


async def test_a_dealt_shoe_with_buttons_arrives_in_order_over_framed(device_link: Path) -> None:
    dealer = Dealer(decks=8, seed=5, mistake_rate=0.1)
    codec = get_codec("framed")
    expected = list(dealer.events(codec.carries))
    async with (
        VirtualShoe(device_link, "framed", baud=115200) as shoe,
        SerialSource(str(device_link), "framed", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        await shoe.play(expected)
        got: list[DeviceEvent] = []
        async with asyncio.timeout(20):
            async for event in events:
                if not isinstance(event, Heartbeat | LinkUp | Hello):
                    got.append(dataclasses.replace(event, seq=None))
                if len(got) == len(expected):
                    break
    assert got == expected


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["framed", "line"])
async def test_unplug_and_replug_mid_shoe(device_link: Path, protocol: str) -> None:
    """Link down and up are reported, and reading resumes within 2 s of the replug.

    With ``framed`` no card is lost or duplicated (``line`` loses what was dealt meanwhile).
    """
    replugged_at: list[float] = []
    async with (
        VirtualShoe(device_link, protocol, baud=115200) as shoe,
        SerialSource(str(device_link), protocol, baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        dealing = asyncio.create_task(
            shoe.play((CardDrawn(card) for card in FULL_SHOE[:300]), pace=0.004)
        )
        before = await collect_cards(events, 150, within=10)

        async def unplug() -> None:
            await shoe.unplug(1.0)
            replugged_at.append(time.monotonic())

        unplugging = asyncio.create_task(unplug())
        seen: list[DeviceEvent] = []
        async with asyncio.timeout(10):
            async for event in events:
                seen.append(event)
                if isinstance(event, LinkUp):
                    break
        up_at = time.monotonic()
        await unplugging
        await dealing
        await shoe.play(CardDrawn(card) for card in FULL_SHOE[300:])
        first_after = await collect_cards(events, 1, within=5)
        reading_at = time.monotonic()
        received = before + [e.card for e in seen if isinstance(e, CardDrawn)] + first_after
        if protocol == "framed":
            received += await collect_cards(events, len(FULL_SHOE) - len(received), 20)
        else:
            await shoe.drain()
            await asyncio.sleep(0.2)
            await link.stop()
            received += [e.card async for e in events if isinstance(e, CardDrawn)]
    assert [type(e) for e in seen if isinstance(e, LinkUp | LinkDown)] == [LinkDown, LinkUp]
    assert up_at - replugged_at[0] < 2.0
    assert link.counters["reconnects"] == 1
    if protocol == "framed":
        assert reading_at - replugged_at[0] < 2.0
        assert received == FULL_SHOE  # nothing lost, nothing twice, in order
    else:
        assert _is_subsequence(received, FULL_SHOE)
        assert received[-len(FULL_SHOE[300:]) :] == FULL_SHOE[300:]


def _cards(events: list[DeviceEvent]) -> int:
    return sum(isinstance(e, CardDrawn) for e in events)


def _is_subsequence(part: list[Card], whole: list[Card]) -> bool:
    remaining = iter(whole)
    return all(any(card == other for other in remaining) for card in part)


async def test_framed_shoe_survives_a_noisy_wire(device_link: Path) -> None:
    plan = FaultPlan(
        seed=7,
        garbage_rate=0.05,
        bit_flip_rate=0.03,
        split_rate=0.2,
        merge_rate=0.1,
        drop_rate=0.03,
    )
    async with (
        VirtualShoe(
            device_link, "framed", baud=115200, faults=plan, retransmit_timeout=0.05
        ) as shoe,
        SerialSource(str(device_link), "framed", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        await shoe.play(CardDrawn(card) for card in FULL_SHOE)
        rejected: list[Rejected] = []
        cards: list[Card] = []
        async with asyncio.timeout(30):
            async for event in events:
                if isinstance(event, Rejected):
                    rejected.append(event)
                elif isinstance(event, CardDrawn):
                    cards.append(event.card)
                    if len(cards) == len(FULL_SHOE):
                        break
    assert cards == FULL_SHOE
    counters = link.counters
    assert counters["crc_errors"] > 0
    assert counters["rejected_bytes"] > 0
    assert counters["retransmissions"] > 0
    assert rejected
    assert shoe.faults.counters["drops"] > 0
    assert shoe.sender.counters["retransmissions"] > 0


async def test_line_shoe_on_a_noisy_wire_reports_what_it_throws_away(device_link: Path) -> None:
    plan = FaultPlan(seed=3, garbage_rate=0.05, split_rate=0.3, merge_rate=0.2)
    async with (
        VirtualShoe(device_link, "line", baud=115200, faults=plan) as shoe,
        SerialSource(str(device_link), "line", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        await shoe.play(CardDrawn(card) for card in FULL_SHOE[:100])
        await shoe.drain()
        await asyncio.sleep(0.1)
        await link.stop()
        got = [event async for event in events]
    cards = [e.card for e in got if isinstance(e, CardDrawn)]
    rejected = [e for e in got if isinstance(e, Rejected)]
    assert rejected
    # noise glued before a line costs no card, and every byte of it is reported once
    assert cards == FULL_SHOE[:100]
    assert sum(e.size for e in rejected) == link.counters["rejected_bytes"]
    assert link.counters["rejected_bytes"] == shoe.faults.counters["garbage_bytes"] > 0


async def test_missing_heartbeats_mean_link_down(device_link: Path) -> None:
    codec = dataclasses.replace(get_codec("framed"), heartbeat_timeout=0.4)
    async with (
        VirtualShoe(device_link, "framed", baud=115200, heartbeat_interval=None) as shoe,
        SerialSource(str(device_link), codec, baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)  # the HELLO arrived
        down = await next_of(events, LinkDown, within=3)
        assert "heartbeat" in down.reason
        assert link.state is LinkState.OPEN
        shoe.send(CardDrawn(FULL_SHOE[0]))
        await next_of(events, LinkUp, within=3)
        assert link.counters["heartbeat_timeouts"] == 1


async def test_heartbeats_keep_an_idle_link_up(device_link: Path) -> None:
    codec = dataclasses.replace(get_codec("framed"), heartbeat_timeout=0.6)
    async with (
        VirtualShoe(device_link, "framed", baud=115200, heartbeat_interval=0.15),
        SerialSource(str(device_link), codec, baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        beats = 0
        async with asyncio.timeout(1.5):
            async for event in events:
                assert not isinstance(event, LinkDown)
                beats += isinstance(event, Heartbeat)
                if beats == 5:
                    break
        assert link.state is LinkState.UP


async def test_a_slow_consumer_pauses_reading_and_loses_nothing(
    device_link: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serial_source, "QUEUE_HIGH", 20)
    monkeypatch.setattr(serial_source, "QUEUE_LOW", 5)
    async with (
        VirtualShoe(device_link, "line", baud=115200) as shoe,
        SerialSource(str(device_link), "line", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        await shoe.play(CardDrawn(card) for card in FULL_SHOE)
        await asyncio.sleep(0.5)  # nobody reads the events meanwhile
        assert link.counters["read_pauses"] >= 1
        assert link.backlog <= 20 + 1  # the batch of the read that paused it
        cards = await collect_cards(events, len(FULL_SHOE), within=10)
    assert cards == FULL_SHOE


async def test_dump_debug_shows_recent_traffic_in_hex(device_link: Path) -> None:
    async with (
        VirtualShoe(device_link, "framed", baud=115200) as shoe,
        SerialSource(str(device_link), "framed", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        shoe.send(CardDrawn(FULL_SHOE[0]))
        await next_of(events, CardDrawn)
        dump = link.dump_debug()
    assert " rx 7e " in dump
    assert " tx 7e 00 " in dump  # an ACK
    assert "frames_ok=" in dump


async def test_a_planned_unplug_loses_nothing_over_framed(
    device_link: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "RECONNECT_FIRST", 0.02)
    monkeypatch.setattr(source, "RECONNECT_CAP", 0.1)
    plan = FaultPlan(unplug_after_frames=(100,), unplug_seconds=0.3)
    async with (
        VirtualShoe(device_link, "framed", baud=115200, faults=plan) as shoe,
        SerialSource(str(device_link), "framed", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        await shoe.play((CardDrawn(card) for card in FULL_SHOE), pace=0.001)
        seen: list[DeviceEvent] = []
        async with asyncio.timeout(20):
            async for event in events:
                seen.append(event)
                if sum(isinstance(e, CardDrawn) for e in seen) == len(FULL_SHOE):
                    break
    assert [e.card for e in seen if isinstance(e, CardDrawn)] == FULL_SHOE
    assert [type(e) for e in seen if isinstance(e, LinkUp | LinkDown)] == [LinkDown, LinkUp]
    assert shoe.counters["unplugs"] == 1
    assert shoe.counters["bytes_lost"] > 0


async def test_frames_are_acknowledged_only_once_the_consumer_is_done(device_link: Path) -> None:
    async with (
        VirtualShoe(device_link, "framed", baud=115200, heartbeat_interval=None) as shoe,
        SerialSource(str(device_link), "framed", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        shoe.send(CardDrawn(FULL_SHOE[0]))
        await next_of(events, CardDrawn)  # held by the consumer, not yet done with
        await asyncio.sleep(0.7)  # longer than the shoe's retransmission timeout
        assert shoe.sender.in_flight == 1

        async def ask() -> DeviceEvent:
            return await anext(events)

        asking = asyncio.create_task(ask())  # done with it: asks for the next
        async with asyncio.timeout(2):
            await shoe.drain()
        assert not asking.done()
        asking.cancel()
        with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
            await asking
    assert link.counters["retransmissions"] >= 1  # the shoe repeated the unacknowledged card


class JournalFailedError(Exception):
    """What a consumer raises when it cannot record an event."""


async def test_a_consumer_that_raises_is_never_acknowledged(device_link: Path) -> None:
    """The event the consumer failed on stays unacknowledged, and is taken again once.

    The shoe sends it again, and the next consumer, resumed after what the first one
    recorded, takes it.
    """
    cards = FULL_SHOE[:3]
    async with VirtualShoe(
        device_link, "framed", baud=115200, heartbeat_interval=None, retransmit_timeout=0.2
    ) as shoe:
        taken: list[DeviceEvent] = []

        async def record_until_the_disk_fails() -> None:
            async with SerialSource(str(device_link), "framed", baud=115200) as first:
                await shoe.play(CardDrawn(card) for card in cards[:2])
                async for event in first:
                    taken.append(event)
                    if event == CardDrawn(cards[1], seq=2):
                        shoe.send(CardDrawn(cards[2]))  # arrives after we asked for it
                    if event == CardDrawn(cards[2], seq=3):
                        raise JournalFailedError("disk full")

        with pytest.raises(JournalFailedError):
            await record_until_the_disk_fails()
        assert shoe.sender.unacknowledged == [3]
        await asyncio.sleep(0.5)  # the shoe repeats card 3 meanwhile: nobody listens
        assert shoe.sender.unacknowledged == [3]
        assert shoe.sender.counters["retransmissions"] >= 1

        second = SerialSource(str(device_link), "framed", baud=115200)
        second.resume_after(2)  # the first consumer recorded up to frame 2
        async with second:
            events = aiter(second)
            again = await next_of(events, CardDrawn)
            asking = asyncio.create_task(anext(events))  # done with it: asks for the next
            async with asyncio.timeout(2):
                await shoe.drain()
            assert shoe.sender.unacknowledged == []
            asking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asking
    assert [e for e in taken if isinstance(e, CardDrawn)] == [
        CardDrawn(card, seq=seq) for seq, card in enumerate(cards, start=1)
    ]
    assert again == CardDrawn(cards[2], seq=3)
    # resumed after 2: card 3 is the next; its repeats that waited in the port while nobody
    # listened are read now (opening the port discards nothing) and never taken again
    assert asking.cancelled()  # no second copy of card 3 came after it


async def test_a_restarted_host_resumes_past_acknowledged_heartbeats(device_link: Path) -> None:
    """A host resumed after card 1 takes card 2 though heartbeats came between them.

    The first host acknowledged the heartbeats and did not record them, so card 2's frame
    number is not the one after card 1's.
    """
    async with VirtualShoe(
        device_link, "framed", baud=115200, heartbeat_interval=0.1, retransmit_timeout=0.2
    ) as shoe:
        async with SerialSource(str(device_link), "framed", baud=115200) as first:
            events = aiter(first)
            shoe.send(CardDrawn(FULL_SHOE[0]))
            card = await next_of(events, CardDrawn)
            await next_of(events, Heartbeat)
            await next_of(events, Heartbeat)
            await anext(events)  # done with the last heartbeat: it is acknowledged
        assert card.seq is not None
        shoe.send(CardDrawn(FULL_SHOE[1]))
        second = SerialSource(str(device_link), "framed", baud=115200)
        second.resume_after(card.seq)
        async with second:
            following = await next_of(aiter(second), CardDrawn, within=3)
    assert following.card == FULL_SHOE[1]
    assert following.seq is not None
    assert (following.seq - card.seq) % 256 > 1  # heartbeats came between the two
