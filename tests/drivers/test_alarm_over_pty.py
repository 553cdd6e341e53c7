"""The host tells a framed shoe its open alarms over a real pty; the dealer stops for them.

No mocks: the virtual shoe writes to a pty master behind a symlink; SerialSource opens the
symlink as it opens a USB-serial adapter, and writes ALARM frames beside its ACKs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from baccarat.cards import Card, shuffled_shoe
from baccarat.drivers.events import CardDrawn, DeviceEvent, LinkUp
from baccarat.drivers.framed_device import ALARM_LEASE
from baccarat.drivers.serial_source import SerialSource
from baccarat.sim_hardware.virtual_shoe import VirtualShoe

CARDS = shuffled_shoe(1, seed=11)[:40]
PACE = 0.05


async def until(condition: Callable[[], bool], within: float, what: str) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - the shoe's state and counters have no event
            await asyncio.sleep(0.01)
    assert condition(), what


@contextlib.asynccontextmanager
async def dealing(
    device_link: Path, *, ignores: bool = False
) -> AsyncIterator[tuple[VirtualShoe, SerialSource, list[Card]]]:
    """A framed shoe dealing CARDS at PACE to a source whose events are read as they come."""
    received: list[Card] = []
    up = asyncio.Event()

    async def consume(link: SerialSource) -> None:
        async for event in link:
            if isinstance(event, LinkUp):
                up.set()
            elif isinstance(event, CardDrawn):
                received.append(event.card)

    async with (
        VirtualShoe(device_link, "framed", baud=115200, dealer_ignores_alarms=ignores) as shoe,
        SerialSource(str(device_link), "framed", baud=115200) as link,
    ):
        reader = asyncio.create_task(consume(link))
        async with asyncio.timeout(5):
            await up.wait()
        events: list[DeviceEvent] = [CardDrawn(card) for card in CARDS]
        player = asyncio.create_task(shoe.play(events, pace=PACE))
        try:
            yield shoe, link, received
        finally:
            player.cancel()
            await link.stop()
            for task in (player, reader):
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def test_the_dealer_pauses_before_his_next_card_and_goes_on_when_cleared(
    device_link: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="baccarat.sim_hardware.virtual_shoe")
    async with dealing(device_link) as (shoe, link, received):
        await until(lambda: len(received) >= 5, 5, "cards before the alarm")
        link.tell_alarms([(7, "extra_card")])
        await until(lambda: shoe.dealer_paused, 2, "the dealer never paused")
        assert shoe.open_alarms() == {7: "extra_card"}
        stopped_at = shoe.cards_sent
        # longer than the lease: the host's repeats keep the alarm open at the shoe
        await asyncio.sleep(ALARM_LEASE + 0.7)
        assert shoe.dealer_paused
        assert shoe.cards_sent == stopped_at
        assert shoe.sender.counters["alarms_in"] >= 4  # the open frame and its repeats
        link.tell_alarms([(7, "extra_card")])  # idempotent: nothing new to say
        link.tell_alarms([])
        await until(lambda: not shoe.dealer_paused, 2, "the dealer never went on")
        await until(lambda: len(received) == len(CARDS), 10, "the rest of the cards")
        assert shoe.counters["dealer_pauses"] == 1
        assert link.counters["alarm_bytes_out"] > 0
    assert received == CARDS  # nothing lost, nothing twice: the pause is the dealer's only
    messages = [r.getMessage() for r in caplog.records]
    assert any("the dealer pauses: alarm(s) 7 (extra_card) open" in m for m in messages)
    assert any("the dealer goes on: alarm(s) 7 (extra_card)" in m for m in messages)


async def test_a_dealer_who_ignores_alarms_deals_on(device_link: Path) -> None:
    async with dealing(device_link, ignores=True) as (shoe, link, received):
        await until(lambda: len(received) >= 5, 5, "cards before the alarm")
        link.tell_alarms([(3, "foreign_card")])
        await until(lambda: bool(shoe.open_alarms()), 2, "the shoe never heard the alarm")
        before = shoe.cards_sent
        await asyncio.sleep(10 * PACE)
        assert shoe.cards_sent > before
        assert not shoe.dealer_paused
        await until(lambda: len(received) == len(CARDS), 10, "every card")
        assert shoe.counters["dealer_pauses"] == 0
    assert received == CARDS


async def test_a_host_that_goes_away_does_not_hold_the_dealer(device_link: Path) -> None:
    async with dealing(device_link) as (shoe, link, received):
        await until(lambda: len(received) >= 3, 5, "cards before the alarm")
        link.tell_alarms([(1, "missing_card")])
        await until(lambda: shoe.dealer_paused, 2, "the dealer never paused")
        await link.stop()  # no cleared frame, no more repeats
        await until(lambda: not shoe.dealer_paused, ALARM_LEASE + 1.5, "held after the lease")


def test_a_line_source_has_nothing_to_tell() -> None:
    link = SerialSource("/nonexistent", "line")
    link.tell_alarms([(1, "extra_card")])
    assert link.counters["alarm_bytes_out"] == 0
