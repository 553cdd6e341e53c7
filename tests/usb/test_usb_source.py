"""The real USB source against the virtual shuffler, through pyusb."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest
import usb.core
import usb.util

from baccarat.cards import Card
from baccarat.drivers import source, usb_source
from baccarat.drivers.events import (
    CardDrawn,
    DeviceEvent,
    Heartbeat,
    LinkDown,
    LinkUp,
    Rejected,
)
from baccarat.drivers.source import DeviceSourceError
from baccarat.drivers.usb_source import UsbSettings, UsbSource
from baccarat.reconnect import LinkState
from baccarat.sim_hardware import virtual_shuffler
from baccarat.sim_hardware.virtual_shuffler import VirtualShuffler

FULL_SHOE = 8 * 52
DEAL_TIMEOUT = 10.0
"""Seconds a test waits for its cards before it fails."""
OnEvent = Callable[[DeviceEvent, list[Card]], None]


async def deal(
    link: UsbSource,
    cards: int,
    on_event: OnEvent = lambda event, cards: None,
) -> tuple[list[Card], list[DeviceEvent]]:
    """Read events until ``cards`` cards arrived; return the cards and every other event."""
    drawn: list[Card] = []
    others: list[DeviceEvent] = []
    async with asyncio.timeout(DEAL_TIMEOUT):
        async for event in link:
            if isinstance(event, CardDrawn):
                drawn.append(event.card)
            else:
                others.append(event)
            on_event(event, drawn)
            if len(drawn) == cards:
                break
    return drawn, others


def kinds(events: list[DeviceEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


def link_events(events: list[DeviceEvent]) -> list[str]:
    return [type(e).__name__ for e in events if isinstance(e, LinkUp | LinkDown)]


def assert_no_rejected(events: list[DeviceEvent]) -> None:
    rejected = [e for e in events if isinstance(e, Rejected)]
    assert not rejected, rejected


@pytest.mark.parametrize("packet_size", [64, 5])
async def test_reads_a_full_8_deck_shoe_exactly(packet_size: int) -> None:
    threads_before = threading.active_count()
    shuffler = VirtualShuffler(decks=8, seed=2024, packet_size=packet_size)
    async with UsbSource(backend=shuffler.backend) as link:
        cards, others = await deal(link, FULL_SHOE)
        assert link.state is LinkState.UP
        assert shuffler.backend.open_handle_count == 1
        assert threading.active_count() == threads_before + 2  # reader and writer
    assert await _threads_back_to(threads_before)
    assert cards == shuffler.shoe
    assert kinds(others[:4]) == ["LinkUp", "Hello", "ShuffleStarted", "ShuffleDone"]
    assert_no_rejected(others)
    counters = link.counters
    assert counters["crc_errors"] == counters["usb_errors"] == 0
    # a host slowed by a loaded machine acknowledges late and the device sends its window
    # again (go-back-N): duplicates, dropped; the cards above are each there once
    duplicates = counters["duplicates"]
    assert counters["frames_ok"] == FULL_SHOE + 3 + duplicates  # HELLO, ShuffleStarted, ShuffleDone
    assert counters["bytes_in"] == link.decoder.counters["bytes_in"] > FULL_SHOE * 7
    assert counters["bytes_out"] > 0
    assert link.state is LinkState.STOPPED
    assert shuffler.backend.open_handle_count == 0


async def test_recovers_from_a_detach_mid_shoe() -> None:
    threads_before = threading.active_count()
    shuffler = VirtualShuffler(decks=8, seed=99)
    handles_at_link_up: list[int] = []

    def unplug_and_replug(event: DeviceEvent, cards: list[Card]) -> None:
        if isinstance(event, CardDrawn) and len(cards) == 150:
            shuffler.detach()
        elif isinstance(event, LinkDown):
            asyncio.get_running_loop().call_later(0.1, shuffler.attach)
        elif isinstance(event, LinkUp):
            handles_at_link_up.append(shuffler.backend.open_handle_count)

    async with UsbSource(backend=shuffler.backend) as link:
        cards, others = await deal(link, FULL_SHOE, unplug_and_replug)
    assert cards == shuffler.shoe  # nothing lost, nothing twice
    assert link_events(others) == ["LinkUp", "LinkDown", "LinkUp"]
    down = next(e for e in others if isinstance(e, LinkDown))
    assert "No such device" in down.reason
    assert handles_at_link_up == [1, 1]  # the old handle was released before reopening
    assert link.counters["reconnects"] == 1
    assert link.counters["usb_errors"] >= 1
    assert shuffler.firmware.sender.retransmissions > 0
    assert shuffler.backend.open_handle_count == 0
    assert await _threads_back_to(threads_before)


async def test_survives_several_unplugs_of_different_lengths() -> None:
    shuffler = VirtualShuffler(decks=2, seed=5, packet_size=13)
    plan = [(20, 0.0), (45, 0.2), (50, 0.05), (90, 0.3)]  # (after this many cards, unplugged for)

    def unplug(event: DeviceEvent, cards: list[Card]) -> None:
        if plan and len(cards) >= plan[0][0] and shuffler.attached:
            _, seconds = plan.pop(0)
            shuffler.detach()
            asyncio.get_running_loop().call_later(seconds, shuffler.attach)

    async with UsbSource(backend=shuffler.backend) as link:
        cards, others = await deal(link, 104, unplug)
    assert cards == shuffler.shoe
    assert link_events(others) == ["LinkUp"] + ["LinkDown", "LinkUp"] * 4
    assert link.counters["reconnects"] == 4


class JournalFailedError(Exception):
    """What a consumer raises when it cannot record an event."""


@pytest.mark.parametrize("acks_lost", [False, True])
async def test_a_consumer_that_raises_is_never_acknowledged(acks_lost: bool) -> None:
    """The second consumer resumes after the first one's record, frame and session.

    ``acks_lost``: none of the first consumer's ACKs reach the shuffler (it stopped before
    they were written, as a loaded machine once made it): the shuffler sends its HELLO
    again first, which the second must not take for a power-up.
    """
    shuffler = VirtualShuffler(decks=1, seed=21, heartbeat=False)
    failing = shuffler.shoe[4]  # seq 7: after HELLO, ShuffleStarted, ShuffleDone, 4 cards
    recorded: list[DeviceEvent] = []

    async def record_until_the_disk_fails() -> None:
        async with UsbSource(backend=shuffler.backend) as link:
            async for event in link:
                if event == CardDrawn(failing, seq=7):
                    raise JournalFailedError("disk full")
                if event.seq is not None:
                    recorded.append(event)

    with shuffler.device.lock:
        shuffler.firmware.deaf = acks_lost
    with pytest.raises(JournalFailedError):
        await record_until_the_disk_fails()
    with shuffler.device.lock:
        shuffler.firmware.deaf = False
        assert 7 in shuffler.firmware.sender.unacknowledged
        assert (0 in shuffler.firmware.sender.unacknowledged) is acks_lost  # the HELLO
    last = recorded[-1]
    assert (last.seq, last.session) == (6, shuffler.firmware.sender.session)
    second = UsbSource(backend=shuffler.backend)
    second.resume_after(last.seq, last.session)  # what the first consumer recorded last
    async with second:
        cards, _ = await deal(second, 52 - 4)
    assert cards == shuffler.shoe[4:]  # from the failed card on, each once


async def test_waits_for_a_shuffler_plugged_in_later() -> None:
    shuffler = VirtualShuffler(decks=1, seed=1)
    shuffler.detach()
    async with UsbSource(backend=shuffler.backend) as link:
        await asyncio.sleep(0.1)
        assert link.state in {LinkState.CONNECTING, LinkState.WAITING}
        shuffler.attach()
        cards, others = await deal(link, 52)
    assert cards == shuffler.shoe
    assert link_events(others) == ["LinkUp"]
    assert link.counters["reconnects"] == 0


async def test_a_full_queue_holds_the_device_back_and_loses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(usb_source, "QUEUE_SIZE", 2)
    shuffler = VirtualShuffler(decks=1, seed=3, packet_size=8)
    async with UsbSource(backend=shuffler.backend) as link:
        drawn: list[Card] = []
        while len(drawn) < 52:
            event = await asyncio.wait_for(anext(link), 5)
            if isinstance(event, CardDrawn):
                drawn.append(event.card)
            if len(drawn) % 10 == 0:
                await asyncio.sleep(0.08)  # a slow consumer: the device retransmits meanwhile
    assert drawn == shuffler.shoe
    assert shuffler.firmware.sender.retransmissions > 0
    assert link.counters["duplicates"] > 0


async def test_stop_is_prompt_while_the_queue_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usb_source, "QUEUE_SIZE", 1)
    shuffler = VirtualShuffler(decks=1, seed=3, packet_size=4)
    link = UsbSource(backend=shuffler.backend)
    await link.start()
    await asyncio.sleep(0.1)  # nobody consumes: the reader waits for room
    async with asyncio.timeout(1):
        await link.stop()
    assert shuffler.backend.open_handle_count == 0


async def test_stop_is_prompt_while_searching(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "RECONNECT_FIRST", 30.0)
    monkeypatch.setattr(source, "RECONNECT_CAP", 30.0)
    shuffler = VirtualShuffler(decks=1)
    shuffler.detach()
    link = UsbSource(backend=shuffler.backend)
    await link.start()
    await asyncio.sleep(0.05)
    async with asyncio.timeout(1):
        await link.stop()


async def test_after_stop_the_stream_ends_and_stop_may_be_repeated() -> None:
    shuffler = VirtualShuffler(decks=1, seed=8)
    link = UsbSource(backend=shuffler.backend)
    await link.start()
    assert isinstance(await anext(link), LinkUp)
    await link.stop()
    await link.stop()
    remaining = [event async for event in link]  # whatever was queued, then the end
    assert all(not isinstance(e, LinkDown) for e in remaining)
    with pytest.raises(StopAsyncIteration):
        await anext(link)


async def test_iterating_before_start_raises() -> None:
    with pytest.raises(DeviceSourceError):
        await anext(UsbSource(backend=VirtualShuffler(decks=1).backend))


async def test_gives_up_after_the_configured_attempts() -> None:
    shuffler = VirtualShuffler(decks=1)
    shuffler.detach()
    settings = UsbSettings(max_reconnect_attempts=3)
    async with UsbSource(settings, backend=shuffler.backend) as link:
        event = await asyncio.wait_for(anext(link), 5)
        assert isinstance(event, LinkDown)
        assert "giving up" in event.reason
        assert link.state is LinkState.FAILED
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(anext(link), 5)


async def test_silence_past_the_heartbeat_timeout_means_link_down() -> None:
    shuffler = VirtualShuffler(decks=0, heartbeat=False)
    settings = UsbSettings(heartbeat_timeout=0.2)
    async with UsbSource(settings, backend=shuffler.backend) as link:
        events = [await asyncio.wait_for(anext(link), 2) for _ in range(6)]
    assert kinds(events) == [
        "LinkUp", "Hello", "ShuffleStarted", "ShuffleDone", "LinkDown", "LinkUp"
    ]
    down = events[4]
    assert isinstance(down, LinkDown)
    assert "heartbeat" in down.reason


async def test_heartbeats_keep_an_idle_link_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(virtual_shuffler, "HEARTBEAT_INTERVAL", 0.05)
    shuffler = VirtualShuffler(decks=0)
    settings = UsbSettings(heartbeat_timeout=0.3)
    async with UsbSource(settings, backend=shuffler.backend) as link:
        events = [await asyncio.wait_for(anext(link), 2) for _ in range(14)]
    assert kinds(events[:4]) == ["LinkUp", "Hello", "ShuffleStarted", "ShuffleDone"]
    assert all(isinstance(e, Heartbeat) for e in events[4:])
    assert link.counters["reconnects"] == 0


async def test_another_vendor_id_is_not_claimed() -> None:
    shuffler = VirtualShuffler(decks=1, vendor_id=0x1209, product_id=0x0002)
    settings = UsbSettings(max_reconnect_attempts=1)
    async with UsbSource(settings, backend=shuffler.backend) as link:
        event = await asyncio.wait_for(anext(link), 2)
    assert isinstance(event, LinkDown)
    assert "giving up" in event.reason
    assert shuffler.backend.open_handle_count == 0


async def test_a_busy_interface_is_retried_until_released() -> None:
    shuffler = VirtualShuffler(decks=1, seed=6)
    squatter = usb.core.find(idVendor=0x1209, idProduct=0x0001, backend=shuffler.backend)
    squatter.set_configuration()
    usb.util.claim_interface(squatter, 0)
    async with UsbSource(backend=shuffler.backend) as link:
        await asyncio.sleep(0.1)
        assert link.state in {LinkState.CONNECTING, LinkState.WAITING}
        assert link.counters["usb_errors"] > 0  # EBUSY, retried with backoff
        usb.util.dispose_resources(squatter)
        cards, _ = await deal(link, 52)
    assert cards == shuffler.shoe


async def test_a_serial_number_selects_the_device() -> None:
    shuffler = VirtualShuffler(decks=1, seed=4)
    settings = UsbSettings(serial_number="VS-0001")
    async with UsbSource(settings, backend=shuffler.backend) as link:
        cards, _ = await deal(link, 52)
    assert cards == shuffler.shoe


def test_settings_default_to_the_pid_codes_test_ids() -> None:
    settings = UsbSettings()
    assert (settings.vendor_id, settings.product_id) == (0x1209, 0x0001)
    assert settings.protocol == "framed"


async def test_a_slow_consumer_is_not_mistaken_for_a_silent_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(usb_source, "QUEUE_SIZE", 1)
    shuffler = VirtualShuffler(decks=1, seed=12)
    settings = UsbSettings(heartbeat_timeout=0.15)

    async with UsbSource(settings, backend=shuffler.backend) as link:
        drawn: list[Card] = []
        others: list[DeviceEvent] = []
        async with asyncio.timeout(DEAL_TIMEOUT):
            async for event in link:
                if isinstance(event, CardDrawn):
                    drawn.append(event.card)
                else:
                    others.append(event)
                if len(drawn) == 10:
                    await asyncio.sleep(0.4)  # the reader waits on a full queue meanwhile
                if len(drawn) == 52:
                    break
    assert drawn == shuffler.shoe
    assert link_events(others) == ["LinkUp"]


async def _threads_back_to(count: int, within: float = 2.0) -> bool:
    """Whether the thread count falls back to ``count`` within a grace period.

    A busy machine may take a moment to finish a joined thread's last bytecodes.
    """
    deadline = time.monotonic() + within
    while threading.active_count() > count and time.monotonic() < deadline:  # noqa: ASYNC110 - no event tells when a thread is gone
        await asyncio.sleep(0.01)
    return threading.active_count() == count


@pytest.mark.parametrize("record", ["kept", "none"])
async def test_a_second_host_takes_the_shoe_where_the_first_left_it(record: str) -> None:
    """A host stops mid-shoe; the next one takes every card once from where it stands.

    The first host's last card is not acknowledged, and more frames are in flight or in
    the FIFO. The next host, told the last frame recorded or told nothing, asks.
    """
    shuffler = VirtualShuffler(decks=1, seed=31, packet_size=13)
    last: list[int] = []

    def note(event: DeviceEvent, cards: list[Card]) -> None:
        if isinstance(event, CardDrawn) and event.seq is not None:
            last.append(event.seq)

    async with UsbSource(backend=shuffler.backend) as first:
        taken, _ = await deal(first, 20, note)  # the 20th card is not acknowledged
    second = UsbSource(backend=shuffler.backend)
    if record == "kept":
        second.resume_after(last[-1])
    async with second:
        rest, _ = await deal(second, 52 - 20 + (record == "none"))  # a FIFO cut mid-frame
    assert second.counters["positions_in"] >= 1
    if record == "kept":
        assert taken + rest == shuffler.shoe
    else:
        # The shuffler's oldest unacknowledged card: the 20th, or an earlier one if the
        # writer thread had not yet written its acknowledgement when the first host
        # stopped (a busy machine). Taken again, never skipped: a host with no record
        # cannot tell a card it had from a new one.
        assert taken == shuffler.shoe[:20]
        first = shuffler.shoe.index(rest[0])  # one deck: every card once
        assert first <= 19, (first, rest[0])
        assert rest == shuffler.shoe[first:first + len(rest)]
