"""Hand-worked examples of the roads. Every expected value below was worked out on paper.

Results are written as tokens: ``B``, ``P``, ``T`` (banker, player, tie), followed by
optional flags ``b`` (banker pair), ``p`` (player pair), ``n`` (natural). Rounds are
numbered from 1 in the order given. Grids in the comments are drawn with the top row first.
"""

from __future__ import annotations

from baccarat.controller.engine.roads import Roads, derived_mark
from baccarat.messages.bodies import adapter
from baccarat.messages.roads import RoadsMessage

WINNERS = {"B": "banker", "P": "player", "T": "tie"}


def feed(results: str, roads: Roads | None = None, first_round: int = 1) -> Roads:
    """Add space-separated result tokens to ``roads`` (a new one by default)."""
    roads = Roads() if roads is None else roads
    for number, token in enumerate(results.split(), start=first_round):
        roads.add(number, WINNERS[token[0]], "p" in token[1:], "b" in token[1:], "n" in token[1:])  # type: ignore[arg-type]
    return roads


def message(roads: Roads, cards_left: int = 400) -> RoadsMessage:
    return roads.message(seq=7, shoe=3, cards_left=cards_left)


def big_road_cells(roads: Roads) -> list[tuple[int, int, str, int]]:
    """(col, row, B/P, ties) of each big-road cell."""
    return [(c.col, c.row, c.winner[0].upper(), c.ties) for c in message(roads).big_road.cells]


def derived(roads: Roads, name: str) -> str:
    """A derived road's marks in order, ``r``/``b``."""
    road = getattr(message(roads), name)
    return "".join(cell.colour[0] for cell in road.cells)


def derived_positions(roads: Roads, name: str) -> list[tuple[int, int]]:
    return [(cell.col, cell.row) for cell in getattr(message(roads), name).cells]


def ask(roads: Roads) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    a = message(roads).ask
    return (
        (a.banker.big_eye_boy, a.banker.small_road, a.banker.cockroach_pig),
        (a.player.big_eye_boy, a.player.small_road, a.player.cockroach_pig),
    )


# --- bead plate --------------------------------------------------------------------------


def test_bead_plate_fills_six_rows_column_by_column() -> None:
    roads = feed("B P T B P P B")
    plate = message(roads).bead_plate
    assert [(c.col, c.row, c.winner) for c in plate.cells] == [
        (0, 0, "banker"),
        (0, 1, "player"),
        (0, 2, "tie"),
        (0, 3, "banker"),
        (0, 4, "player"),
        (0, 5, "player"),
        (1, 0, "banker"),
    ]
    assert plate.width == 2
    assert plate.rows == 6


def test_bead_plate_keeps_pairs_and_naturals_of_every_round_ties_included() -> None:
    roads = feed("Bb Tpb Pn")
    cells = message(roads).bead_plate.cells
    assert [(c.round, c.banker_pair, c.player_pair, c.natural) for c in cells] == [
        (1, True, False, False),
        (2, True, True, False),
        (3, False, False, True),
    ]


# --- big road ----------------------------------------------------------------------------


def test_ties_at_the_start_of_a_shoe_go_on_the_first_cell() -> None:
    # T T B T P P  ->  B(3 ties: 2 before, 1 after) | P P
    roads = feed("T T B T P P")
    road = message(roads).big_road
    assert big_road_cells(roads) == [(0, 0, "B", 3), (1, 0, "P", 0), (1, 1, "P", 0)]
    assert road.leading_ties == 2
    assert [(c.winner, c.length) for c in road.columns] == [("banker", 1), ("player", 2)]


def test_ties_only_leave_the_big_road_empty_but_counted() -> None:
    roads = feed("T T")
    m = message(roads)
    assert m.big_road.cells == []
    assert m.big_road.leading_ties == 2
    assert m.big_road.width == 0
    assert len(m.bead_plate.cells) == 2
    assert m.stats.tie == 2


