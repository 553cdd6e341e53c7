"""Hardware-in-loop: the real ``baccarat run`` process and what a board would see.

A virtual shoe on a pty, a real mosquitto, and a subscriber that checks what arrives.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baccarat.messages.bodies import SURVEILLANCE_KINDS
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, replay_journal
from support.mosquitto import Mosquitto, MosquittoFactory

EXPLICIT = {"open_mode": "explicit"}
SHOE_TIMEOUT = 90.0


def profile_toml(folder: Path, **rules: Any) -> Path:
    """The daemon's rules as a profile file for ``baccarat replay --profile``."""
    path = folder / "rules.toml"
    lines = ['[profile]', 'base = "macau"', 'name = "macau"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in rules.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _status(recorder: Recorder) -> str | None:
    states = [b["state"] for t, b in recorder.received if t.endswith("/status")]
    return states[-1] if states else None


def shoe_closed(recorder: Recorder) -> bool:
    """The shoe ended and the last round's messages (shoe, roads, recall) all arrived."""
    bodies = recorder.bodies()
    closed = [i for i, b in enumerate(bodies) if b.get("type") == "shoe"
              and b["phase"] == "closed"]
    return bool(closed) and any(b.get("type") == "recall" for b in bodies[closed[-1]:])


def engine_messages(recorder: Recorder) -> list[dict[str, Any]]:
    by_seq = recorder.by_seq()
    return [by_seq[s] for s in sorted(by_seq)]


@pytest.fixture
def shoe_path(tmp_path: Path) -> str:
    return str(tmp_path / "serial-by-id-shoe")


async def test_full_shoe_matches_replay(
    tmp_path: Path, mosquitto: Mosquitto, shoe_path: str
) -> None:
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules=EXPLICIT)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                await shoe.play(Dealer(decks=8, seed=42).events())
                await board.wait_for(shoe_closed, SHOE_TIMEOUT)
                assert await asyncio.to_thread(daemon.stop) == 0
                await board.wait_for(lambda r: _status(r) == "offline", 10)
        finally:
            daemon.close()
    published = engine_messages(board)
    assert [m["seq"] for m in published] == list(range(1, len(published) + 1))
    replayed = replay_journal(daemon, profile_toml(tmp_path, **EXPLICIT))
    assert published == replayed
    results = [m for m in published if m["type"] == "result"]
    assert len(results) > 60
    # no misdeal; the live edge's advantage notices may come late in the shoe, and which
    # counts it computes depends on the machine's pace (it keeps the newest only)
    assert [m for m in published if m["type"] == "alarm"
            and m["kind"] not in SURVEILLANCE_KINDS] == []
    cards = [m for m in published if m["type"] == "card"]
    last_shoe = [m for m in published if m["type"] == "shoe"][-1]
    assert last_shoe["cards_dealt"] + last_shoe["cards_burned"] == len(cards)
    statuses = [b["state"] for t, b in board.received if t.endswith("/status")]
    assert statuses[:1] == ["online"]
    assert statuses[-1] == "offline"  # said on a clean stop


async def test_line_shoe_with_pit_commands(
    tmp_path: Path, mosquitto: Mosquitto, shoe_path: str
) -> None:
    """A cheap line shoe (no buttons): the pit starts the shoe and settles a misdeal."""
    async with VirtualShoe(shoe_path, "line", baud=9600) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, protocol="line", baud=9600,
                        rules={"burn": "none", "decks": 1})
        try:
            async with Recorder(mosquitto) as board, mosquitto.client() as pit:
                await asyncio.to_thread(daemon.start)
                await pit.publish("baccarat/T1/cmd/shoe", b'{"id": 1}', qos=1)
                await board.wait_for(lambda r: r.phase() == "ready", 10)
                from baccarat.cards import parse_card
                from baccarat.drivers.events import CardDrawn

                for code in ("7S", "6H", "KS", "KH", "AS", "AS"):  # one deck: AS twice
                    shoe.send(CardDrawn(parse_card(code)))
                await board.wait_for(lambda r: len(r.bodies("alarm")) >= 1, 10)
                alarm = board.bodies("alarm")[0]
                assert (alarm["kind"], alarm["card"], alarm["round"]) == ("foreign_card", "AS", 2)
                await pit.publish("baccarat/T1/cmd/accept_as_burn", b'{"id": "x"}', qos=1)
                await board.wait_for(lambda r: len(r.bodies("alarm_cleared")) >= 1, 10)
                for code in ("9H", "KD", "QD"):  # B1, P2, B2: Player 1+0, Banker 9+0
                    shoe.send(CardDrawn(parse_card(code)))
                await board.wait_for(lambda r: len(r.bodies("result")) >= 2, 10)
        finally:
            daemon.close()
    replies = board.bodies("reply")
    assert replies == [
        {"schema": 1, "type": "reply", "command": "shoe", "id": 1, "ok": True, "error": None},
        {"schema": 1, "type": "reply", "command": "accept_as_burn", "id": "x", "ok": True,
         "error": None},
    ]
    first, second = board.bodies("result")
    assert (first["winner"], second["winner"]) == ("player", "banker")
    assert second["player"]["cards"] == ["AS", "KD"]
    assert second["banker"]["cards"] == ["9H", "QD"]


