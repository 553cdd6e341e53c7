"""``baccarat journal verify|show``, run as a user runs them: as processes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import Input, NewShoe, OpenRound
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.controller.journal.records import file_name
from baccarat.controller.journal.writer import Journal
from baccarat.rules.profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
Writer = Callable[..., Path]


def baccarat(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )


def timed(inputs: list[Input], start: float = 1718000000.0) -> list[Input]:
    """The inputs with arrival times, as the daemon gives them (microseconds)."""
    return [replace(inp, ts=round(start + i * 0.7, 6)) for i, inp in enumerate(inputs)]


@pytest.fixture
def shoe_file(folder: Path) -> Path:
    """A journal of one short shoe played the daemon's way, in its second file."""
    profile = load_profile("macau")
    engine = Engine(profile)
    with Journal(folder, fsync=False, profile=profile) as journal:
        journal.open()
        for inp in [OpenRound(ts=1.0), *timed(list(shoe_inputs(8, 7))[:40])]:
            counters = engine.counters()
            journal.append(inp)
            if isinstance(inp, NewShoe) and engine.feed(inp).refused is None:
                journal.rotate(counters, inp)
            elif not isinstance(inp, NewShoe):
                engine.feed(inp)
        assert journal.path == folder / file_name(2)
        return journal.path


def test_verify_a_clean_file(shoe_file: Path) -> None:
    proc = baccarat("journal", "verify", str(shoe_file))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{shoe_file}: {shoe_file.stat().st_size} bytes"
    assert lines[1] == "  header: file 2, counters seq=0 alarm_seq=0 shoe=0, profile macau"
    assert lines[2] == "  records: 40 (2..41)"
    assert lines[3] == "  clean"


def test_verify_a_damaged_file_reports_without_changing_it(shoe_file: Path) -> None:
    data = bytearray(shoe_file.read_bytes())
    bad = data.index(b"\n10 ") + 1
    data[bad + 5] ^= 0x01
    shoe_file.write_bytes(data)
    proc = baccarat("journal", "verify", str(shoe_file))
    assert proc.returncode == 1
    assert "  records: 8 (2..9)" in proc.stdout
    problem = proc.stdout.splitlines()[-1]
    assert problem.startswith(f"  problem: at byte {bad}: CRC mismatch")
    assert "losing 31 intact records after the bad one" in problem
    assert shoe_file.read_bytes() == data


def test_verify_torn_and_empty_and_missing(shoe_file: Path, tmp_path: Path) -> None:
    shoe_file.write_bytes(shoe_file.read_bytes()[:-3])
    torn = baccarat("journal", "verify", str(shoe_file))
    assert torn.returncode == 1
    assert "torn record: no newline at the end" in torn.stdout
    empty = tmp_path / "empty.journal"
    empty.write_bytes(b"")
    proc = baccarat("journal", "verify", str(empty))
    assert proc.returncode == 1
    assert "empty file: no header" in proc.stdout
    missing = baccarat("journal", "verify", str(tmp_path / "none.journal"))
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr


def test_show_prints_records_with_utc_times(shoe_file: Path) -> None:
    proc = baccarat("journal", "show", str(shoe_file))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("# shoe-000002.journal: file 2, counters seq=0")
    assert lines[1].split() == ["2", "2024-06-10T06:13:20.000000Z", "shoe", "8"]
    assert lines[2].split() == ["3", "2024-06-10T06:13:20.700000Z", lines[2].split()[2]]
    assert len(lines) == 41


def test_show_json(shoe_file: Path) -> None:
    proc = baccarat("journal", "show", "--json", str(shoe_file))
    assert proc.returncode == 0, proc.stderr
    bodies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert bodies[0] == {
        "record": 2,
        "ts": 1718000000.0,
        "time": "2024-06-10T06:13:20.000000Z",
        "input": "shoe 8",
    }
    assert [b["record"] for b in bodies] == list(range(2, 42))


def test_show_messages_numbers_on_from_the_header(shoe_file: Path, folder: Path) -> None:
    proc = baccarat("journal", "show", "--messages", str(shoe_file))
    assert proc.returncode == 0, proc.stderr
    bodies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert bodies[0]["type"] == "shoe"
    assert bodies[0]["shoe"] == 1
    assert [b["seq"] for b in bodies] == list(range(1, len(bodies) + 1))
    assert bodies[0]["ts"] == 1718000000.0
    first = baccarat("journal", "show", "--messages", str(folder / file_name(1)))
    assert first.returncode == 0
    assert "record 1: refused: " in first.stderr  # 'open' before any shoe


def test_show_replay_is_what_baccarat_replay_reads(shoe_file: Path) -> None:
    notation = baccarat("journal", "show", "--replay", str(shoe_file))
    assert notation.returncode == 0, notation.stderr
    assert notation.stdout.splitlines()[1] == "@1718000000.000000 shoe 8  # record 2"
    replayed = baccarat("replay", "-", stdin=notation.stdout)
    assert replayed.returncode == 0, replayed.stderr
    messages = baccarat("journal", "show", "--messages", str(shoe_file))
    assert replayed.stdout == messages.stdout  # the header's counters are those of a fresh engine


def test_show_a_damaged_file_prints_the_good_records_and_exits_1(shoe_file: Path) -> None:
    shoe_file.write_bytes(shoe_file.read_bytes() + b"garbage")
    proc = baccarat("journal", "show", str(shoe_file))
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 41
    assert "garbage" not in proc.stdout
    assert f"{shoe_file}: at byte " in proc.stderr


def test_show_messages_with_an_unknown_profile(shoe_file: Path) -> None:
    proc = baccarat("journal", "show", "--messages", "--profile", "nope", str(shoe_file))
    assert proc.returncode == 2
    assert "unknown profile" in proc.stderr