def test_ties_count_on_the_most_recent_cell() -> None:
    # B T T P T B  ->  B(2) | P(1) | B
    roads = feed("B T T P T B")
    assert big_road_cells(roads) == [(0, 0, "B", 2), (1, 0, "P", 1), (2, 0, "B", 0)]
    assert message(roads).big_road.leading_ties == 0


def test_big_road_pairs_come_from_the_round_that_made_the_cell() -> None:
    # Round 1 banker with a banker pair, round 2 a tie with a player pair (shown on the
    # bead plate, not on the big road), round 3 player with both pairs.
    roads = feed("Bb Tp Pbp")
    cells = message(roads).big_road.cells
    assert [(c.round, c.banker_pair, c.player_pair, c.ties) for c in cells] == [
        (1, True, False, 1),
        (3, True, True, 0),
    ]


def test_a_streak_of_eight_makes_a_dragon_tail() -> None:
    # B x8 then P:
    #   col: 0 1 2
    #   r0   B P
    #   r1   B
    #   r2   B
    #   r3   B
    #   r4   B
    #   r5   B B B      <- the tail turns right on the last row
    # The P streak starts at column 1 (right after the column where B started).
    roads = feed("B B B B B B B B P")
    assert big_road_cells(roads) == [
        (0, 0, "B", 0),
        (0, 1, "B", 0),
        (0, 2, "B", 0),
        (0, 3, "B", 0),
        (0, 4, "B", 0),
        (0, 5, "B", 0),
        (1, 5, "B", 0),
        (2, 5, "B", 0),
        (1, 0, "P", 0),
    ]
    road = message(roads).big_road
    assert [(c.winner, c.length) for c in road.columns] == [("banker", 8), ("player", 1)]
    assert [(c.logical_col, c.logical_row) for c in road.cells][-3:] == [(0, 6), (0, 7), (1, 0)]
    assert road.width == 3


def test_a_tail_blocks_a_later_column() -> None:
    # B x8, P x6, B x5:
    #   col: 0 1 2 3
    #   r0   B P B
    #   r1   B P B
    #   r2   B P B
    #   r3   B P B B    <- third streak turns above the P tail
    #   r4   B P P      <- P turns above the B tail
    #   r5   B B B
    roads = feed("B B B B B B B B  P P P P P P  B B B B B")
    cells = big_road_cells(roads)
    assert cells[8:14] == [
        (1, 0, "P", 0),
        (1, 1, "P", 0),
        (1, 2, "P", 0),
        (1, 3, "P", 0),
        (1, 4, "P", 0),
        (2, 4, "P", 0),
    ]
    assert cells[14:] == [
        (2, 0, "B", 0),
        (2, 1, "B", 0),
        (2, 2, "B", 0),
        (2, 3, "B", 0),
        (3, 3, "B", 0),
    ]
    assert message(roads).big_road.width == 4


def test_a_tail_stays_on_its_row_when_the_cell_below_frees_up() -> None:
    # B x7 (tail at row 5 into col 1), P x7 in col 1: stops at row 4, turns right at
    # row 4 and stays there even though col 3 row 5 is free.
    roads = feed("B B B B B B B  P P P P P P P")
    assert big_road_cells(roads)[7:] == [
        (1, 0, "P", 0),
        (1, 1, "P", 0),
        (1, 2, "P", 0),
        (1, 3, "P", 0),
        (1, 4, "P", 0),
        (2, 4, "P", 0),
        (3, 4, "P", 0),
    ]


