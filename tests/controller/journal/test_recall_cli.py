"""``baccarat recall``: game recall rebuilt from the journal, as an engineer runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from baccarat.controller.engine.inputs import parse_input
from baccarat.controller.journal.writer import Journal
from baccarat.rules.profiles import load_profile


def journal_of(folder: Path, lines: list[str]) -> None:
    journal = Journal(folder, fsync=False, profile=load_profile("macau", burn="none"))
    journal.open()
    for line in lines:
        journal.append(parse_input(line))
    journal.close()


def recall(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "recall", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )


def test_recall_from_a_journal_folder(tmp_path: Path) -> None:
    journal_of(tmp_path, ["shoe", "7S", "6H", "KS", "KH", "2S", "3H", "KD", "KC", "void"])
    proc = recall(str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("shoe 1 round   1  PLAYER P 7 B 6")
    assert lines[0].endswith("P1:7S  B1:6H  P2:KS  B2:KH")
    assert "round   2  VOID" in lines[1]
    body = json.loads(recall(str(tmp_path), "--json").stdout)
    assert [r["status"] for r in body["rounds"]] == ["result", "void"]
    assert [c["card"] for c in body["rounds"][0]["cards"]] == ["7S", "6H", "KS", "KH"]


def test_recall_of_a_missing_journal(tmp_path: Path) -> None:
    proc = recall(str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert "no such journal" in proc.stderr
