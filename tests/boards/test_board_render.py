"""The terminal board drawn to a string at 80x24 and 120x40."""

from __future__ import annotations

import io

from rich.console import Console

from baccarat.boards.feed import receive
from baccarat.boards.state import BoardState, fold_all, with_controller_status, with_link
from baccarat.boards.terminal import render
from baccarat.messages.bodies import Message
from boards.messages_for_tests import (
    alarm,
    card,
    result,
    roads,
    round_open,
    round_status,
    shoe,
)

# Round 1: P 7S KS = 7, B 6H KH = 6 -> player; round 2 in progress: P 9D, B TC
MESSAGES: list[Message] = [
    shoe(1, number=4, cards_left=406, rounds=1),
    round_open(2, 1, shoe_number=4),
    card(3, 1, "P1", "7S", 7, 0, shoe_number=4),
    card(4, 1, "B1", "6H", 7, 6, shoe_number=4),
    card(5, 1, "P2", "KS", 7, 6, shoe_number=4),
    card(6, 1, "B2", "KH", 7, 6, shoe_number=4),
    result(7, 1, "player", (["7S", "KS"], 7), (["6H", "KH"], 6), shoe_number=4),
    round_status(8, 1, "complete", shoe_number=4),
    roads(9, "TPPBBBPBBPPPP", shoe_number=4, cards_left=406),
    round_open(10, 14, shoe_number=4),
    card(11, 14, "P1", "9D", 9, 0, shoe_number=4),
    card(12, 14, "B1", "TC", 9, 0, shoe_number=4),
]


def draw(state: BoardState, width: int, height: int) -> list[str]:
    console = Console(
        record=True, width=width, height=height, color_system=None, file=io.StringIO()
    )
    console.print(render(state, width, height))
    return console.export_text().splitlines()


def board() -> BoardState:
    state = fold_all(BoardState(table="T7"), MESSAGES)
    return with_controller_status(with_link(state, "connected"), b"online")


def test_80x24_fits_and_shows_the_live_round_and_all_roads() -> None:
    lines = draw(board(), 80, 24)
    assert len(lines) == 24
    assert all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    assert lines[0].startswith(" Table T7 ")
    for label in ("Shoe 4", "406 cards", "Round 14", "broker connected", "controller online"):
        assert label in lines[0]
    assert "PLAYER  9♦" in text
    assert "BANKER  10♣" in text
    assert "next card: P2" in text
    for title in ("Big road", "Bead plate", "Big eye boy", "Small road", "Cockroach pig"):
        assert title in text
    assert "Ask B: ○ ● ╱  P: ○ ● ╱" in text
    assert "B 5  P 7  T 1" in text


def test_80x24_big_road_grid() -> None:
    lines = draw(board(), 80, 24)
    top = next(i for i, line in enumerate(lines) if "Big road" in line)
    # T P P B B B P B B P P P P: the leading tie on the first P cell
    assert lines[top + 1].startswith("│  P1 B  P  B  P  ·")
    assert lines[top + 2].startswith("│  P  B  ·  B  P  ·")
    assert lines[top + 3].startswith("│  ·  B  ·  ·  P  ·")
    assert lines[top + 4].startswith("│  ·  ·  ·  ·  P  ·")


def test_120x40_uses_the_room_card_faces_and_full_statistics() -> None:
    lines = draw(board(), 120, 40)
    assert len(lines) == 40
    assert all(len(line) <= 120 for line in lines)
    text = "\n".join(lines)
    assert "┌───┐" in text  # card faces
    assert "│9  │" in text
    assert "Banker 5" in text
    assert "Longest P 4" in text
    assert "Round  Result" in text  # the recent results table
    assert "PLAYER  7  6  7♠ K♠" in text


def test_an_alarm_shows_as_a_banner_under_the_header() -> None:
    state = fold_all(board(), [alarm(20, 3, round_number=14)])
    lines = draw(state, 80, 24)
    assert len(lines) == 24
    assert lines[1].startswith(" ALARM 3: extra_card Art. 10 round 14")


def test_an_empty_board_says_it_waits() -> None:
    lines = draw(BoardState(table="T7"), 80, 24)
    assert len(lines) == 24
    text = "\n".join(lines)
    assert "waiting for the first round" in text
    assert "no result yet" in text
    assert "broker connecting" in lines[0]


def test_a_result_whose_message_was_missed_shows_from_the_roads() -> None:
    # a board that joined late: retained shoe, round and roads only
    state = fold_all(BoardState(table="T7"), [shoe(1), roads(9, "PPB"), round_open(10, 4)])
    text = "\n".join(draw(state, 80, 24))
    assert "BANKER WINS" in text
    assert "Last: P P B" in text


def test_the_bead_plate_marks_naturals() -> None:
    # rounds 1-6 down the first column: B, natural P, T, natural B, natural T, P
    state = fold_all(BoardState(table="T7"), [shoe(1), roads(2, "BpTbtP"), round_open(3, 7)])
    lines = draw(state, 80, 24)
    top = next(i for i, line in enumerate(lines) if "Bead plate" in line)
    cells = [lines[top + 1 + row].split("│")[1][1:4] for row in range(6)]
    assert cells == [" B ", " P*", " T ", " B*", " T*", " P "]


def test_the_limits_show_when_the_table_has_them() -> None:
    body = (
        b'{"schema":1,"type":"limits","table":"T7","currency":"HKD",'
        b'"banker":{"min":100,"max":50000},"player":{"min":100,"max":50000},'
        b'"tie":{"min":10,"max":5000},"pairs":{"min":10,"max":2500}}'
    )
    state = receive(board(), "baccarat/T7", "baccarat/T7/limits", body)
    wide = "\n".join(draw(state, 120, 40))
    assert "Limits HKD B 100-50k P 100-50k T 10-5k Pairs 10-2.5k" in wide
    small = draw(state, 80, 24)
    assert "Limits HKD" in "\n".join(small)
    assert "rounds 13" in "\n".join(small)  # the statistics keep their room
    assert "Limits" not in "\n".join(draw(board(), 120, 40))
    bad = receive(state, "baccarat/T7", "baccarat/T7/limits", body.replace(b"5000}", b"5}"))
    assert bad.limits == state.limits  # a bad body changes nothing, and is counted
    assert bad.rejected == state.rejected + 1