async def test_bad_config_exits_2_naming_the_field(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text('table = "T 1"\n[broker]\nport = 99999\n')
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "baccarat.cli", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=30,
        env={k: v for k, v in os.environ.items() if not k.startswith("BACCARAT_")},
    )
    assert proc.returncode == 2
    assert "table:" in proc.stderr
    assert "broker.port:" in proc.stderr


async def test_missing_config_file_exits_2(tmp_path: Path) -> None:
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "baccarat.cli", "run", "--config", str(tmp_path / "no.toml")],
        capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode == 2
    assert "no such configuration file" in proc.stderr


async def _play_in_background(shoe: VirtualShoe, dealer: Dealer, pace: float) -> asyncio.Task[int]:
    return asyncio.create_task(shoe.play(dealer.events(), pace=pace))


async def test_broker_stopped_for_5_s_mid_shoe(
    tmp_path: Path, mosquitto_factory: MosquittoFactory, shoe_path: str
) -> None:
    broker = mosquitto_factory(persistence=True)
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, broker, device=shoe_path, rules=EXPLICIT)
        try:
            async with Recorder(broker, persistent=True) as board:
                await asyncio.to_thread(daemon.start)
                play = await _play_in_background(shoe, Dealer(decks=8, seed=5), pace=0.012)
                await board.wait_for(lambda r: len(r.bodies("result")) >= 5, 30)
                await broker.stop_async()
                await asyncio.sleep(5)
                await broker.start_async()
                await play
                await board.wait_for(shoe_closed, SHOE_TIMEOUT)
        finally:
            daemon.close()
    published = engine_messages(board)
    assert [m["seq"] for m in published] == list(range(1, len(published) + 1))
    replayed = replay_journal(daemon, profile_toml(tmp_path, **EXPLICIT))
    assert published == replayed
    arrived = [b["round"] for b in board.bodies("result")]
    assert sorted(set(arrived)) == [m["round"] for m in replayed if m["type"] == "result"]
    assert "broker" in daemon.log()


async def test_sigkill_mid_round_then_restart(
    tmp_path: Path, mosquitto: Mosquitto, shoe_path: str
) -> None:
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules=EXPLICIT)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                play = await _play_in_background(shoe, Dealer(decks=8, seed=9), pace=0.01)

                def mid_round_5(r: Recorder) -> bool:
                    return any(c["round"] == 5 and c["position"] == "B1"
                               for c in r.bodies("card"))

                await board.wait_for(mid_round_5, 30)
                daemon.kill()
                killed_at = max(board.by_seq())
                await board.wait_for(lambda r: _status(r) == "offline", 10)  # the last will
                await asyncio.to_thread(daemon.start)
                await play
                await board.wait_for(shoe_closed, SHOE_TIMEOUT)
        finally:
            daemon.close()
    published = engine_messages(board)  # asserts no seq came twice with different bodies
    assert [m["seq"] for m in published] == list(range(1, len(published) + 1))
    assert killed_at < len(published)
    replayed = replay_journal(daemon, profile_toml(tmp_path, **EXPLICIT))
    assert published == replayed
    round_5 = [m for m in published if m["type"] == "result" and m["round"] == 5]
    assert len(round_5) == 1
    assert "input(s) replayed" in daemon.log()


async def test_shoe_unplugged_and_replugged(
    tmp_path: Path, mosquitto: Mosquitto, shoe_path: str
) -> None:
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules=EXPLICIT)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                play = await _play_in_background(shoe, Dealer(decks=8, seed=11), pace=0.01)
                await board.wait_for(lambda r: len(r.bodies("result")) >= 3, 30)
                await shoe.unplug(1.5)
                await play
                await board.wait_for(shoe_closed, SHOE_TIMEOUT)
        finally:
            daemon.close()
    alarms = [a for a in board.bodies("alarm") if a["kind"] == "link_down"]
    assert len(alarms) == 1
    cleared = [c for c in board.bodies("alarm_cleared") if c["id"] == alarms[0]["id"]]
    assert cleared[0]["by"] == "link_up"
    published = engine_messages(board)
    kinds = {m["kind"] for m in published if m["type"] == "alarm"} - SURVEILLANCE_KINDS
    assert kinds == {"link_down"}  # no card lost or duplicated: no misdeal (the live edge's
    # advantage notices depend on the cards left, not on the link)
    replayed = replay_journal(daemon, profile_toml(tmp_path, **EXPLICIT))
    assert published == replayed