def test_a_new_streak_skips_a_column_whose_top_is_taken_by_a_tail() -> None:
    # Tails stacked from the bottom up until a streak has to turn on the top row:
    #   col:  0 1 2 3 4 5 6 7
    #   r0    B P B P B P P B     <- col 5's P turns at row 0 and runs into col 6;
    #   r1    B P B P B B         the next B starts at col 7, the first free top
    #   r2    B P B P P
    #   r3    B P B B
    #   r4    B P P
    #   r5    B B
    roads = feed(
        "B B B B B B B"  # 7 B: col 0 rows 0-5, tail (1,5)
        " P P P P P P"  # 6 P: col 1 rows 0-4, tail (2,4)
        " B B B B B"  # 5 B: col 2 rows 0-3, tail (3,3)
        " P P P P"  # 4 P: col 3 rows 0-2, tail (4,2)
        " B B B"  # 3 B: col 4 rows 0-1, tail (5,1)
        " P P"  # 2 P: col 5 row 0, tail (6,0)
        " B"  # next B: col 6 top is taken -> col 7
    )
    cells = big_road_cells(roads)
    assert cells[-3:] == [(5, 0, "P", 0), (6, 0, "P", 0), (7, 0, "B", 0)]
    # and the streak after it starts right after col 7, not after col 5
    feed("P", roads, first_round=29)
    assert big_road_cells(roads)[-1] == (8, 0, "P", 0)


# --- derived roads -----------------------------------------------------------------------

# The big road of B P P B B B P B B P P P P has columns of lengths 1, 2, 3, 1, 2, 4.
# Worked by hand, cell by cell (1-based column c, row r, as in the rules):
#
#  n  cell   big eye boy (k=1)          small road (k=2)        cockroach pig (k=3)
#  1  c1r1   -                          -                       -
#  2  c2r1   -                          -                       -
#  3  c2r2   len c1 = 1 = r-1: blue     -                       -
#  4  c3r1   c2 2 != c1 1: blue         -                       -
#  5  c3r2   len c2 = 2 != 1: red       len c1 = 1: blue        -
#  6  c3r3   len c2 = 2: blue           len c1 = 1 != 2: red    -
#  7  c4r1   c3 3 != c2 2: blue         c3 3 != c1 1: blue      - (c4r2 never exists)
#  8  c5r1   c4 1 != c3 3: blue         c4 1 != c2 2: blue      c4 1 = c1 1: red
#  9  c5r2   len c4 = 1: blue           len c3 = 3 != 1: red    len c2 = 2 != 1: red
# 10  c6r1   c5 2 != c4 1: blue         c5 2 != c3 3: blue      c5 2 = c2 2: red
# 11  c6r2   len c5 = 2 != 1: red       len c4 = 1: blue        len c3 = 3 != 1: red
# 12  c6r3   len c5 = 2: blue           len c4 = 1 != 2: red    len c3 = 3 != 2: red
# 13  c6r4   len c5 = 2 != 3: red       len c4 = 1 != 3: red    len c3 = 3: blue
WORKED = "B P P B B B P B B P P P P"


def test_big_eye_boy_of_the_worked_example() -> None:
    roads = feed(WORKED)
    assert derived(roads, "big_eye_boy") == "bbrbbbbbrbr"
    #   col: 0 1 2 3 4 5
    #   r0   b r b r b r
    #   r1   b   b
    #   r2       b
    #   r3       b
    #   r4       b
    assert derived_positions(roads, "big_eye_boy") == [
        (0, 0), (0, 1), (1, 0), (2, 0), (2, 1), (2, 2), (2, 3), (2, 4), (3, 0), (4, 0), (5, 0),
    ]  # fmt: skip
    road = message(roads).big_eye_boy
    assert [(c.colour, c.length) for c in road.columns] == [
        ("blue", 2), ("red", 1), ("blue", 5), ("red", 1), ("blue", 1), ("red", 1),
    ]  # fmt: skip
    assert road.k == 1
    assert road.width == 6


def test_small_road_of_the_worked_example() -> None:
    roads = feed(WORKED)
    assert derived(roads, "small_road") == "brbbrbbrr"
    assert derived_positions(roads, "small_road") == [
        (0, 0), (1, 0), (2, 0), (2, 1), (3, 0), (4, 0), (4, 1), (5, 0), (5, 1),
    ]  # fmt: skip


def test_cockroach_pig_of_the_worked_example() -> None:
    roads = feed(WORKED)
    assert derived(roads, "cockroach_pig") == "rrrrrb"
    assert derived_positions(roads, "cockroach_pig") == [
        (0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 0),
    ]  # fmt: skip


