"""The ``advantage`` input: its notation, the notice it raises and clears, and what it refuses.

The engine is the record: it raises the notice for the count the daemon computed the edge
on, refuses one computed for other cards than it holds out (stale), and counts out what a
card held aside by an alarm takes out of the shoe.
"""

from __future__ import annotations

import pytest

from baccarat.controller.engine.inputs import Advantage, InputError, notation, parse_input
from baccarat.messages.bodies import AlarmClearedMessage, AlarmMessage
from support.tables import Table, of

NO_BURN = {"burn": "none", "decks": 6}


def crossing(bet: str = "tie", state: str = "on", *, out: int, rnd: int = 1,
             shoe: int = 1, edge: float = 0.0123) -> str:
    return (f"advantage {bet} {state} edge={edge!r} threshold=0.0 shoe={shoe} round={rnd} "
            f"out={out}")


def test_the_notation_reads_back_the_same_input() -> None:
    inp = Advantage(bet="player_pair", on=False, player_edge=-0.000123, threshold=0.02,
                    shoe=3, round=41, cards_out=312, ts=7.5, origin=None)
    assert parse_input(notation(inp), 7.5) == inp
    assert notation(inp) == (
        "advantage player_pair off edge=-0.000123 threshold=0.02 shoe=3 round=41 out=312"
    )


@pytest.mark.parametrize(("line", "why"), [
    ("advantage", "advantage BET on|off"),
    ("advantage big on edge=0 threshold=0 shoe=1 round=1 out=1", "BET one of"),
    ("advantage tie maybe edge=0 threshold=0 shoe=1 round=1 out=1", "'on' or 'off'"),
    ("advantage tie on edge=nan threshold=0 shoe=1 round=1 out=1", "a finite number"),
    ("advantage tie on edge=x threshold=0 shoe=1 round=1 out=1", "a number, not 'x'"),
    ("advantage tie on threshold=0 edge=0 shoe=1 round=1 out=1", "edge= expected"),
    ("advantage tie on edge=0 threshold=0 shoe=1 round=-1 out=1", "a whole number"),
])
def test_a_bad_line_says_what_is_wrong(line: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        parse_input(line)


def test_raised_for_its_round_then_cleared_by_the_edge() -> None:
    table = Table("macau", **NO_BURN)
    table.do("shoe", "2S,3S,4S,5S")  # round 1: player 2+4, banker 3+5 = 8: natural
    raised = table.do(crossing(out=4))
    [notice] = of(raised, "alarm")
    assert isinstance(notice, AlarmMessage)
    assert (notice.kind, notice.round, notice.shoe) == ("advantage", 1, 1)
    assert (notice.correctable, notice.corrections, notice.lasting) == (False, [], False)
    assert "tie: player edge +1.23 %" in notice.text.replace("%", " %")
    assert "after 4 out" in notice.text
    assert of(raised, "alarms") == []  # not an open alarm: it holds nothing up
    assert table.engine.open_alarms() == []
    assert table.engine.advantages() == {"tie"}
    table.do("6S,7S,8S,9S")  # round 2 plays on
    [cleared] = of(table.do(crossing(state="off", out=8, rnd=2)), "alarm_cleared")
    assert isinstance(cleared, AlarmClearedMessage)
    assert (cleared.id, cleared.kind, cleared.by) == (notice.id, "advantage", "edge")
    assert table.engine.advantages() == frozenset()


def test_a_stale_or_repeated_crossing_is_refused() -> None:
    table = Table("macau", **NO_BURN)
    table.do("shoe", "2S,3S,4S,5S")
    assert "4 out: stale" in table.refused(crossing(out=3))
    assert "round 1" in table.refused(crossing(out=4, rnd=2))
    assert "shoe 1" in table.refused(crossing(out=4, shoe=2))
    assert "not standing" in table.refused(crossing(state="off", out=4))
    table.do(crossing(out=4))
    assert "stands already" in table.refused(crossing(out=4))


def test_a_new_shoe_clears_what_stands() -> None:
    table = Table("macau", **NO_BURN)
    table.do("shoe", "2S,3S,4S,5S", crossing(out=4), crossing("banker_pair", out=4))
    cleared = of(table.do("end", "shoe"), "alarm_cleared")
    assert [(m.kind, m.by, m.shoe) for m in cleared] == [("advantage", "shoe", 1)] * 2
    assert table.engine.advantages() == frozenset()


def test_held_aside_cards_are_out_and_unreadable_ones_of_no_known_rank() -> None:
    table = Table("macau", **NO_BURN, open_mode="explicit")
    table.do("shoe", "open", "AS,AH,KS,KH")  # player 2, banker 0: both draw
    left = table.engine.left_by_rank()
    assert left is not None
    assert (left[0], left[12], sum(left)) == (22, 22, 312 - 4)
    table.do("2C,3C")  # P3 and B3: the round is complete
    table.do("QD")  # an extra card before 'open', held aside: out of the shoe
    assert of(table.log, "alarm")[-1].kind == "extra_card"
    left = table.engine.left_by_rank()
    assert left is not None
    assert (left[11], sum(left)) == (23, 312 - 7)
    table.do("accept_as_burn", "open", "unreadable")  # of no known rank: held, not counted
    left = table.engine.left_by_rank()
    shoe = table.engine.shoe
    assert left is not None
    assert shoe is not None
    assert (sum(left), shoe.cards_left) == (312 - 7, 312 - 8)
