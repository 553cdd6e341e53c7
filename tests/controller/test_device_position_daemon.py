"""A ``device-position`` file that parses but is wrong cannot lose a card.

The real daemon process, a virtual framed shoe on a real pty, a real mosquitto. The file
is a hint on a disk others can write: one that names frames past the journal's newest
(the cards the shoe dealt while the daemon was down) must not make the daemon acknowledge
those cards unseen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from baccarat.cards import Card, parse_card
from baccarat.controller.positions import DEVICE_FILE
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.drivers.framed_device import HEARTBEAT_INTERVAL
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

WITHIN = 20.0
"""Seconds any one step may take before the test fails (the machine is shared)."""
CARDS: list[Card] = [parse_card(code) for code in ("9S", "2H", "KD", "5C", "7D")]


def published(board: Recorder) -> list[str]:
    """The cards published, in ``seq`` order, each once."""
    return [b["card"] for _, b in sorted(board.by_seq().items()) if b.get("type") == "card"]


async def test_a_position_naming_the_cards_dealt_while_down_loses_none(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    profile = tmp_path / "profile.toml"
    profile.write_text('[profile]\nbase = "macau"\nname = "macau-noburn"\nburn = "none"\n')
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, profile=str(profile))
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                for card in CARDS[:2]:
                    shoe.send(CardDrawn(card))
                await board.wait_for(lambda b: len(published(b)) >= 2, WITHIN)
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()
                shoe.sender.heartbeat_interval = None  # only cards from here on
                assert await asyncio.to_thread(daemon.stop) == 0
                _, recorded = (daemon.journal / DEVICE_FILE).read_text().split()

                first = shoe.sender.oldest_unacknowledged
                for card in CARDS[2:]:  # dealt while the daemon is down
                    shoe.send(CardDrawn(card))
                await asyncio.sleep(0.5)
                assert len(shoe.sender.unacknowledged) == 3
                forged = (first + 2) & 0xFF  # "handled" the three cards' frames
                (daemon.journal / DEVICE_FILE).write_text(f"{forged} {recorded}\n")

                await asyncio.to_thread(daemon.start)
                shoe.sender.heartbeat_interval = HEARTBEAT_INTERVAL
                async with asyncio.timeout(WITHIN):
                    await shoe.drain()  # every frame acknowledged
                await board.wait_for(lambda b: len(published(b)) >= len(CARDS), WITHIN)
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    assert published(board) == [str(card) for card in CARDS]
    assert daemon.journaled_cards() == [str(card) for card in CARDS]
