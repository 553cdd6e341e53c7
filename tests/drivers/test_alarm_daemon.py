"""The real daemon tells a framed virtual shoe its open alarm; the dealer waits for the pit.

``baccarat run`` on a pty with a real mosquitto: a foreign card opens an alarm that waits
for a person, the shoe's dealer stops before his next card, and goes on once the pit has
settled it (``accept_as_burn``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from baccarat.cards import parse_card
from baccarat.drivers.events import CardDrawn, DeviceEvent
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

PACE = 0.3
"""Seconds after each card: time for the alarm to come back before the next one."""


async def test_the_dealer_waits_for_the_pit_to_settle_a_foreign_card(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    shoe_path = str(tmp_path / "shoe")
    cards: list[DeviceEvent] = [
        CardDrawn(parse_card(code))  # one deck: the second AS is foreign (round 2)
        for code in ("7S", "6H", "KS", "KH", "AS", "AS", "9H", "KD", "QD")
    ]
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules={"burn": "none", "decks": 1})
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await asyncio.to_thread(daemon.start)
                await pit.publish("baccarat/T1/cmd/shoe", b'{"id": 1}', qos=1)
                await board.wait_for(lambda r: r.phase() == "ready", 10)
                dealing = asyncio.create_task(shoe.play(cards, pace=PACE))
                await board.wait_for(lambda r: len(r.bodies("alarm")) >= 1, 10)
                alarm = board.bodies("alarm")[0]
                assert (alarm["kind"], alarm["correctable"]) == ("foreign_card", True)
                async with asyncio.timeout(5):
                    while not shoe.dealer_paused:  # noqa: ASYNC110 - the shoe has no event
                        await asyncio.sleep(0.02)
                assert shoe.open_alarms() == {alarm["id"]: "foreign_card"}
                assert shoe.cards_sent == 6  # the foreign card was the last
                await asyncio.sleep(2.0)
                assert shoe.cards_sent == 6
                await pit.publish("baccarat/T1/cmd/accept_as_burn", b'{"id": "x"}', qos=1)
                assert await asyncio.wait_for(dealing, 10) == len(cards)
                await board.wait_for(lambda r: len(r.bodies("result")) >= 2, 10)
        finally:
            daemon.close()
    assert shoe.counters["dealer_pauses"] == 1
    second = board.bodies("result")[1]
    assert second["player"]["cards"] == ["AS", "KD"]
    assert second["banker"]["cards"] == ["9H", "QD"]
