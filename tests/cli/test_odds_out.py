"""``baccarat odds --out CARDS``: the odds on the cards left (issue 24)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from baccarat.cards import parse_card
from baccarat.rules.edge import cards_left, live_odds
from baccarat.rules.profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]


def baccarat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
    )  # fmt: skip


def odds_json(*args: str) -> dict[str, float]:
    proc = baccarat("odds", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    figures: dict[str, float] = json.loads(proc.stdout)
    return figures


def test_nothing_out_gives_the_full_shoe_figures() -> None:
    full = odds_json()
    left = odds_json("--out", "")
    assert left.pop("cards_left") == 416
    assert left == full


def test_cards_out_in_any_notation_price_the_cards_left() -> None:
    out = odds_json("--profile", "house6", "--out", "AS, 10h A01  kd,QC")
    profile = load_profile("house6")
    cards = [parse_card(c) for c in ("AS", "TH", "AS", "KD", "QC")]
    expected = live_odds(profile, cards_left(profile, cards)).as_floats()
    assert out["cards_left"] == 312 - 5
    assert out["banker"] == round(expected["banker"], 6)
    assert out["edge_tie"] == round(expected["edge_tie"], 6)
    assert out["edge_pair"] == round(expected["edge_player_pair"], 6)


def test_cards_out_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("AS 2H\n3D,4C\n")
    assert odds_json("--out", f"@{path}") == odds_json("--out", "AS,2H,3D,4C")
    text = baccarat("odds", "--out", f"@{path}").stdout
    assert text.startswith("412 cards left of 8 decks (macau), 4 out")


def test_a_bad_card_is_an_error_naming_it() -> None:
    proc = baccarat("odds", "--out", "AS,XY,2H")
    assert proc.returncode == 2
    assert "baccarat odds: --out: not a card: 'XY'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_card_out_more_often_than_the_shoe_holds_it() -> None:
    proc = baccarat("odds", "--decks", "1", "--out", "AS AS")
    assert proc.returncode == 2
    assert "AS is out 2 times, but a 1-deck shoe holds only 1" in proc.stderr


def test_an_unreadable_file_is_an_error(tmp_path: Path) -> None:
    proc = baccarat("odds", "--out", f"@{tmp_path / 'none.txt'}")
    assert proc.returncode == 2
    assert "cannot read" in proc.stderr


def test_fewer_than_six_cards_left_have_no_odds() -> None:
    one_deck = [f"{rank}{suit}" for suit in "SHDC" for rank in "A23456789TJQK"]
    proc = baccarat("odds", "--decks", "1", "--out", ",".join(one_deck[:47]))
    assert proc.returncode == 2
    assert "5 cards left: a round may need 6" in proc.stderr
    assert odds_json("--decks", "1", "--out", ",".join(one_deck[:46]))["cards_left"] == 6
