"""``baccarat roads FILE``: the roads of a replayed shoe, as grids or as the JSON body."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from baccarat.cli import main
from baccarat.controller.engine.shoe_inputs import shoe_inputs

# Macau profile: the face-up 5S burns itself and 5 more cards.
BURN = "shoe\n5S\nAS\n2S\n3S\n4S\n6S\n"
TIE = "7C 7D KS KH\n"  # P 7, B 7: both stand
BANKER = "6S 7H KD KC\n"  # P 6, B 7
PLAYER_NATURAL_PAIR = "9S KH 9D 7C\n"  # P 9+9 = 8, a natural with a player pair; B 7
PLAYER_BANKER_PAIR = "7S 8H KS 8D\n"  # P 7, B 8+8 = 6 with a banker pair
SHOE = BURN + TIE + BANKER + BANKER + PLAYER_NATURAL_PAIR + PLAYER_BANKER_PAIR


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "shoe.txt"
    path.write_text(text.replace(" ", "\n"), encoding="utf-8")
    return str(path)


def test_text_output_draws_the_roads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roads", write(tmp_path, SHOE)]) == 0
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    bead = lines[lines.index("Bead plate") + 1 :][:6]
    # T B B P(natural, player pair) P(banker pair), down the first column
    assert bead == [" T", " B", " B", ",P", "'P", " ·"]
    big = lines[lines.index("Big road") + 1 :][:3]
    # the leading tie shows on the first banker cell
    assert big == [" B1,P", " B 'P", " ·  ·"]
    assert any(line.startswith("Rounds 5  B 2  P 2  T 1  B pair 1  P pair 1") for line in lines)


def test_json_output_is_the_last_roads_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["roads", "--json", write(tmp_path, SHOE)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["type"] == "roads"
    assert body["shoe"] == 1
    assert [c["winner"] for c in body["bead_plate"]["cells"]] == [
        "tie",
        "banker",
        "banker",
        "player",
        "player",
    ]
    assert body["big_road"]["leading_ties"] == 1
    assert body["stats"]["naturals"] == 1
    assert body["stats"]["cards_left"] == 416 - 6 - 20


def test_a_new_shoe_without_results_prints_empty_roads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["roads", "--json", write(tmp_path, SHOE + "end\n" + BURN)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["shoe"] == 2
    assert body["bead_plate"]["cells"] == []
    assert body["stats"]["cards_left"] == 416  # the empty roads published as the shoe began


def test_bad_lines_are_reported_and_the_exit_code_is_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["roads", "--json", write(tmp_path, SHOE + "XX\n")]) == 1
    captured = capsys.readouterr()
    assert ":28: not an input" in captured.err
    assert json.loads(captured.out)["stats"]["rounds"] == 5


def test_a_file_without_a_shoe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roads", write(tmp_path, "# nothing\n")]) == 2
    assert "no shoe" in capsys.readouterr().err


def test_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roads", str(tmp_path / "absent.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_full_eight_deck_shoe_in_well_under_half_a_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "full.txt"
    path.write_text("\n".join(i.to_text() for i in shoe_inputs(8, seed=7)), encoding="utf-8")
    main(["roads", "--json", str(path)])  # imports, once
    capsys.readouterr()
    start = time.perf_counter()
    main(["roads", str(path)])
    elapsed = time.perf_counter() - start
    out = capsys.readouterr().out
    assert "Cockroach pig" in out
    assert elapsed < 0.25  # the command adds ~0.25 s of interpreter start and imports
