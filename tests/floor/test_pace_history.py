"""Dealer pace in the history: each shoe's rounds an hour and seconds a round.

Messages made by the engine itself (``baccarat replay`` of timed inputs), read by
``baccarat history --messages FILE --pace`` as a process, and the function beneath it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from baccarat.controller.engine.replay import replay_lines
from baccarat.floor.history import paces
from baccarat.rules.profiles import load_profile

ROUND = ["9S", "2H", "KD", "5C"]  # a natural: four cards, player wins


def timed_shoes() -> list[str]:
    """Three shoes: rounds every 50 s, then 40 s, then only one round.

    The first shoe's last round is voided after its result.
    """
    lines, t = [], 1_750_000_000.0
    for shoe, (rounds, every) in enumerate(((5, 50.0), (3, 40.0), (1, 30.0))):
        lines.append(f"@{t} shoe")
        for n in range(rounds):
            for k, code in enumerate(ROUND):
                lines.append(f"@{t + n * every + k} {code}")
        t += rounds * every
        if shoe == 0:  # the last round's result voided a minute later: it ended once
            lines.append(f"@{t + 60} void")
        lines.append(f"@{t + 70} end")
        t += 100
    return lines


def messages() -> list[tuple[str, dict[str, Any]]]:
    profile = load_profile("macau", burn="none")
    out = replay_lines(timed_shoes(), profile, on_error=print)
    return [("T1", json.loads(m.to_json())) for m in out]


def test_each_shoe_has_its_pace() -> None:
    shoes = paces(messages())
    assert [(s.shoe, s.rounds, s.seconds_per_round) for s in shoes] == [(1, 5, 50.0), (2, 3, 40.0)]
    assert shoes[0].rounds_per_hour == 72.0
    assert shoes[1].rounds_per_hour == 90.0  # shoe 3 has one round: no pace, not listed


def test_bodies_without_a_time_or_unusable_are_left_out() -> None:
    found = messages()
    results = [i for i, (_, b) in enumerate(found) if b["type"] == "result"]
    found[results[0]][1]["ts"] = None  # shoe 1's first round: no time
    found[results[1]][1]["round"] = "two"  # unusable: the history skips it
    found.append(("T1", "not a body"))  # type: ignore[arg-type]
    shoes = paces(found)
    assert [(s.shoe, s.rounds, s.seconds_per_round) for s in shoes] == [(1, 3, 50.0), (2, 3, 40.0)]


def test_baccarat_history_prints_the_pace(tmp_path: Path) -> None:
    path = tmp_path / "shoe.jsonl"
    path.write_text("".join(json.dumps(b) + "\n" for _, b in messages()))
    run = [sys.executable, "-m", "baccarat.cli", "history", "--messages", str(path), "--pace"]
    text = subprocess.run(run, capture_output=True, text=True, check=True, timeout=60).stdout
    assert text.splitlines() == [
        "T1 shoe 1: 5 rounds, 50.0 s a round, 72.0 rounds an hour",
        "T1 shoe 2: 3 rounds, 40.0 s a round, 90.0 rounds an hour",
    ]
    csv = subprocess.run([*run, "--csv"], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    assert csv.splitlines() == [
        "table,shoe,rounds,seconds_per_round,rounds_per_hour",
        "T1,1,5,50.0,72.0",
        "T1,2,3,40.0,90.0",
    ]
