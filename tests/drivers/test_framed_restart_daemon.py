"""The daemon and a framed shoe agree where to resume after a restart of the daemon.

The real daemon process, a virtual shoe on a real pty at 9600 baud with the protocol's own
timers (retransmission after 0.5 s, a heartbeat after 1 s of silence), a real mosquitto,
and a dealer at a real pace: a card a second, idle gaps with heartbeats between. Every
test checks both records: the cards published on MQTT (by message ``seq``, so a message
published again after a restart counts once, and a card taken twice shows up twice) and
the cards the journal holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from baccarat.cards import ALL_CARDS, Card
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.drivers.framed_device import HEARTBEAT_INTERVAL
from baccarat.drivers.framed_wire import CARD, FrameSplitter
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

BAUD = 9600
PACE = 1.0
"""Seconds between two cards, as a dealer deals."""
FLOW_AGAIN = 2.0
"""Seconds after the restarted daemon is ready within which a card must be published."""
WITHIN = 20.0
"""Seconds any longer step may take before the test fails (the machine is shared)."""
CARDS: list[Card] = list(ALL_CARDS[:8])


def profile_file(folder: Path) -> Path:
    """Macau rules without the shoe's burn, so that every card is dealt to a hand."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "profile.toml"
    path.write_text('[profile]\nbase = "macau"\nname = "macau-noburn"\nburn = "none"\n')
    return path


def published_cards(board: Recorder) -> list[str]:
    """The cards published, in message order, each message once."""
    messages = sorted(board.by_seq().items())
    return [body["card"] for _, body in messages if body.get("type") == "card"]


def cards_published(count: int) -> Callable[[Recorder], bool]:
    return lambda board: len(published_cards(board)) >= count


def gap_alarms(board: Recorder) -> list[dict[str, object]]:
    return [body for body in board.bodies("alarm") if body.get("kind") == "sequence_gap"]


async def deal(shoe: VirtualShoe, cards: list[Card]) -> None:
    """A card a second."""
    for card in cards:
        shoe.send(CardDrawn(card))
        await asyncio.sleep(PACE)


def is_card(frame: bytes, card: Card) -> bool:
    """Whether ``frame`` carries ``card``."""
    body = FrameSplitter().split(frame)[0]
    assert isinstance(body, bytes)
    return body[2] == CARD and body[3:5] == bytes((card.rank, ord(card.suit)))


@contextlib.asynccontextmanager
async def dealing_table(
    tmp_path: Path, mosquitto: Mosquitto
) -> AsyncIterator[tuple[VirtualShoe, Daemon, Recorder]]:
    """A framed shoe on a pty, the daemon started on it, a board; the shoe inserted."""
    profile = str(profile_file(tmp_path))
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=BAUD) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, baud=BAUD, profile=profile)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                yield shoe, daemon, board
        finally:
            daemon.close()


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "SIGTERM after minutes"])
async def test_a_restart_after_an_idle_gap_takes_every_card_once(
    tmp_path: Path, mosquitto: Mosquitto, how: str
) -> None:
    """Issue 10, finding 1: idle 3 s (heartbeats acknowledged, not journaled), restart.

    "after minutes": the table was idle long enough for more than 128 heartbeats, so the
    shoe's sequence is more than half the circle past the journal's last frame (the shoe
    beats every 15 ms for the 3 s, as it would every second for three minutes).
    """
    async with dealing_table(tmp_path, mosquitto) as (shoe, daemon, board):
        await deal(shoe, CARDS[:4])
        await board.wait_for(cards_published(4), WITHIN)
        if how.endswith("minutes"):
            shoe.sender.heartbeat_interval = 0.015
        await asyncio.sleep(3.0)  # idle: heartbeats only
        shoe.sender.heartbeat_interval = HEARTBEAT_INTERVAL
        if how == "SIGKILL":
            await asyncio.to_thread(daemon.kill)
        else:
            assert await asyncio.to_thread(daemon.stop) == 0
        spawned = time.monotonic()
        await asyncio.to_thread(daemon.start)
        ready = time.monotonic()
        dealing = asyncio.create_task(deal(shoe, CARDS[4:]))
        await board.wait_for(cards_published(5), FLOW_AGAIN + WITHIN)
        flowing_after = time.monotonic() - ready
        await dealing
        await board.wait_for(cards_published(len(CARDS)), WITHIN)
        async with asyncio.timeout(WITHIN):
            await shoe.drain()  # every frame acknowledged
        assert await asyncio.to_thread(daemon.stop) == 0
    print(f"{how}: ready {ready - spawned:.2f} s after start, card {flowing_after:.2f} s later")
    assert flowing_after < FLOW_AGAIN, f"cards flowed again {flowing_after:.2f} s after ready"
    assert published_cards(board) == [str(card) for card in CARDS]
    assert daemon.journaled_cards() == [str(card) for card in CARDS]
    assert gap_alarms(board) == []


