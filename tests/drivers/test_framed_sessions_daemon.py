"""Sessions remembered, end to end (issue 30, hole 2; PROTOCOL.md 6.4).

The real daemon process, a virtual framed shoe on a real pty at 9600 baud with the
protocol's own timers, a real mosquitto. A replay: the shoe's earlier session, as the wire
carried it, written again verbatim after the shoe powered up in a new session, while the
dealer deals on. A reuse: the shoe powers up in the session it was in. Each test checks
the cards the journal holds (a card taken twice shows up twice, a lost one is missing)
and the alarms published.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from baccarat.cards import ALL_CARDS, Card
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

BAUD = 9600
PACE = 0.3
"""Seconds between two cards."""
WITHIN = 20.0
"""Seconds any step may take before the test fails (the machine is shared)."""
EARLIER: list[Card] = list(ALL_CARDS[:12])
"""The cards of the earlier session, which the replay sends again."""
LATER: list[Card] = list(ALL_CARDS[20:28])
"""The cards of the session after the power-up: 2 before the replay, 6 during it."""


def profile_file(folder: Path) -> Path:
    """Macau rules without the shoe's burn, so that every card is dealt to a hand."""
    path = folder / "profile.toml"
    path.write_text('[profile]\nbase = "macau"\nname = "macau-noburn"\nburn = "none"\n')
    return path


def alarms(board: Recorder, kind: str) -> list[dict[str, object]]:
    return [body for body in board.bodies("alarm") if body.get("kind") == kind]


async def deal(shoe: VirtualShoe, cards: list[Card]) -> None:
    for card in cards:
        shoe.send(CardDrawn(card))
        await asyncio.sleep(PACE)


async def journaled(daemon: Daemon, count: int) -> list[str]:
    """The journal's cards once it holds ``count`` (or what it holds after :data:`WITHIN`)."""
    cards: list[str] = []
    async with asyncio.timeout(WITHIN):
        while len(cards) < count:  # the journal is a file: no event to wait for
            await asyncio.sleep(0.2)
            cards = await asyncio.to_thread(daemon.journaled_cards)
    return cards


async def test_a_replayed_session_is_refused_and_the_shoes_cards_after_it_are_journaled(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The replay's 12 cards were journaled again and the shoe's next 6 dropped (lost).

    Now its HELLO names a session the daemon has seen and the shoe, asked, answers in
    its own: nothing of the replay is journaled, every card of the shoe is, once, and a
    ``device_replay`` alarm names the session replayed.
    """
    profile = str(profile_file(tmp_path))
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=BAUD, session=0x0A0A) as shoe:
        shoe.recording = []
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, baud=BAUD, profile=profile)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                await deal(shoe, EARLIER)
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()
                earlier_session = list(shoe.recording)
                shoe.power_up(0x0B0B)
                await deal(shoe, LATER[:2])
                await journaled(daemon, len(EARLIER) + 2)
                dealing = asyncio.create_task(deal(shoe, LATER[2:]))
                await shoe.replay(earlier_session)
                await dealing
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()  # every frame of the shoe acknowledged
                cards = await journaled(daemon, len(EARLIER) + len(LATER))
                await board.wait_for(lambda b: bool(alarms(b, "device_replay")), WITHIN)
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    print(f"replayed {len(earlier_session)} frames of session 0x0a0a")
    assert cards == [str(card) for card in EARLIER + LATER]  # none twice, none lost
    assert await asyncio.to_thread(daemon.journaled_cards) == cards
    (alarm,) = alarms(board, "device_replay")
    assert "session 0x0a0a" in str(alarm["text"])
    assert "0x0b0b" in str(alarm["text"])
    assert alarms(board, "shoe_deaf") == []
    assert alarms(board, "session_reused") == []


async def test_a_shoe_that_powers_up_in_its_own_session_again_is_named_and_its_cards_taken(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """A power-up that reuses its session id: named, and its cards taken.

    It stalled the link behind 'duplicates' and was raised as ``shoe_deaf``; now its cards
    are taken and ``session_reused`` names it.
    """
    profile = str(profile_file(tmp_path))
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=BAUD, session=0x1234) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, baud=BAUD, profile=profile)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                await deal(shoe, EARLIER[:5])
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()
                shoe.power_up(0x1234)  # against the protocol: the same session
                await deal(shoe, EARLIER[5:9])
                cards = await journaled(daemon, 9)
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()
                await board.wait_for(lambda b: bool(alarms(b, "session_reused")), WITHIN)
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    assert cards == [str(card) for card in EARLIER[:9]]
    (alarm,) = alarms(board, "session_reused")
    assert "session 0x1234" in str(alarm["text"])
    assert "reused its session id" in str(alarm["text"])
    assert alarms(board, "shoe_deaf") == []
    assert alarms(board, "device_replay") == []


async def test_a_replay_after_the_daemon_restarted_is_told_from_its_journal(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The sessions come back from the journal: a restarted daemon refuses the replay too."""
    profile = str(profile_file(tmp_path))
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=BAUD, session=0x0A0A) as shoe:
        shoe.recording = []
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, baud=BAUD, profile=profile)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                await deal(shoe, EARLIER[:6])
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()
                earlier_session = list(shoe.recording)
                shoe.power_up(0x0B0B)
                await deal(shoe, LATER[:2])
                await journaled(daemon, 8)
                assert await asyncio.to_thread(daemon.stop) == 0
                await asyncio.to_thread(daemon.start)
                dealing = asyncio.create_task(deal(shoe, LATER[2:5]))
                await shoe.replay(earlier_session)
                await dealing
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()
                cards = await journaled(daemon, 11)
                await board.wait_for(lambda b: bool(alarms(b, "device_replay")), WITHIN)
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    assert cards == [str(card) for card in EARLIER[:6] + LATER[:5]]
    (alarm,) = alarms(board, "device_replay")
    assert "session 0x0a0a" in str(alarm["text"])
