"""A ``line`` shoe and the real daemon: no card silently lost at a restart or in noise.

The real daemon process (``baccarat run``), a virtual line shoe on a real pty, a real
mosquitto. Each test checks what the journal holds (replayed by ``baccarat replay``) and
what reached MQTT.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from baccarat.cards import Card, parse_card, shuffled_shoe
from baccarat.drivers.events import CardDrawn
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, replay_journal
from support.mosquitto import Mosquitto

WITHIN = 30.0
"""Seconds any one step may take before the test fails (the machine is loaded)."""
PACE = 0.4
"""Seconds between two cards at the table's pace."""
FALSE_CARD = re.compile(rb"[AHCD](0[1-9]|1[0-3])\r?\n")
"""A card line inside random noise: the decoder rightly takes it, so the noise has none."""


def codes(bodies: list[dict[str, Any]]) -> list[str]:
    """The cards of the card messages, in ``seq`` order, each ``seq`` once."""
    by_seq = {b["seq"]: b for b in bodies if b.get("type") == "card"}
    return [by_seq[seq]["card"] for seq in sorted(by_seq)]


def cards_published(count: int) -> Callable[[Recorder], bool]:
    def enough(board: Recorder) -> bool:
        return len(codes(board.bodies("card"))) >= count

    return enough


async def open_shoe(daemon: Daemon, board: Recorder, pit: Any) -> None:
    await asyncio.to_thread(daemon.start)
    await pit.publish("baccarat/T1/cmd/shoe", b"{}", qos=1)
    await board.wait_for(lambda r: r.phase() == "ready", WITHIN)


def line_daemon(folder: Path, broker: Mosquitto, shoe_path: str, baud: int) -> Daemon:
    return Daemon(folder, broker, device=shoe_path, protocol="line", baud=baud,
                  rules={"burn": "none"})