async def test_a_daemon_killed_before_the_shoe_heard_the_ack_of_its_hello_takes_no_card_twice(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Killed before the shoe heard any ACK, the daemon takes its repeated HELLO as such.

    The shoe powers up deaf: the daemon journals its HELLO, the shoe and four cards, and is
    killed; the shoe, hearing again, sends its HELLO again first. A daemon that did not
    know the session of its journal took that HELLO for a power-up and the four cards for
    new ones (PROTOCOL.md 6.4): published and journaled twice.
    """
    profile = str(profile_file(tmp_path))
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=BAUD) as shoe:
        shoe.deaf = True  # nothing the first daemon writes reaches the shoe
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, baud=BAUD, profile=profile)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                await deal(shoe, CARDS[:4])
                await board.wait_for(cards_published(4), WITHIN)
                assert shoe.sender.unacknowledged[:2] == [0, 1]  # the HELLO, the shoe
                await asyncio.to_thread(daemon.kill)
                shoe.deaf = False
                await asyncio.to_thread(daemon.start)
                await deal(shoe, CARDS[4:])
                await board.wait_for(cards_published(len(CARDS)), WITHIN)
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()  # every frame acknowledged
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    assert daemon.journaled_cards() == [str(card) for card in CARDS]
    assert published_cards(board) == [str(card) for card in CARDS]
    assert gap_alarms(board) == []


@pytest.mark.parametrize("journal", ["fresh", "kept"])
async def test_a_controller_started_mid_shoe_takes_the_first_unacknowledged_card(
    tmp_path: Path, mosquitto: Mosquitto, journal: str
) -> None:
    """Issue 10, finding 2: the shoe holds unacknowledged frames when the controller starts.

    A first controller took the shoe and three cards, then stopped; the dealer dealt four
    more. The controller that starts (with a fresh journal, or the first one's) opens its
    port in the middle of the shoe's retransmissions, and the first of the frames in flight
    (the first card's) is lost on the wire for a second: it must wait for it, not start
    after it.
    """
    profile = str(profile_file(tmp_path))
    shoe_path = str(tmp_path / "shoe")
    loop = asyncio.get_running_loop()
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
    async with VirtualShoe(shoe_path, "framed", baud=BAUD) as shoe:
        first = Daemon(tmp_path / "first", mosquitto, device=shoe_path, baud=BAUD,
                       profile=profile)
        second = first
        if journal == "fresh":
            second = Daemon(tmp_path / "second", mosquitto, device=shoe_path, baud=BAUD,
                            profile=profile)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(first.start)
                shoe.send(ShoeInserted())
                await deal(shoe, CARDS[:3])
                await board.wait_for(cards_published(3), WITHIN)
                cut_until = [math.inf]
                shoe.cut = lambda frame: is_card(frame, CARDS[3]) and loop.time() < cut_until[0]
                shoe.sender.heartbeat_interval = None  # the first frame in flight is a card
                assert await asyncio.to_thread(first.stop) == 0
                await deal(shoe, CARDS[3:7])
                assert len(shoe.sender.unacknowledged) == 4
                await asyncio.to_thread(second.start)
                cut_until[0] = loop.time() + 1.0
                shoe.sender.heartbeat_interval = HEARTBEAT_INTERVAL
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()  # every frame acknowledged
                if journal == "kept":
                    await board.wait_for(cards_published(7), WITHIN)
                assert await asyncio.to_thread(second.stop) == 0
        finally:
            first.close()
            second.close()
    assert shoe.counters["frames_cut"] > 0
    if journal == "fresh":
        assert second.journaled_cards() == [str(card) for card in CARDS[3:7]]
    else:
        assert second.journaled_cards() == [str(card) for card in CARDS[:7]]
        assert published_cards(board) == [str(card) for card in CARDS[:7]]
    assert gap_alarms(board) == []


async def test_a_gap_the_host_cannot_fill_is_an_alarm_within_seconds(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The shoe loses two frames the controller never acknowledged: an alarm, then cards."""
    async with dealing_table(tmp_path, mosquitto) as (shoe, daemon, board):
        await deal(shoe, CARDS[:2])
        await board.wait_for(cards_published(2), WITHIN)
        shoe.cut = lambda _frame: True  # the wire is cut ...
        shoe.send(CardDrawn(CARDS[2]))
        shoe.send(CardDrawn(CARDS[3]))
        await asyncio.sleep(0.3)
        assert shoe.sender.forget(2) == 2  # ... and the shoe forgets the two frames
        shoe.cut = None
        lost_at = time.monotonic()
        dealing = asyncio.create_task(deal(shoe, CARDS[4:6]))
        await board.wait_for(lambda b: bool(gap_alarms(b)), WITHIN)
        alarm_after = time.monotonic() - lost_at
        await dealing
        await board.wait_for(cards_published(4), WITHIN)
        assert await asyncio.to_thread(daemon.stop) == 0
    print(f"sequence_gap alarm {alarm_after:.2f} s after the shoe lost its frames")
    assert alarm_after < 5.0, f"the gap was raised {alarm_after:.2f} s after it happened"
    (alarm,) = gap_alarms(board)
    assert "(2) not received" in str(alarm["text"])
    expected = [str(card) for card in CARDS[:2] + CARDS[4:6]]
    assert published_cards(board) == expected
    assert daemon.journaled_cards() == expected


def deaf_alarms(board: Recorder) -> list[dict[str, object]]:
    return [body for body in board.bodies("alarm") if body.get("kind") == "shoe_deaf"]


async def test_a_shoe_that_does_not_hear_the_controller_is_an_alarm_until_it_does(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The line towards the shoe breaks: its frames come, the controller's ACKs do not go.

    The shoe then sends its window again and again and no card gets through: a lasting
    ``shoe_deaf`` alarm within seconds, cleared once the line is back; no card is lost
    or taken twice.
    """
    async with dealing_table(tmp_path, mosquitto) as (shoe, daemon, board):
        await deal(shoe, CARDS[:3])
        await board.wait_for(cards_published(3), WITHIN)
        shoe.deaf = True  # the line towards the shoe is cut
        broke = time.monotonic()
        await deal(shoe, CARDS[3:5])
        await board.wait_for(lambda b: bool(deaf_alarms(b)), WITHIN + 10)
        noticed = time.monotonic() - broke
        shoe.deaf = False
        await board.wait_for(lambda b: any(
            c.get("kind") == "shoe_deaf" for c in b.bodies("alarm_cleared")), WITHIN)
        await deal(shoe, CARDS[5:])
        await board.wait_for(cards_published(len(CARDS)), WITHIN)
    (alarm,) = deaf_alarms(board)
    assert alarm["lasting"] is True
    assert "does not hear" in str(alarm["text"])
    assert noticed < 25, f"noticed {noticed:.1f} s after the line broke"
    assert published_cards(board) == [str(c) for c in CARDS]
    assert daemon.journaled_cards() == [str(c) for c in CARDS]


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
async def test_a_restart_after_the_frame_number_came_round_takes_the_cards_dealt_meanwhile(
    tmp_path: Path, mosquitto: Mosquitto, how: str
) -> None:
    """Minutes of heartbeats, then a restart while the dealer deals on.

    The heartbeats bring the shoe's 8-bit frame number round, so that the cards dealt
    while the daemon is down get the numbers of the last cards it journaled. Resumed after
    the last frame journaled, the daemon took them for those and acknowledged them unseen
    (cards lost without an alarm); it resumes after the last frame it handled
    (``device-position``). The shoe beats every 15 ms, as it would every second for four
    minutes. SIGKILL: the last 10 s at a heartbeat a second, so that the file (written
    every 10 s) is behind by some of them, as it would be.
    """
    async with dealing_table(tmp_path, mosquitto) as (shoe, daemon, board):
        await deal(shoe, CARDS[:3])
        await board.wait_for(cards_published(3), WITHIN)
        async with asyncio.timeout(WITHIN):
            await shoe.drain()
        after_last_card = shoe.sender.oldest_unacknowledged  # the last card's + 1
        shoe.sender.heartbeat_interval = 0.015

        def frames_since() -> int:
            return (shoe.sender.oldest_unacknowledged - after_last_card) & 0xFF

        async with asyncio.timeout(WITHIN):  # SIGTERM: until 251 frames later
            while frames_since() < (240 if how == "SIGKILL" else 251):  # noqa: ASYNC110 - the shoe's counter has no event
                await asyncio.sleep(0.005)
        shoe.sender.heartbeat_interval = HEARTBEAT_INTERVAL
        if how == "SIGKILL":  # a heartbeat a second past a write of the file
            slow = time.monotonic()
            async with asyncio.timeout(WITHIN + 10.0):
                while frames_since() < 251 or time.monotonic() - slow < 10.5:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
            await asyncio.to_thread(daemon.kill)
        else:
            assert await asyncio.to_thread(daemon.stop) == 0
        for card in CARDS[3:]:  # dealt while the daemon is down: five frames from
            shoe.send(CardDrawn(card))  # 251 on, the last journaled card's number
        await asyncio.sleep(PACE)  # among them (and a heartbeat or two before)
        await asyncio.to_thread(daemon.start)
        await board.wait_for(cards_published(len(CARDS)), WITHIN)
        async with asyncio.timeout(WITHIN):
            await shoe.drain()
        assert await asyncio.to_thread(daemon.stop) == 0
    assert published_cards(board) == [str(card) for card in CARDS]
    assert daemon.journaled_cards() == [str(card) for card in CARDS]
