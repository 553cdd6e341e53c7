"""Operator commands against the real ``baccarat run`` process and a real mosquitto.

Hostile bodies each get an error and the MQTT session stays up; a retained command is not
carried out again at a restart; a refused new shoe is an alarm; a void of a published
round needs its confirmation.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiomqtt

from baccarat.cards import parse_card
from baccarat.drivers.events import CardDrawn, DealerButton, ShoeInserted
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

NO_TEST_DECKS = {"BACCARAT_ALLOW_TEST_DECKS": "false"}
RSS_MARGIN_MB = 30.0
"""Growth of the daemon's RSS a 10 MB body may cause (the old code: 42 -> 94 MB)."""
HOSTILE: list[tuple[str, bytes, str]] = [
    ("open", b'{"id": "\\ud800"}', "bad id"),
    ("open", b'{"id": ' + b"1" * 5000 + b"}", "at most 4096"),
    ("open", b"[" * 100_000, "at most 4096"),
    ("open", b"[" * 4000, "nested too deeply"),
    ("burn", b'{"count": true}', "count: Input should be a valid integer"),
    ("shoe", b'{"decks": 1}', "6 to 12 decks, not 1"),
    ("void", b'{"reason": "dealer # dropped"}', "'#' (character 8)"),
    ("open", b"", "empty body"),
]


def replies(board: Recorder) -> list[dict[str, Any]]:
    return board.bodies("reply")


