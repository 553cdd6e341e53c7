"""The engine's commands, run as a user runs them: as processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def baccarat(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", *args],
        input=stdin, capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
    )


def test_replay_prints_json_lines_and_reports_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "shoe.txt"
    path.write_text(
        "# a short shoe, burn by first card: 2 -> 2 more\n"
        "shoe\n2S\n3S\n4S\n"
        "7S\n6H\nbanana\nKS\nKH   # player 7, banker 6\n"
        "burn x\n"
        "declare player\n"
        "open now\n"
    )
    proc = baccarat("replay", str(path), "--no-roads")
    assert proc.returncode == 1
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 3
    assert errors[0].startswith(f"{path}:8: ")
    assert "banana" in errors[0]
    assert errors[1].startswith(f"{path}:11: ")
    assert errors[2].startswith(f"{path}:13: ")
    bodies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [b["seq"] for b in bodies] == list(range(1, len(bodies) + 1))
    result = next(b for b in bodies if b["type"] == "result")
    assert result["winner"] == "player"
    assert result["player"]["cards"] == ["7S", "KS"]


def test_replay_from_stdin_with_profile() -> None:
    proc = baccarat(
        "replay", "-", "--profile", "csm", "--decks", "6", stdin="shoe\n9S\n9H\nKS\nKH\n"
    )
    assert proc.returncode == 0, proc.stderr
    kinds = [json.loads(line)["type"] for line in proc.stdout.splitlines()]
    assert "result" in kinds
    assert "roads" in kinds


def test_replay_missing_file() -> None:
    proc = baccarat("replay", "/nonexistent/shoe.txt")
    assert proc.returncode == 2
    assert "cannot read" in proc.stderr


def test_odds_json_matches_known_numbers() -> None:
    for decks, expected in [
        (8, {"banker": 0.458597, "player": 0.446247, "tie": 0.095156, "player_pair": 0.074699}),
        (6, {"banker": 0.458653, "player": 0.446279, "tie": 0.095069}),
    ]:
        start = time.perf_counter()
        proc = baccarat("odds", "--decks", str(decks), "--json")
        assert time.perf_counter() - start < 10
        odds = json.loads(proc.stdout)
        for key, value in expected.items():
            assert odds[key] == value
    odds = json.loads(baccarat("odds", "--decks", "8", "--json").stdout)
    assert odds["banker_pair"] == 0.074699
    assert (odds["edge_banker"], odds["edge_player"], odds["edge_tie"]) == (
        0.010579, 0.012351, 0.143596
    )


def test_schemas_in_the_repo_are_fresh() -> None:
    proc = baccarat("schemas", "--check", "--out", str(ROOT / "schemas"))
    assert proc.returncode == 0, proc.stderr


def test_schemas_check_notices_stale(tmp_path: Path) -> None:
    assert baccarat("schemas", "--out", str(tmp_path)).returncode == 0
    (tmp_path / "card.schema.json").write_text("{}")
    proc = baccarat("schemas", "--check", "--out", str(tmp_path))
    assert proc.returncode == 1
    assert "card.schema.json" in proc.stderr


# Issue 13's three repros, replayed as a user replays them.


def replay_bodies(tmp_path: Path, lines: str, profile: str) -> list[dict]:
    path = tmp_path / "inputs.txt"
    path.write_text(lines.replace(" ", "\n") + "\n")
    proc = baccarat("replay", str(path), "--profile", profile, "--no-roads")
    assert proc.returncode == 0, proc.stderr  # no line refused
    return [json.loads(line) for line in proc.stdout.splitlines()]


def open_alarms(bodies: list[dict]) -> set[int]:
    raised = {b["id"] for b in bodies if b["type"] == "alarm" and b["correctable"]}
    return raised - {b["id"] for b in bodies if b["type"] == "alarm_cleared"}


def test_replay_burn_incomplete_is_settled_by_burning_the_rest(tmp_path: Path) -> None:
    bodies = replay_bodies(tmp_path, "shoe 5C 2D open 3C 4H 6C 7C open KC KD 6H 6D", "macau")
    (alarm,) = [b for b in bodies if b["type"] == "alarm"]
    assert alarm["kind"] == "burn_incomplete"
    assert open_alarms(bodies) == set()
    (result,) = [b for b in bodies if b["type"] == "result"]
    assert result["winner"] == "tie"


def test_replay_unreadable_after_a_round_is_settled_before_the_next_result(
    tmp_path: Path,
) -> None:
    bodies = replay_bodies(
        tmp_path, "shoe AC 2D KC KD 6H 6D unreadable 5C 5D 3H 3S accept_as_burn", "macau"
    )
    assert open_alarms(bodies) == set()
    types = [b["type"] for b in bodies]
    second = [b for b in bodies if b["type"] == "result"][1]
    assert second["round"] == 2
    assert bodies.index(second) > types.index("alarm_cleared")  # shown only once settled
    bodies = replay_bodies(tmp_path, "shoe AC 2D KC KD 6H 6D unreadable void", "macau")
    assert open_alarms(bodies) == set()
    (void,) = [b for b in bodies if b["type"] == "void"]
    assert void["round"] == 2  # round 1's published tie stands


def test_replay_house6_unreadable_round_burn_keeps_the_deal_in_step(tmp_path: Path) -> None:
    bodies = replay_bodies(
        tmp_path,
        "shoe 2C 3C 4C 5C 6C 7C 8C 9C TC KC KD 6H 6D unreadable 9S 2H KD 3C 4C 8D KH JS 7C",
        "house6",
    )
    assert [b for b in bodies if b["type"] == "alarm"] == []
    second = [b for b in bodies if b["type"] == "result"][1]
    assert (second["winner"], second["player"]["total"], second["banker"]["total"]) == (
        "player", 9, 5,
    )
    assert second["player"]["cards"] == ["9S", "KD"]
