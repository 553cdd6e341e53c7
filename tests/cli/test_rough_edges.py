"""Rough edges a newcomer met (issue 12, item 6), each met as a user meets it.

The command runs as a process, on a real journal the daemon wrote (``demo --keep``), on a
real mosquitto, or on files made for it.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import NewShoe
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.controller.journal.records import file_name
from baccarat.controller.journal.writer import Journal
from baccarat.rules.profiles import load_profile
from support.mosquitto import Mosquitto, MosquittoFactory

pytestmark = pytest.mark.xdist_group("rough_edges")  # module fixtures: one worker

ROOT = Path(__file__).resolve().parents[2]
DEMO_ROUNDS = 5

# Macau profile: the face-up 5S burns itself and 5 more cards (see test_roads_cli.py).
BURN = "shoe\n5S\nAS\n2S\n3S\n4S\n6S\n"
TIE = "7C\n7D\nKS\nKH\n"  # P 7, B 7
BANKER = "6S\n7H\nKD\nKC\n"  # P 6, B 7
PLAYER = "9S\nKH\n9D\n7C\n"  # P 8, B 7


def baccarat(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False,
    )  # fmt: skip


@dataclass(frozen=True)
class Demo:
    """What ``demo --keep`` printed and the folder it kept."""

    out: str
    folder: Path

    @property
    def journal(self) -> Path:
        return self.folder / "journal"


@pytest.fixture(scope="module")
def kept_demo() -> Iterator[Demo]:
    """A short demo played with ``--keep``; its folder is removed after the module."""
    proc = baccarat(
        "demo", "--fast", "--plain", "--rounds", str(DEMO_ROUNDS), "--web-port", "0", "--keep",
        timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    found = re.search(r"kept the journal in (\S+)/journal and the daemon's log in", proc.stdout)
    assert found, proc.stdout
    folder = Path(found.group(1))
    yield Demo(proc.stdout, folder)
    shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------- demo


def test_demo_plain_prints_burn_cards_without_a_round(kept_demo: Demo) -> None:
    burns = [line for line in kept_demo.out.splitlines() if line.startswith("  card burn")]
    assert len(burns) >= 2, kept_demo.out  # the face-up card and the cards it burns
    assert "(round None)" not in kept_demo.out
    assert "  card   P1 " in kept_demo.out
    assert "(round 1)" in kept_demo.out


def test_demo_keep_keeps_the_journal_and_the_log_and_says_where(kept_demo: Demo) -> None:
    assert (kept_demo.journal / file_name(1)).is_file()
    assert "ready: table DEMO" in (kept_demo.folder / "daemon.log").read_text()
    for command in ("journal verify", "recall", "roads"):
        assert f"  baccarat {command} {kept_demo.journal}\n" in kept_demo.out


def test_journal_verify_recall_and_roads_read_the_kept_folder(kept_demo: Demo) -> None:
    verified = baccarat("journal", "verify", str(kept_demo.journal))
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.splitlines()[-1] == f"{kept_demo.journal}: 2 file(s), every file clean"
    # file 1 holds what came before the first shoe, file 2 the shoe
    recall = baccarat("recall", "--json", str(kept_demo.journal))
    assert recall.returncode == 0, recall.stderr
    rounds = json.loads(recall.stdout)["rounds"]
    roads = baccarat("roads", "--json", str(kept_demo.journal))
    assert roads.returncode == 0, roads.stderr
    body = json.loads(roads.stdout)
    assert body["stats"]["rounds"] >= DEMO_ROUNDS  # the dealer may deal on before the stop
    winners = [c["winner"] for c in body["bead_plate"]["cells"]]
    assert winners[-len(rounds) :] == [r["winner"] for r in rounds if r["status"] != "void"]
    drawn = baccarat("roads", str(kept_demo.journal / file_name(2)))
    assert drawn.returncode == 0, drawn.stderr
    assert "Big road" in drawn.stdout


def test_without_keep_the_folder_goes(tmp_path: Path) -> None:
    proc = baccarat("demo", "--fast", "--plain", "--rounds", "1", "--web-port", "0", timeout=120)
    assert proc.returncode == 0, proc.stderr
    log = re.search(r"daemon log (\S+)/daemon\.log", proc.stdout)
    assert log, proc.stdout
    assert not Path(log.group(1)).exists()
    assert "kept" not in proc.stdout


def test_demo_refuses_a_bad_broker_with_a_message() -> None:
    proc = baccarat("demo", "--broker", "localhost:http")
    assert proc.returncode == 2
    assert "baccarat demo: --broker: bad port in 'localhost:http'" in proc.stderr
    assert "Traceback" not in proc.stderr


def demo_on(broker: Mosquitto, ws_port: int) -> tuple[str, dict[str, object] | None]:
    """``demo --broker`` on a real mosquitto; its output and the web board's /config.json."""
    process = subprocess.Popen(
        [sys.executable, "-m", "baccarat.cli", "demo", "--fast", "--plain", "--rounds", "2",
         "--web-port", "0", "--broker", f"{broker.host}:{broker.port}",
         "--ws-port", str(ws_port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    assert process.stdout is not None
    lines, config = [], None
    try:
        for line in process.stdout:
            lines.append(line)
            if line.startswith("web board: "):
                with urllib.request.urlopen(line.split()[-1] + "config.json", timeout=10) as r:
                    config = json.load(r)
        assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
    finally:
        process.kill()
        process.communicate()
    return "".join(lines), config


def test_demo_on_a_broker_serves_the_web_board_on_its_websocket_port(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(websockets=True)
    out, config = demo_on(broker, broker.websockets_port)
    assert config is not None, out
    assert config["ws_port"] == broker.websockets_port
    assert config["table"] == "DEMO"
    assert "nothing listens" not in out
    assert "round 2:" in out


def test_demo_on_a_broker_without_that_port_says_so(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # nothing listens: the socket never listen()s
        out, config = demo_on(broker, closed)
    assert config is not None
    assert f"but nothing listens on 127.0.0.1:{closed}" in out
    assert "give the broker's with --ws-port" in out


# ---------------------------------------------------------------------- journal verify


def two_shoe_journal(folder: Path) -> Path:
    """A journal of two seeded 6-deck shoes played the daemon's way: one file per shoe."""
    profile = load_profile("macau", decks=6)
    engine = Engine(profile)
    with Journal(folder, fsync=False, profile=profile) as journal:
        journal.open()
        for inp in [*shoe_inputs(6, 1), *shoe_inputs(6, 2)]:
            counters = engine.counters()
            journal.append(inp)
            if engine.feed(inp).refused is None and isinstance(inp, NewShoe):
                journal.rotate(counters, inp)
    return folder


def test_journal_verify_a_folder_checks_every_file(tmp_path: Path) -> None:
    folder = two_shoe_journal(tmp_path / "journal")
    proc = baccarat("journal", "verify", str(folder))
    assert proc.returncode == 0, proc.stderr
    for number in (1, 2, 3):  # the first file before the first shoe, then one a shoe
        assert f"{folder / file_name(number)}: " in proc.stdout
    assert proc.stdout.count("  clean\n") == 3
    damaged = folder / file_name(2)
    damaged.write_bytes(damaged.read_bytes()[:-3])
    proc = baccarat("journal", "verify", str(folder))
    assert proc.returncode == 1
    assert "torn record: no newline at the end" in proc.stdout
    assert proc.stdout.splitlines()[-1] == f"{folder}: 3 file(s), not clean"


def test_journal_verify_an_empty_folder(tmp_path: Path) -> None:
    proc = baccarat("journal", "verify", str(tmp_path))
    assert proc.returncode == 2
    assert f"no shoe-*.journal file in {tmp_path}" in proc.stderr


def test_journal_show_a_folder_shows_its_newest_file(tmp_path: Path) -> None:
    folder = two_shoe_journal(tmp_path / "journal")
    proc = baccarat("journal", "show", str(folder))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"# {file_name(3)}: file 3")


# ---------------------------------------------------------------------- roads


def test_roads_of_a_journal_folder_and_of_a_chosen_shoe(tmp_path: Path) -> None:
    folder = two_shoe_journal(tmp_path / "journal")
    last = json.loads(baccarat("roads", "--json", str(folder)).stdout)
    assert last["shoe"] == 2
    first = baccarat("roads", "--json", "--shoe", "1", str(folder))
    assert first.returncode == 0, first.stderr
    body = json.loads(first.stdout)
    assert body["shoe"] == 1
    assert body["stats"]["rounds"] > 50  # a whole 6-deck shoe
    assert body != last
    missing = baccarat("roads", "--shoe", "3", str(folder))
    assert missing.returncode == 2
    assert "no shoe 3 in" in missing.stderr


def test_roads_of_a_damaged_journal_draws_what_it_holds_and_exits_1(tmp_path: Path) -> None:
    folder = two_shoe_journal(tmp_path / "journal")
    newest = folder / file_name(3)
    newest.write_bytes(newest.read_bytes()[:-3])
    proc = baccarat("roads", "--json", str(newest))
    assert proc.returncode == 1
    assert "torn record: no newline at the end" in proc.stderr
    assert json.loads(proc.stdout)["shoe"] == 2
    empty = folder / file_name(4)
    empty.write_bytes(b"")
    proc = baccarat("roads", str(empty))
    assert proc.returncode == 2
    assert f"baccarat roads: {empty}: no journal header" in proc.stderr


def test_roads_chooses_a_shoe_in_a_multi_shoe_file(tmp_path: Path) -> None:
    path = tmp_path / "two-shoes.txt"
    path.write_text(BURN + BANKER + BANKER + "end\n" + BURN + PLAYER + TIE)
    first = json.loads(baccarat("roads", "--json", "--shoe", "1", str(path)).stdout)
    assert first["shoe"] == 1
    assert [c["winner"] for c in first["bead_plate"]["cells"]] == ["banker", "banker"]
    second = json.loads(baccarat("roads", "--json", str(path)).stdout)
    assert [c["winner"] for c in second["bead_plate"]["cells"]] == ["player", "tie"]
    missing = baccarat("roads", "--shoe", "5", str(path))
    assert missing.returncode == 2
    assert f"no shoe 5 in {path}" in missing.stderr


def test_docs_roads_ask_row_example_is_what_the_engine_says(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "roads.md").read_text(encoding="utf-8")
    example = re.search(r'"ask": (\{"banker": \{.*?\},\s*"player": \{.*?\}\})', doc, re.S)
    assert example, "the roads body example has an ask row"
    path = tmp_path / "tbpp.txt"
    path.write_text(BURN + TIE + BANKER + PLAYER + PLAYER)  # the example's T, B, P, P
    body = json.loads(baccarat("roads", "--json", str(path)).stdout)
    winners = [c["winner"] for c in body["bead_plate"]["cells"]]
    assert winners == ["tie", "banker", "player", "player"]
    assert json.loads(example.group(1)) == body["ask"]


# ---------------------------------------------------------------------- odds


def test_odds_of_house6_are_of_six_decks() -> None:
    proc = baccarat("odds", "--profile", "house6", "--json")
    assert proc.returncode == 0, proc.stderr
    six = json.loads(baccarat("odds", "--decks", "6", "--json").stdout)
    assert json.loads(proc.stdout) == six
    assert six["banker"] == 0.458653  # 8 decks: 0.458597
    assert baccarat("odds", "--profile", "house6").stdout.startswith("6 decks (house6)")


def test_odds_of_an_unknown_profile_exit_2_with_a_message() -> None:
    proc = baccarat("odds", "--profile", "house7")
    assert proc.returncode == 2
    assert "baccarat odds: unknown profile 'house7'" in proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------- alarm texts and hints


def replay(tmp_path: Path, text: str, *profile: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "inputs.txt"
    path.write_text(text)
    return baccarat("replay", str(path), *profile)


def test_an_open_refused_by_a_result_mismatch_names_its_corrections(tmp_path: Path) -> None:
    proc = replay(tmp_path, BURN + "open\n" + TIE + "declare banker\nopen\n")
    alarm = next(b for b in map(json.loads, proc.stdout.splitlines()) if b["type"] == "alarm")
    assert alarm["kind"] == "result_mismatch"
    assert "settle alarm #1 result_mismatch first (declare or void)" in proc.stderr


def test_an_open_refused_by_an_extra_card_names_its_corrections(tmp_path: Path) -> None:
    explicit = tmp_path / "explicit.toml"
    explicit.write_text('[profile]\nbase = "macau"\nopen_mode = "explicit"\n')
    proc = replay(tmp_path, BURN + "open\n" + TIE + "QS\nopen\n", "--profile", str(explicit))
    assert "settle alarm #1 extra_card first (accept_as_burn or void)" in proc.stderr


def test_a_foreign_card_in_an_eight_deck_shoe_reads_an_8_deck(tmp_path: Path) -> None:
    proc = replay(tmp_path, BURN + "KC\n" * 9)
    alarm = next(b for b in map(json.loads, proc.stdout.splitlines()) if b["type"] == "alarm")
    assert alarm["text"].startswith("KC is one more than the 8 of it that an 8-deck shoe holds")
    one = replay(tmp_path, BURN + "KC\n" * 2, "--decks", "1")
    assert "that a 1-deck shoe holds" in one.stdout
