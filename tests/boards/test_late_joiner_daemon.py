"""Late joiners against the real daemon: a framed virtual shoe on a pty, a real mosquitto.

* A subscriber that connects mid-round, while a misdeal and the shoe's ``link_down`` are
  open, reads the round's cards so far and every open alarm from the retained topics
  alone (issue 10, finding 9).
* A shoe that keeps dealing into a blocked table (140 extra cards): one alarm, raised
  once, with a count on the retained alarms, and a short refusal (issue 10, finding 10).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

from baccarat.cards import parse_card
from baccarat.drivers.events import CardDrawn
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

WITHIN = 20.0  # seconds for what the daemon publishes to arrive, on a loaded machine


def deal(shoe: VirtualShoe, *codes: str) -> None:
    for code in codes:
        shoe.send(CardDrawn(parse_card(code)))


def newest(recorder: Recorder, kind: str) -> dict[str, Any] | None:
    bodies = recorder.bodies(kind)
    return bodies[-1] if bodies else None


def open_kinds(recorder: Recorder) -> list[str]:
    body = newest(recorder, "alarms")
    return [a["kind"] for a in body["alarms"]] if body else []


def counts_of(body: dict[str, Any]) -> list[int]:
    return [a["count"] for a in body["alarms"]]


def counts(recorder: Recorder) -> list[int]:
    """The cards each open alarm holds, by the newest alarms body."""
    body = newest(recorder, "alarms")
    return counts_of(body) if body else []


async def command(pit: Any, name: str, body: dict[str, Any]) -> None:
    await pit.publish(f"baccarat/T1/cmd/{name}", json.dumps(body).encode(), qos=1)


async def test_a_subscriber_connecting_mid_round_reads_the_hand_and_open_alarms(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    link = str(tmp_path / "shoe")
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=link, rules={"burn": "none", "decks": 1})
        unplugged: asyncio.Task[None] | None = None
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await asyncio.to_thread(daemon.start)
                await command(pit, "shoe", {"id": 1})
                await board.wait_for(lambda r: r.phase() == "ready", WITHIN)
                # round 1, then round 2: P1 AS, a second AS of a 1-deck shoe (foreign,
                # held aside), B1 9H
                deal(shoe, "7S", "6H", "KS", "KH", "AS", "AS", "9H")
                await board.wait_for(lambda r: open_kinds(r) == ["foreign_card"], WITHIN)
                await board.wait_for(lambda r: len(r.bodies("card")) == 6, WITHIN)
                unplugged = asyncio.create_task(shoe.unplug(60))
                await board.wait_for(
                    lambda r: open_kinds(r) == ["foreign_card", "link_down"], WITHIN
                )
                seen = max(board.by_seq())
                async with Recorder(mosquitto) as late:
                    await late.wait_for(
                        lambda r: bool(r.bodies("round")) and bool(r.bodies("alarms")), WITHIN
                    )
                    await asyncio.sleep(0.5)  # anything else the broker would send
        finally:
            if unplugged is not None:
                unplugged.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await unplugged
            daemon.close()
    assert all(b["seq"] <= seen for b in late.bodies() if "seq" in b)  # retained only
    assert late.bodies("card") == []
    assert late.bodies("alarm") == []
    rnd = newest(late, "round")
    assert rnd is not None
    assert (rnd["round"], rnd["status"], rnd["next"]) == (2, "open", "P2")
    assert rnd["cards"] == [{"position": "P1", "card": "AS"}, {"position": "B1", "card": "9H"}]
    assert (rnd["player_total"], rnd["banker_total"]) == (1, 9)
    listed = newest(late, "alarms")
    assert listed is not None
    raised = {a["id"]: a for a in board.bodies("alarm")}
    assert [a["id"] for a in listed["alarms"]] == sorted(raised)
    assert listed["alarms"] == [raised[i] for i in sorted(raised)]  # the alarm messages
    assert [(a["kind"], a["card"], a["round"]) for a in listed["alarms"]] == [
        ("foreign_card", "AS", 2),
        ("link_down", None, None),
    ]


async def test_a_shoe_dealing_140_cards_into_a_blocked_table_raises_one_alarm(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    link = str(tmp_path / "shoe")
    extra = [f"{rank}{suit}" for rank in "A23456789TJQK" for suit in "SHDC"] * 3
    extra = extra[:140]  # 8 decks: none of them foreign
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        daemon = Daemon(
            tmp_path, mosquitto, device=link, rules={"burn": "none", "open_mode": "explicit"}
        )
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await asyncio.to_thread(daemon.start)
                await command(pit, "shoe", {"id": 1})
                await board.wait_for(lambda r: r.phase() == "ready", WITHIN)
                await command(pit, "open", {"id": 2})
                await board.wait_for(lambda r: bool(r.bodies("round")), WITHIN)
                deal(shoe, "7S", "6H", "KS", "KH", *extra)  # round 1 complete, then 140
                await board.wait_for(lambda r: counts(r) == [140], WITHIN * 3)
                await command(pit, "open", {"id": 3})
                await command(pit, "accept_as_burn", {"id": 4})
                await board.wait_for(lambda r: len(r.bodies("reply")) == 4, WITHIN)
                await board.wait_for(lambda r: counts(r) == [139], WITHIN)
        finally:
            daemon.close()
    alarms = board.bodies("alarm")
    assert [(a["id"], a["kind"], a["card"]) for a in alarms] == [(1, "extra_card", extra[0])]
    whole = next(b["alarms"][0] for b in board.bodies("alarms") if counts_of(b) == [140])
    assert whole["cards"] == extra
    assert len(whole["text"]) < 300
    refusal = board.bodies("reply")[2]
    assert (refusal["ok"], refusal["id"]) == (False, 3)
    assert "#1 extra_card (140 cards)" in refusal["error"]
    assert len(refusal["error"]) < 200


async def test_after_a_restart_the_open_alarms_are_retained_again(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The broker lost its retained messages (no persistence) while the daemon was down."""
    daemon = Daemon(tmp_path, mosquitto, rules={"burn": "none", "open_mode": "explicit"})
    try:
        async with Recorder(mosquitto) as board, mosquitto.client() as pit:
            await asyncio.to_thread(daemon.start)
            await command(pit, "shoe", {"id": 1})
            await command(pit, "open", {"id": 2})
            await command(pit, "declare", {"id": 3, "winner": "banker"})  # no card yet
            await board.wait_for(lambda r: open_kinds(r) == ["missing_card"], WITHIN)
        assert await asyncio.to_thread(daemon.stop) == 0
        await mosquitto.stop_async()
        await mosquitto.start_async()
        await asyncio.to_thread(daemon.start)
        async with Recorder(mosquitto) as late:
            await late.wait_for(lambda r: open_kinds(r) == ["missing_card"], WITHIN)
    finally:
        daemon.close()
    assert newest(late, "alarms") == newest(board, "alarms")  # the same body, its seq too