def rss_mb(pid: int) -> float:
    """The process's resident set, in MB (VmRSS of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def command(pit: aiomqtt.Client, name: str, body: Any, **options: Any) -> None:
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    await pit.publish(f"baccarat/T1/cmd/{name}", payload, qos=1, **options)


async def test_hostile_bodies_get_errors_and_the_session_stays_up(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    daemon = Daemon(tmp_path, mosquitto, rules={"burn": "none"}, env=NO_TEST_DECKS)
    try:
        async with Recorder(mosquitto) as board, mosquitto.client() as pit:
            await asyncio.to_thread(daemon.start)
            await command(pit, "shoe", {"id": "start"})
            await board.wait_for(lambda r: len(replies(r)) == 1, 10)
            for number, (name, body, _) in enumerate(HOSTILE):
                await command(pit, name, body)  # each followed at once by a good one
                await command(pit, "demo", {"on": False, "id": number})
            await board.wait_for(lambda r: len(replies(r)) == 1 + 2 * len(HOSTILE), 20)

            before = rss_mb(daemon.pid)
            await command(pit, "open", {"id": "x" * 10_000_000})
            await command(pit, "demo", {"on": False, "id": "after-10-MB"})
            await board.wait_for(lambda r: len(replies(r)) == 3 + 2 * len(HOSTILE), 30)
            after = rss_mb(daemon.pid)
        log = daemon.log()
    finally:
        daemon.close()
    answers = replies(board)[1:]
    for (name, _, says), error, good in zip(HOSTILE, answers[0::2], answers[1::2], strict=False):
        assert (error["command"], error["ok"], error["id"]) == (name, False, None)
        assert says in error["error"], (name, error)
        assert good["ok"] is True, good
    assert [a["id"] for a in answers[1::2]] == [*range(len(HOSTILE)), "after-10-MB"]
    big = answers[-2]
    assert big["ok"] is False
    assert len(json.dumps(big)) < 200  # nothing of the 10 MB id is echoed
    assert after - before < RSS_MARGIN_MB, (before, after)
    assert log.count("connected to broker") == 1  # the session never dropped
    assert "Traceback" not in log


async def test_a_retained_command_is_not_carried_out_again_at_restart(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    daemon = Daemon(tmp_path, mosquitto, rules={"burn": "none"})
    try:
        async with Recorder(mosquitto) as board, mosquitto.client() as pit:
            await asyncio.to_thread(daemon.start)
            await command(pit, "shoe", {"id": 1})
            await command(pit, "burn", {"count": 1, "id": 2}, retain=True)  # the mistake
            await board.wait_for(lambda r: len(replies(r)) == 2, 10)
            assert await asyncio.to_thread(daemon.stop) == 0
            for _ in range(2):  # two restarts: the broker hands the burn out at each
                count = len(replies(board))
                await asyncio.to_thread(daemon.start)
                await board.wait_for(lambda r, n=count: len(replies(r)) == n + 1, 10)
                assert "retained command on baccarat/T1/cmd/burn ignored" in daemon.log()
                assert await asyncio.to_thread(daemon.stop) == 0
            count = len(replies(board))
            await asyncio.to_thread(daemon.start)
            await board.wait_for(lambda r: len(replies(r)) == count + 1, 10)  # retained
            await command(pit, "burn", b"", retain=True)  # the pit clears it: not a burn
            await board.wait_for(lambda r: len(replies(r)) == count + 2, 10)
            await asyncio.sleep(0.5)
    finally:
        daemon.close()
    first, live, *at_restarts, cleared = replies(board)
    assert (first["ok"], live["ok"]) == (True, True)
    assert [(r["command"], r["ok"]) for r in at_restarts] == [("burn", False)] * 3
    assert "retained command, not executed" in at_restarts[0]["error"]
    assert (cleared["ok"], "empty body" in cleared["error"]) == (False, True)
    assert [s["burn_due"] for s in board.bodies("shoe")] == [0, 1]  # one burn, not four


async def test_a_refused_new_shoe_raises_an_alarm_with_its_reason(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(
            tmp_path, mosquitto, device=shoe_path, rules={"burn": "none", "open_mode": "explicit"}
        )
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await asyncio.to_thread(daemon.start)
                await command(pit, "shoe", {})
                await command(pit, "open", {})
                await command(pit, "reveal", {})  # no card yet: missing_card, round 1 waits
                await board.wait_for(lambda r: len(r.bodies("alarm")) == 1, 10)
                shoe.send(ShoeInserted())  # the device's new shoe
                await board.wait_for(lambda r: len(r.bodies("alarm")) == 2, 10)
                await command(pit, "shoe", {"id": "again"})  # and the pit's
                await board.wait_for(lambda r: len(r.bodies("alarm")) == 3, 10)
                await board.wait_for(lambda r: len(replies(r)) == 4, 10)
            log = daemon.log()
        finally:
            daemon.close()
    missing, by_device, by_pit = board.bodies("alarm")
    assert missing["kind"] == "missing_card"
    reason = f"round 1 is in progress with open alarm #{missing['id']} missing_card"
    for alarm in (by_device, by_pit):
        assert (alarm["kind"], alarm["correctable"], alarm["article"]) == (
            "shoe_refused", False, "2.1"
        )
        assert alarm["text"].startswith(f"a new shoe was refused: {reason}")
    assert f"device: shoe refused: {reason}" in log
    assert replies(board)[-1]["id"] == "again"
    assert reason in replies(board)[-1]["error"]


async def test_void_of_a_published_round_needs_confirm(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules={"burn": "none"})
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await asyncio.to_thread(daemon.start)
                await command(pit, "shoe", {})
                await board.wait_for(lambda r: r.phase() == "ready", 10)
                for code in ("7S", "6H", "KS", "KH"):  # player 7, banker 6: player wins
                    shoe.send(CardDrawn(parse_card(code)))
                await board.wait_for(lambda r: len(r.bodies("result")) == 1, 10)
                shoe.send(DealerButton("void"))  # the dealer's button cannot confirm
                await command(pit, "void", {"id": 1})
                await board.wait_for(lambda r: len(replies(r)) == 2, 10)
                button = "device: void_unconfirmed dealer button refused: round 1's result"
                await asyncio.to_thread(daemon.wait_log, button, 10)
                assert board.bodies("void") == []
                await command(pit, "void", {"id": 2, "confirm": True, "reason": "pit"})
                await board.wait_for(lambda r: len(replies(r)) == 3, 10)
        finally:
            daemon.close()
    unconfirmed, confirmed = replies(board)[1:]
    assert (unconfirmed["id"], unconfirmed["ok"]) == (1, False)
    assert "round 1's result (player) is already published" in unconfirmed["error"]
    assert '"confirm": true' in unconfirmed["error"]
    assert (confirmed["id"], confirmed["ok"]) == (2, True)
    assert [v["reason"] for v in board.bodies("void")] == ["pit"]
    assert [r["stats"]["rounds"] for r in board.bodies("roads")] == [0, 1, 0]  # off the roads