async def test_cards_dealt_while_the_daemon_is_down_are_taken_after_it_starts(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """At a real pace: a restart at a quiet moment, then one in the middle of a burst."""
    shoe_path = str(tmp_path / "shoe")
    dealt = shuffled_shoe(8, seed=5)[:40]
    async with VirtualShoe(shoe_path, "line", baud=9600) as shoe:
        daemon = line_daemon(tmp_path, mosquitto, shoe_path, 9600)
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await open_shoe(daemon, board, pit)
                await shoe.play((CardDrawn(c) for c in dealt[:8]), pace=PACE)
                await board.wait_for(cards_published(8), WITHIN)

                await asyncio.to_thread(daemon.stop)  # a quiet moment: nothing in flight
                await shoe.play((CardDrawn(c) for c in dealt[8:14]), pace=PACE)
                await shoe.drain()  # dealt while nobody reads the port
                await asyncio.to_thread(daemon.start)
                await board.wait_for(cards_published(14), WITHIN)

                dealing = asyncio.create_task(
                    shoe.play((CardDrawn(c) for c in dealt[14:]), pace=PACE)
                )
                await board.wait_for(cards_published(18), WITHIN)
                await asyncio.to_thread(daemon.stop)  # mid-burst: the dealer goes on
                await asyncio.sleep(3 * PACE)
                await asyncio.to_thread(daemon.start)
                await dealing
                await shoe.drain()
                await board.wait_for(cards_published(len(dealt)), WITHIN)
        finally:
            daemon.close()
    want = [card.code for card in dealt]
    assert codes(board.bodies()) == want  # on MQTT: every card, once, in order
    assert codes(replay_journal(daemon)) == want  # and in the journal


def noisy_stream(cards: list[Card], noise_bytes: int, seed: int) -> tuple[bytes, int]:
    """``cards`` as lines with ``noise_bytes`` random bytes before them; and the noise's size.

    The noise has line ends, runs longer than a line, and no card line of its own.
    """
    rng = random.Random(seed)
    noise = bytearray(rng.randbytes(noise_bytes))
    cuts = sorted(rng.randrange(noise_bytes + 1) for _ in range(len(cards) - 1))
    pieces = [bytes(noise[a:b]) for a, b in zip([0, *cuts], [*cuts, noise_bytes], strict=True)]
    pieces = [FALSE_CARD.sub(lambda m: m.group()[:-1] + b"\0", piece) for piece in pieces]
    stream = b"".join(
        piece + card.shoe_code.encode() + b"\r\n" for piece, card in zip(pieces, cards, strict=True)
    )
    return stream, sum(len(piece) for piece in pieces)


def rejected_bytes(board: Recorder) -> int:
    """What the bad_data alarms count, added up."""
    return sum(
        int(body["text"].split(" ", 1)[0])
        for body in board.by_seq().values()
        if body.get("type") == "alarm" and body["kind"] == "bad_data"
    )


async def test_a_million_random_bytes_among_a_whole_shoe_cost_no_card(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Every card line is taken, and the bad_data alarms count exactly the noise's bytes."""
    shoe_path = str(tmp_path / "shoe")
    dealt = shuffled_shoe(8, seed=11)
    stream, noise = noisy_stream(dealt, 1_000_000, seed=12)
    baud = 1_000_000
    async with VirtualShoe(shoe_path, "line", baud=baud) as shoe:
        daemon = line_daemon(tmp_path, mosquitto, shoe_path, baud)
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await open_shoe(daemon, board, pit)
                for start in range(0, len(stream), 4096):
                    await shoe.write_raw(stream[start : start + 4096])
                await board.wait_for(cards_published(len(dealt)), 4 * WITHIN)
                await board.wait_for(lambda r: rejected_bytes(r) >= noise, WITHIN)
        finally:
            daemon.close()
    want = [card.code for card in dealt]
    assert codes(board.bodies()) == want
    assert codes(replay_journal(daemon)) == want
    assert noise > 990_000  # a few newlines were changed, none removed
    assert rejected_bytes(board) == noise


async def test_a_restart_during_a_round_asks_the_pit_to_check_it(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """A round in progress at a restart raises restart_in_round; a closed one does not."""
    shoe_path = str(tmp_path / "shoe")
    first = [parse_card(code) for code in ("9S", "KD", "KH", "QD")]  # P 9 natural, B 0
    async with VirtualShoe(shoe_path, "line", baud=9600) as shoe:
        daemon = line_daemon(tmp_path, mosquitto, shoe_path, 9600)
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await open_shoe(daemon, board, pit)
                await shoe.play((CardDrawn(c) for c in first[:2]), pace=PACE)
                await board.wait_for(cards_published(2), WITHIN)
                await asyncio.to_thread(daemon.stop)
                await asyncio.to_thread(daemon.start)
                await board.wait_for(lambda r: bool(restart_alarms(r)), WITHIN)
                (alarm,) = restart_alarms(board)
                await shoe.play((CardDrawn(c) for c in first[2:]), pace=PACE)
                await board.wait_for(lambda r: len(r.bodies("result")) >= 1, WITHIN)
                await asyncio.to_thread(daemon.stop)  # between rounds: nothing to check
                await asyncio.to_thread(daemon.start)
                await shoe.play([CardDrawn(parse_card("2C"))])
                await board.wait_for(cards_published(5), WITHIN)
        finally:
            daemon.close()
    assert (alarm["round"], alarm["shoe"], alarm["correctable"]) == (1, 1, False)
    assert "restarted during round 1" in alarm["text"]
    assert "P1 9S, B1 KD; next: P2" in alarm["text"]
    assert len(restart_alarms(board)) == 1


def restart_alarms(board: Recorder) -> list[dict[str, Any]]:
    return [
        body for body in board.by_seq().values()
        if body.get("type") == "alarm" and body["kind"] == "restart_in_round"
    ]


async def test_a_stop_in_the_middle_of_a_burst_loses_no_card_already_read(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """SIGTERM while cards read from the port still wait to be journaled: they are taken.

    A line shoe cannot send a card again, so whatever the daemon has read must be
    recorded before it stops; what is still in the port is read at the next start.
    """
    shoe_path = str(tmp_path / "shoe")
    dealt = shuffled_shoe(8, seed=11)[:150]
    async with VirtualShoe(shoe_path, "line", baud=115200) as shoe:
        daemon = line_daemon(tmp_path, mosquitto, shoe_path, 115200)
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await open_shoe(daemon, board, pit)
                for card in dealt:  # a burst: faster than a card is journaled
                    shoe.send(CardDrawn(card))
                await board.wait_for(cards_published(5), WITHIN)
                await asyncio.to_thread(daemon.stop)
                await asyncio.to_thread(daemon.start)
                await board.wait_for(cards_published(len(dealt)), WITHIN)
        finally:
            daemon.close()
    taken = [m["card"] for m in replay_journal(daemon) if m["type"] == "card"]
    assert taken == [str(c) for c in dealt]
    assert codes(board.bodies("card")) == [str(c) for c in dealt]