def test_derived_marks_name_the_round_that_made_them() -> None:
    roads = feed(WORKED)
    m = message(roads)
    assert [c.round for c in m.big_eye_boy.cells] == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    assert [c.round for c in m.small_road.cells] == [5, 6, 7, 8, 9, 10, 11, 12, 13]
    assert [c.round for c in m.cockroach_pig.cells] == [8, 9, 10, 11, 12, 13]


def test_ties_change_no_derived_road() -> None:
    roads = feed("T B P T P B T B B P B T B P P P T P")
    # the same big road as WORKED, with ties in between
    assert derived(roads, "big_eye_boy") == "bbrbbbbbrbr"
    assert derived(roads, "small_road") == "brbbrbbrr"
    assert derived(roads, "cockroach_pig") == "rrrrrb"


def test_start_points_when_column_k_plus_1_has_one_cell() -> None:
    # B P B P B: every column has one cell, so no road can start at column k+1 row 2;
    # each starts at column k+2 row 1. Columns of equal length: all red.
    roads = feed("B P B P B")
    m = message(roads)
    assert [(c.round, c.colour) for c in m.big_eye_boy.cells] == [
        (3, "red"), (4, "red"), (5, "red"),
    ]  # fmt: skip
    assert [(c.round, c.colour) for c in m.small_road.cells] == [(4, "red"), (5, "red")]
    assert [(c.round, c.colour) for c in m.cockroach_pig.cells] == [(5, "red")]


def test_start_points_at_column_k_plus_1_row_2() -> None:
    # B P P: big eye boy starts at c2r2 (round 3): len c1 = 1 = r-1 -> blue.
    assert [(c.round, c.colour) for c in message(feed("B P P")).big_eye_boy.cells] == [(3, "blue")]
    # B P B B: small road starts at c3r2 (round 4): len c1 = 1 -> blue.
    m = message(feed("B P B B"))
    assert [(c.round, c.colour) for c in m.small_road.cells] == [(4, "blue")]
    assert m.cockroach_pig.cells == []
    # B P B P P: cockroach pig starts at c4r2 (round 5): len c1 = 1 -> blue.
    m = message(feed("B P B P P"))
    assert [(c.round, c.colour) for c in m.cockroach_pig.cells] == [(5, "blue")]


def test_derived_mark_rule_directly() -> None:
    lengths = [1, 2, 3, 1, 2, 4]  # 0-based columns
    assert derived_mark(lengths, 1, 0, 5) is None
    assert derived_mark(lengths, 1, 1, 0) is None
    assert derived_mark(lengths, 1, 1, 1) == "blue"  # c2r2
    assert derived_mark(lengths, 3, 3, 0) is None  # c4r1: before the pig's start
    assert derived_mark(lengths, 3, 3, 1) == "blue"  # c4r2 would compare c1 (1 = r-1)
    assert derived_mark(lengths, 2, 5, 3) == "red"  # c6r4: len c4 = 1, r-1 = 3
    assert derived_mark(lengths, 2, 5, 4) == "red"  # len c4 = 1 < r-1: still red


# --- ask rows ----------------------------------------------------------------------------


def test_ask_is_empty_before_any_road_can_start() -> None:
    assert ask(Roads()) == ((None, None, None), (None, None, None))
    assert ask(feed("T")) == ((None, None, None), (None, None, None))
    # after B: next B is c1r2, next P is c2r1: both before the big eye boy's start
    assert ask(feed("B")) == ((None, None, None), (None, None, None))


def test_ask_after_banker_player() -> None:
    # B P: next P is c2r2: len c1 = 1 = r-1 -> blue; next B is c3r1: c2 1 = c1 1 -> red.
    assert ask(feed("B P")) == (("red", None, None), ("blue", None, None))


def test_ask_after_the_worked_example() -> None:
    # Columns 1, 2, 3, 1, 2, 4, last is P.
    # Next B: c7r1: c6 4 vs c5 2 blue; c6 4 vs c4 1 blue; c6 4 vs c3 3 blue.
    # Next P: c6r5: len c5 2 != 4 red; len c4 1 != 4 red; len c3 3 != 4 red.
    assert ask(feed(WORKED)) == (("blue", "blue", "blue"), ("red", "red", "red"))


