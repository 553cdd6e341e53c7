"""Hardware-in-loop: the real daemon raises shuffle_suspect for a shoe that repeats the last.

A framed virtual shoe on a pty, a real mosquitto and ``baccarat run`` as a process: the
dealer deals a shoe, then a second one whose cards 40-59 are cards 120-139 of the first.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from baccarat.cards import shuffled_shoe
from baccarat.drivers.events import CardDrawn, DeviceEvent
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

EXPLICIT = {"open_mode": "explicit"}


def first_cards(events: Iterator[DeviceEvent], cards: int) -> Iterator[DeviceEvent]:
    """The events of a shoe up to its ``cards``-th card drawn."""
    drawn = 0
    for event in events:
        yield event
        drawn += isinstance(event, CardDrawn)
        if drawn == cards:
            return


def notices(board: Recorder) -> list[dict[str, Any]]:
    return [b for b in board.bodies("alarm") if b.get("kind") == "shuffle_suspect"]


async def test_the_daemon_names_the_earlier_shoe_by_card_59(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    first, second = shuffled_shoe(8, 11), shuffled_shoe(8, 12)
    second[39:59] = first[119:139]
    path = str(tmp_path / "shoe")
    async with VirtualShoe(path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=path, rules=EXPLICIT)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                await shoe.play(Dealer(cards=first, seed=1).events())
                await shoe.play(first_cards(Dealer(cards=second, seed=2).events(), 70))
                await board.wait_for(lambda r: bool(notices(r)), 60)
                await board.wait_for(
                    lambda r: sum(b["shoe"] == 2 for b in r.bodies("card")) >= 70, 60
                )
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    [notice] = notices(board)
    assert notice["shoe"] == 2
    assert notice["corrections"] == []
    assert "of table T1's shoe 1 in the same order" in notice["text"]
    cards_before = [b for b in board.bodies("card") if b["shoe"] == 2 and b["seq"] < notice["seq"]]
    assert len(cards_before) <= 59  # by card 59 at the latest (the acceptance)
    # ten cards alike make it certain: cards 40-49, or a run that one card alike by chance
    # (with a gap) starts a card early; in either the shoes' positions are 80 apart
    assert 48 <= len(cards_before) <= 49
    run = re.search(r"cards (\d+)-\d+ of this shoe repeat cards (\d+)-", notice["text"])
    assert run is not None, notice["text"]
    now, earlier = run.groups()
    assert int(earlier) - int(now) == 80
    assert [b["card"] for b in cards_before[39:48]] == [c.code for c in first[119:128]]
    # the notice never held the table: the dealer went on (70 cards), no alarm opened
    assert [b["kind"] for b in board.bodies("alarm")] == ["shuffle_suspect"]
    assert board.bodies("alarms") == []
