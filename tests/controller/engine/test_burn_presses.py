"""Every burn press is evidence (house6, ``burn_press`` required; issue 33).

A press when no burn is due (a second burn, a burn between hands, a press in the middle of
a hand) says the next card is a burn card: it is burned, not dealt, and an ``extra_burn``
alarm holds the round until a person confirms (``declare``) or voids it. Before, the second
press was refused and the second burn card was read as the player's first: the round was
published one card off.
"""

from __future__ import annotations

from support.tables import Table, of

STAND = ("7S", "6H", "KS", "KH")  # Player 7, Banker 6: both stand, player wins
NEXT = ("9D", "2C", "QH", "5S")  # Player 9 (natural), Banker 7: player wins


def pressed_burns() -> Table:
    table = Table("house6", burn="none", decks=2, open_mode="explicit", burn_press="required")
    table.do("shoe")
    return table


def results(table: Table) -> list[tuple[int, str, list[str], list[str]]]:
    return [(r.round, r.winner, r.player.cards, r.banker.cards) for r in of(table.log, "result")]


def test_a_second_burn_with_its_press_is_burned_and_the_pit_confirms_it() -> None:
    """The issue's repro: the second burn card became P1 and the round was one card off."""
    table = pressed_burns()
    out = table.do("by=button open", "by=button announce_burn", "AS",
                   "by=button announce_burn", "4D", *STAND)
    cards = [(c.position, c.card) for c in of(out, "card")]
    assert cards[:3] == [("burn", "AS"), ("burn", "4D"), ("P1", "7S")]
    [alarm] = of(out, "alarm")
    assert (alarm.kind, alarm.round, alarm.card, alarm.corrections) == (
        "extra_burn", 1, "4D", ["declare", "void"])
    assert "again after the round's burn card" in alarm.text
    table.do("by=button reveal", "by=button declare player")
    assert results(table) == []  # the dealer's own declare is no confirmation
    out = table.do("by=pit/ana declare player")
    assert [c.id for c in of(out, "alarm_cleared")] == [alarm.id]
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_two_presses_before_the_burn_card_burn_two_cards() -> None:
    table = pressed_burns()
    out = table.do("by=button open", "by=button announce_burn", "by=button announce_burn",
                   "AS", "4D", *STAND)
    assert [c.position for c in of(out, "card")][:3] == ["burn", "burn", "P1"]
    assert "a second time before" in of(out, "alarm")[0].text


def test_a_press_with_no_card_after_it_holds_the_round_and_the_pit_voids_it() -> None:
    """The press is taken at its word; the hands are one card off, so nothing is published."""
    table = pressed_burns()
    table.do("by=button open", "by=button announce_burn", "AS", "by=button announce_burn")
    out = table.do(*STAND, "by=button reveal", "by=button declare player")
    assert of(out, "card")[0].position == "burn"  # 7S: taken as the pressed burn card
    assert of(out, "alarm")[0].kind == "extra_burn"
    assert results(table) == []
    out = table.do("by=pit/ana void")
    assert of(out, "void")[0].round == 1
    table.do("by=button open", "by=button announce_burn", "3H", *NEXT)
    assert results(table) == [(2, "player", ["9D", "QH"], ["2C", "5S"])]


def test_a_press_in_the_middle_of_a_hand_burns_the_next_card() -> None:
    table = pressed_burns()
    out = table.do("by=button open", "by=button announce_burn", "AS", "7S", "6H",
                   "by=button announce_burn", "4D", "KS", "KH")
    assert [c.position for c in of(out, "card")] == ["burn", "P1", "B1", "burn", "P2", "B2"]
    alarm = of(out, "alarm")[0]
    assert (alarm.kind, alarm.card) == ("extra_burn", "4D")
    assert "in the middle of the hand" in alarm.text
    table.do("by=pit/ana declare player")
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_a_press_between_hands_holds_the_card_before_open() -> None:
    table = pressed_burns()
    table.do("by=button open", "by=button announce_burn", "AS", *STAND)
    table.do("by=button announce_burn")  # between hands: accepted now, as evidence
    out = table.do("4D")
    alarm = of(out, "alarm")[0]
    assert (alarm.kind, alarm.cards) == ("extra_card", ["4D"])  # held aside, as before
    assert table.engine.shoe is not None
    assert table.engine.shoe.extra_burns == []  # the press is used up by that card
    table.do("accept_as_burn", "by=button open", "by=button announce_burn", "3H", *NEXT)
    assert [r[0] for r in results(table)] == [1, 2]


def test_a_press_between_hands_then_open_burns_the_rounds_first_card_and_holds_it() -> None:
    """The press before 'open' cannot say whose burn it was: the round waits for a person."""
    table = pressed_burns()
    table.do("by=button open", "by=button announce_burn", "AS", *STAND)
    table.do("by=button announce_burn", "by=button open")
    out = table.do(*NEXT)  # no press after open, no burn card: burn_skipped, then the press
    assert sorted(a.kind for a in of(out, "alarm")) == ["burn_skipped", "extra_burn"]
    assert of(out, "card")[0].position == "burn"
    assert [r[0] for r in results(table)] == [1]  # nothing shifted is published


def test_presses_past_the_bound_are_refused_as_a_notice() -> None:
    table = pressed_burns()
    table.do("by=button open", "by=button announce_burn")
    for _ in range(8):
        table.do("by=button announce_burn")
    text = table.refused("by=button announce_burn", alarm="signal_refused")
    assert "8 burn presses already wait" in text


def test_open_on_a_complete_round_an_alarm_holds_names_the_alarm_and_its_corrections() -> None:
    """Issue 33, item 2: the refusal says which alarm to settle and how."""
    table = pressed_burns()
    table.do("by=button open", "by=button announce_burn", "AS",
             "by=button announce_burn", "4D", *STAND)
    alarm = of(table.log, "alarm")[-1]
    text = table.refused("by=button open", alarm="signal_refused")
    assert f"settle alarm #{alarm.id} extra_burn first (declare or void)" in text
    assert text == table.refused("by=pit/ana open")  # a person's open: the same answer