def test_ask_predicts_the_next_marks() -> None:
    # B P P B B B: last column B (len 3), columns 1, 2, 3.
    # Next B: c3r4: len c2 2 != 3 red; len c1 1 != 3 red; pig none (c3 < 4).
    # Next P: c4r1: c3 3 vs c2 2 blue; c3 3 vs c1 1 blue; pig none (c4r1 before start).
    roads = feed("B P P B B B")
    assert ask(roads) == (("red", "red", None), ("blue", "blue", None))
    feed("P", roads, first_round=7)
    m = message(roads)
    assert (m.big_eye_boy.cells[-1].colour, m.small_road.cells[-1].colour) == ("blue", "blue")


# --- statistics, remove, clear -----------------------------------------------------------


def test_statistics() -> None:
    roads = feed("Bn Bb T B Pp P Tbp Bn B P")
    stats = roads.message(seq=1, shoe=1, cards_left=380).stats
    assert (stats.rounds, stats.banker, stats.player, stats.tie) == (10, 5, 3, 2)
    assert (stats.banker_pairs, stats.player_pairs, stats.naturals) == (2, 2, 2)
    # banker streak of 3 (B B T B: the tie does not break it), player streak of 2
    assert (stats.longest_banker_streak, stats.longest_player_streak) == (3, 2)
    assert stats.current_streak is not None
    assert (stats.current_streak.winner, stats.current_streak.length) == ("player", 1)
    assert stats.cards_left == 380


def test_statistics_of_an_empty_shoe() -> None:
    stats = Roads().message(seq=1, shoe=1, cards_left=416).stats
    assert (stats.rounds, stats.banker, stats.player, stats.tie) == (0, 0, 0, 0)
    assert stats.current_streak is None
    assert stats.longest_banker_streak == 0


def test_remove_withdraws_a_result_and_rebuilds() -> None:
    roads = feed("B P P B")
    assert roads.remove(3) is True
    assert big_road_cells(roads) == [(0, 0, "B", 0), (1, 0, "P", 0), (2, 0, "B", 0)]
    assert [c.round for c in message(roads).bead_plate.cells] == [1, 2, 4]
    assert len(roads) == 3
    assert roads.remove(3) is False
    assert roads.remove(99) is False


def test_remove_a_leading_tie() -> None:
    roads = feed("T B")
    roads.remove(1)
    assert big_road_cells(roads) == [(0, 0, "B", 0)]
    assert message(roads).big_road.leading_ties == 0


def test_a_second_result_for_a_round_replaces_the_first() -> None:
    roads = feed("B P B")
    roads.add(2, "banker", False, False, False)
    assert big_road_cells(roads) == [(0, 0, "B", 0), (0, 1, "B", 0), (0, 2, "B", 0)]
    assert [c.round for c in message(roads).bead_plate.cells] == [1, 2, 3]


def test_clear_starts_a_new_shoe() -> None:
    roads = feed("B P P B T")
    roads.clear()
    m = message(roads)
    assert len(roads) == 0
    assert m.bead_plate.cells == m.big_road.cells == m.big_eye_boy.cells == []
    assert m.stats.rounds == 0


# --- the message -------------------------------------------------------------------------


def test_message_header_and_json_round_trip() -> None:
    roads = feed("T Bb P P B Tn")
    m = roads.message(seq=42, shoe=5, cards_left=300, ts=1700000000.5)
    assert (m.seq, m.shoe, m.ts, m.type, m.topic) == (42, 5, 1700000000.5, "roads", "roads")
    body = m.to_json()
    assert body.startswith('{"schema":1,"seq":42,')
    assert adapter(RoadsMessage).validate_json(body) == m


def test_a_message_is_not_changed_by_later_results() -> None:
    roads = feed("B P")
    before = message(roads)
    body = before.to_json()
    feed("P T B", roads, first_round=3)
    assert before.to_json() == body
