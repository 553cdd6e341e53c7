"""Hardware-in-loop: the real ``baccarat run`` process, a virtual shoe on a pty, a real
mosquitto, and a subscriber that checks what a board would see."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
    return recorder.phase() == "closed"


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
    assert [m for m in published if m["type"] == "alarm"] == []
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


def _unused(factory: MosquittoFactory) -> None:  # keeps the import for later tests
    del factory