async def test_corrupt_journal_tail_is_cut_and_reported(
    tmp_path: Path, mosquitto: Mosquitto, shoe_path: str
) -> None:
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules=EXPLICIT)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                play = await _play_in_background(shoe, Dealer(decks=8, seed=3), pace=0.01)
                await board.wait_for(lambda r: len(r.bodies("result")) >= 4, 30)
                daemon.kill()
                play.cancel()
                journal = daemon.journal_files()[-1]
                with journal.open("ab") as f:
                    f.write(b"41 1700000000.000000 TS *0badc0de\n\x00\xff garbage")
                results_before = {b["round"]: b for b in board.bodies("result")}
                await asyncio.to_thread(daemon.start)
                await board.wait_for(
                    lambda r: any(a["kind"] == "journal_damaged" for a in r.bodies("alarm")), 20
                )
        finally:
            daemon.close()
    alarm = next(a for a in board.bodies("alarm") if a["kind"] == "journal_damaged")
    assert "crc" in alarm["text"].lower() or "bad" in alarm["text"].lower()
    recall = board.bodies("recall")[-1]
    recalled = {r["round"]: r for r in recall["rounds"]}
    for number, result in results_before.items():  # every earlier round intact
        assert recalled[number]["winner"] == result["winner"]


async def test_bad_and_unauthorised_commands_change_nothing(
    tmp_path: Path, mosquitto_factory: MosquittoFactory
) -> None:
    acl = (
        "user controller\ntopic readwrite baccarat/#\n"
        "user board\ntopic read baccarat/#\n"
        "user pit\ntopic readwrite baccarat/+/cmd/#\ntopic read baccarat/#\n"
    )
    users = {"controller": "c-secret", "board": "b-secret", "pit": "p-secret"}
    broker = mosquitto_factory(anonymous=False, users=users, acl=acl)
    daemon = Daemon(
        tmp_path, broker, rules={"burn": "none"},
        broker_env=broker.env(username="controller", password="c-secret"),
    )
    try:
        async with Recorder(broker, username="board", password="b-secret") as board:
            await asyncio.to_thread(daemon.start)
            async with broker.client(username="pit", password="p-secret") as pit:
                await pit.publish("baccarat/T1/cmd/shoe", b"{}", qos=1)
                await board.wait_for(lambda r: len(r.bodies("reply")) == 1, 10)
                state = dict(board.by_seq())
                for topic, body in [
                    ("open", b"{not json"),
                    ("open", b"[1, 2]"),
                    ("declare", b'{"winner": "dragon"}'),
                    ("burn", b'{"count": 0}'),
                    ("fly", b"{}"),
                    ("reveal", b"{}"),  # valid, but no round to reveal: the engine refuses
                    ("void", b'{"reason": "x", "extra": 1}'),
                ]:
                    await pit.publish(f"baccarat/T1/cmd/{topic}", body, qos=1)
                await board.wait_for(lambda r: len(r.bodies("reply")) == 8, 10)
            async with broker.client(username="board", password="b-secret") as intruder:
                await intruder.publish("baccarat/T1/cmd/end", b"{}", qos=1)
            await asyncio.sleep(1.0)
            assert board.by_seq() == state  # nothing changed, nothing published
    finally:
        daemon.close()
    replies = board.bodies("reply")
    assert replies[0]["ok"] is True
    errors = [r["error"] for r in replies[1:]]
    assert all(r["ok"] is False for r in replies[1:])
    assert "not JSON" in errors[0]
    assert "JSON object" in errors[1]
    assert "winner" in errors[2]
    assert "count" in errors[3]
    assert "unknown command 'fly'" in errors[4]
    assert "no round to reveal" in errors[5]
    assert "extra" in errors[6]
    assert len(replies) == 8  # the board's 'end' was never delivered, so never answered


async def test_tls_and_password_file(tmp_path: Path, mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(anonymous=False, users={"controller": "c-secret"}, tls=True)
    secret = tmp_path / "broker-password"
    secret.write_text("c-secret\n")
    env = broker.env(username="controller", tls=True)
    env["BACCARAT_BROKER__PASSWORD_FILE"] = str(secret)
    daemon = Daemon(tmp_path, broker, broker_env=env)
    try:
        await asyncio.to_thread(daemon.start)
        async with broker.client(username="controller", password="c-secret") as client:
            await client.subscribe("baccarat/T1/status", qos=1)
            async with asyncio.timeout(10):
                message = await anext(client.messages)
        assert json.loads(message.payload)["state"] == "online"  # type: ignore[arg-type]
    finally:
        daemon.close()


async def test_stops_when_the_broker_goes_at_the_same_moment(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """SIGTERM while the connection drops: the reconnection loop must not swallow it.

    It once did: the daemon ran on for ever.
    """
    daemon = Daemon(tmp_path, mosquitto)
    try:
        await asyncio.to_thread(daemon.start)
        assert mosquitto.pid is not None
        os.kill(mosquitto.pid, signal.SIGTERM)  # the broker says goodbye ...
        os.kill(daemon.pid, signal.SIGTERM)  # ... as the daemon is told to stop
        status = await asyncio.to_thread(daemon.stop, 15.0)
    finally:
        daemon.close()
    assert status == 0
    assert "stopping: waiting for the tasks" in daemon.log()
