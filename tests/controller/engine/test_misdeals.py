"""Article 10: every alarm kind raised where it is proved, and every correction."""

from __future__ import annotations

from support.tables import Table, of


def explicit() -> Table:
    table = Table("macau", burn="none", open_mode="explicit", decks=2)
    table.do("shoe")
    return table


def implicit() -> Table:
    table = Table("macau", burn="none", decks=2)
    table.do("shoe")
    return table


STAND = ("7S", "6H", "KS", "KH")  # Player 7, Banker 6: both stand, banker... player wins


def test_extra_card_after_complete_round_is_held_and_burned() -> None:
    table = explicit()
    table.do("open")
    assert of(table.do(*STAND), "result")[0].winner == "player"
    alarm = of(table.do("5D"), "alarm")[0]
    assert alarm.kind == "extra_card"
    assert alarm.correctable is True
    assert alarm.corrections == ["accept_as_burn", "void"]
    assert alarm.card == "5D"
    assert "not closed" in table.refused("burn")  # the alarm keeps round 1 open
    out = table.do("accept_as_burn")
    burned = of(out, "card")[0]
    assert (burned.position, burned.card) == ("burn", "5D")
    assert of(out, "alarm_cleared")[0].by == "accept_as_burn"
    assert of(table.do("open"), "round")[0].round == 2


def test_extra_card_blocks_next_open_until_settled() -> None:
    table = explicit()
    table.do("open", *STAND, "5D")
    assert "not closed" in table.refused("demo on")
    refusal = table.refused("open")  # never guess that the extra card was the next P1
    assert "settle alarm #1 extra_card" in refusal
    table.do("accept_as_burn")
    out = table.do("open", "AS")
    first = of(out, "card")[0]
    assert (first.round, first.position, first.card) == (2, "P1", "AS")


def test_extra_card_void_withdraws_shown_result() -> None:
    table = explicit()
    table.do("open", *STAND, "5D")
    out = table.do("void")
    void = of(out, "void")[0]
    assert void.round == 1
    shoe = of(out, "shoe")[-1]
    assert shoe.rounds == 0  # the void round never counts


def test_card_before_open() -> None:
    table = explicit()
    alarm = of(table.do("9S"), "alarm")[0]
    assert alarm.kind == "card_before_open"
    assert alarm.round is None
    out = table.do("open")
    assert of(out, "card")[0].position == "P1"
    assert of(out, "card")[0].card == "9S"


def test_card_before_open_accepted_as_burn() -> None:
    table = explicit()
    table.do("9S")
    out = table.do("accept_as_burn")
    assert of(out, "card")[0].position == "burn"
    assert of(out, "shoe")[0].cards_burned == 1
    table.do("open")
    assert of(table.do("AS"), "card")[0].position == "P1"


def test_missing_card_on_reveal_then_dealt() -> None:
    table = implicit()
    table.do("2S", "3H", "KS", "KH")  # Player 2 must draw
    alarm = of(table.do("reveal"), "alarm")[0]
    assert alarm.kind == "missing_card"
    assert "P3" in alarm.text
    out = table.do("4D")  # Player draws 4 -> 6; Banker 3 draws on 4
    assert of(out, "alarm_cleared")[0].by == "deal"
    assert of(out, "result") == []
    out = table.do("AD")
    assert of(out, "result")[0].winner == "player"


def test_missing_card_on_declare_then_void() -> None:
    table = implicit()
    table.do("2S", "3H", "KS", "KH")
    alarm = of(table.do("declare banker"), "alarm")[0]
    assert alarm.kind == "missing_card"
    out = table.do("void")
    assert of(out, "void")[0].round == 1
    assert of(out, "result") == []
    # the next card opens round 2
    assert of(table.do("9C"), "round")[0].round == 2


def test_foreign_card_mid_round() -> None:
    table = implicit()  # 2 decks: a third ace of spades is foreign
    table.do("AS", "AS", "7H")
    alarm = of(table.do("AS"), "alarm")[0]
    assert alarm.kind == "foreign_card"
    assert alarm.card == "AS"
    assert alarm.corrections == ["accept_as_burn", "void"]
    out = table.do("8H")  # B2: the round completes, but the alarm withholds the result
    assert of(out, "result") == []
    out = table.do("accept_as_burn")
    assert of(out, "card")[0].position == "burn"
    assert of(out, "result")[0].banker.cards == ["AS", "8H"]
    shoe = of(out, "shoe")[0]
    assert shoe.cards_burned == 0  # a foreign card is not one of the shoe's cards
    assert shoe.cards_dealt + shoe.cards_burned + shoe.cards_left == 104


def test_unreadable_card_mid_round_then_void() -> None:
    table = implicit()
    table.do("AS", "KH")
    alarm = of(table.do("unreadable"), "alarm")[0]
    assert alarm.kind == "unreadable_card"
    assert alarm.correctable
    out = table.do("void")
    assert of(out, "void")
    assert of(out, "alarm_cleared")[0].by == "void"


def test_unreadable_face_up_burn_card() -> None:
    table = Table("macau", decks=8)
    table.do("shoe")
    alarm = of(table.do("unreadable"), "alarm")[0]
    assert alarm.kind == "unreadable_card"
    table.do("accept_as_burn")
    out = table.do("5S")  # the next card is turned up: burn 5 more
    assert of(out, "card")[0].face_up is True
    assert table.engine.shoe is not None
    assert table.engine.shoe.burn_due == 5


def test_result_mismatch_and_correct_declare() -> None:
    table = Table("macau", burn="none", decks=2, reveal="on_reveal")
    table.do("shoe", *STAND)
    alarm = of(table.do("declare banker"), "alarm")[0]
    assert alarm.kind == "result_mismatch"
    assert "player" in alarm.text
    assert of(table.do("reveal"), "result") == []  # an uncorrected alarm: no result
    out = table.do("declare player")
    assert of(out, "alarm_cleared")[0].by == "declare"
    assert of(out, "result")[0].winner == "player"


def test_burn_incomplete() -> None:
    table = Table("macau", burn="decks", decks=6, open_mode="explicit")
    table.do("shoe", "AS", "2S", "3S")
    alarm = of(table.do("open"), "alarm")[0]
    assert alarm.kind == "burn_incomplete"
    assert "3 more" in alarm.text
    assert table.engine.round is None
    out = table.do("4S", "5S", "6S")
    assert of(out, "shoe")[-1].phase == "ready"
    assert of(table.do("open"), "round")


def test_shoe_closed() -> None:
    table = implicit()
    table.do(*STAND, "end")
    alarm = of(table.do("9D"), "alarm")[0]
    assert alarm.kind == "shoe_closed"
    assert alarm.correctable is False
    assert "has ended" in table.refused("open")


def test_demo_limit() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe")
    for _ in range(3):
        table.do("demo on", *STAND)
    results = of(table.log, "result")
    assert all(r.demo for r in results)
    alarm = of(table.do("demo on"), "alarm")[0]
    assert alarm.kind == "demo_limit"
    result = of(table.do("8S", "6H", "KS", "KH"), "result")[0]
    assert result.demo is False


def test_three_demo_rounds_switch_themselves_off() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe")
    table.do("demo on")
    for _ in range(3):
        table.do(*STAND)
    assert [r.demo for r in of(table.log, "result")] == [True, True, True]
    assert of(table.do(*STAND), "result")[0].demo is False
    assert of(table.log, "shoe")[-1].rounds == 1


# ---------------------------------------------------------------- issue 13's three repros

def words(text: str) -> list[str]:
    return text.split()


REPRO_A = words("shoe 5C 2D open 3C 4H 6C 7C open KC KD 6H 6D")
REPRO_B = words("shoe AC 2D KC KD 6H 6D unreadable 5C 5D 3H 3S accept_as_burn")
REPRO_C = words(
    "shoe 2C 3C 4C 5C 6C 7C 8C 9C TC KC KD 6H 6D unreadable 9S 2H KD 3C 4C 8D KH JS 7C"
)


def test_burn_incomplete_clears_when_the_burn_is_done() -> None:
    table = Table("macau")  # the face-up 5C: burn 5 more
    table.do(*REPRO_A[:3])
    alarm = of(table.do("open"), "alarm")[0]
    assert (alarm.kind, alarm.corrections) == ("burn_incomplete", ["burn"])
    assert "4 more" in alarm.text
    assert "burn 4 more card(s) from the shoe" in table.refused("burn")
    assert "burn_incomplete" in table.refused("open")  # one alarm, not one per press
    out = table.do("3C", "4H", "6C")
    assert of(out, "alarm_cleared") == []
    out = table.do("7C")  # the last card of the burn settles it
    cleared = of(out, "alarm_cleared")[0]
    assert (cleared.id, cleared.by) == (alarm.id, "burn")
    assert of(out, "shoe")[-1].phase == "ready"
    out = table.do(*REPRO_A[8:])
    assert of(out, "result")[0].winner == "tie"
    assert table.engine.shoe is not None
    assert table.engine.shoe.alarms == []


def test_burn_incomplete_after_a_house_burn_clears_too() -> None:
    table = Table("macau", burn="none", open_mode="explicit", decks=8)
    table.do("shoe", "burn 2")
    alarm = of(table.do("open"), "alarm")[0]
    assert alarm.kind == "burn_incomplete"
    out = table.do("2S", "3S")
    assert of(out, "alarm_cleared")[0].id == alarm.id
    assert of(table.do("open"), "round")[0].status == "open"


def test_unreadable_first_card_after_a_round_is_held_by_the_round_it_opens() -> None:
    table = Table("macau")
    table.do(*REPRO_B[:7])
    out = table.do("unreadable")
    alarm = of(out, "alarm")[0]
    assert (alarm.kind, alarm.round, alarm.corrections) == (
        "unreadable_card", 2, ["accept_as_burn", "void"],
    )
    assert of(out, "round")[0].round == 2  # the card opened round 2
    out = table.do("5C", "5D", "3H", "3S")  # round 2 is complete: a tie 8-8, not shown yet
    assert of(out, "result") == []
    out = table.do("accept_as_burn")
    assert of(out, "alarm_cleared")[0].id == alarm.id
    result = of(out, "result")[0]
    assert (result.round, result.winner, result.player.cards) == (2, "tie", ["5C", "3H"])
    assert [c.card for c in of(out, "card")] == [None]  # the unreadable card, burned


def test_unreadable_first_card_after_a_round_void_voids_that_round_not_the_last() -> None:
    table = Table("macau")
    table.do(*REPRO_B[:8])
    out = table.do("void")
    assert of(out, "void")[0].round == 2
    assert of(out, "alarm_cleared")[0].by == "void"
    assert [r.round for r in of(table.log, "result")] == [1]  # round 1's tie stands
    assert of(table.do("5C", "5D", "3H", "3S"), "result")[0].round == 3


def test_foreign_first_card_after_a_round_is_held_by_the_round_it_opens() -> None:
    table = Table("macau", burn="none", decks=1)
    table.do("shoe", "KC", "KD", "6H", "6D")
    alarm = of(table.do("KC"), "alarm")[0]  # a second king of clubs in a 1-deck shoe
    assert (alarm.kind, alarm.round, alarm.corrections) == (
        "foreign_card", 2, ["accept_as_burn", "void"],
    )
    assert of(table.do("5C", "5D", "3H", "3S"), "result") == []
    out = table.do("accept_as_burn")
    assert of(out, "result")[0].player.cards == ["5C", "3H"]


def test_house6_unreadable_round_burn_card_is_just_burned() -> None:
    table = Table("house6")
    table.do(*REPRO_C[:14])
    out = table.do("unreadable")
    assert of(out, "alarm") == []
    burn = of(out, "card")[0]
    assert (burn.round, burn.position, burn.card) == (2, "burn", None)
    out = table.do(*REPRO_C[15:19])
    result = of(out, "result")[0]
    assert (result.winner, result.player.total, result.banker.total) == ("player", 9, 5)
    assert (result.player.cards, result.banker.cards) == (["9S", "KD"], ["2H", "3C"])
    out = table.do(*REPRO_C[19:])
    assert [c.position for c in of(out, "card")] == ["burn", "P1", "B1", "P2", "B2"]


# ---------------------------------------------------------------- declare and reveal


def test_declare_while_another_alarm_is_open_is_judged_against_the_cards() -> None:
    table = explicit()
    table.do("open", *STAND, "5D")  # extra card held by round 1
    assert table.do("declare player") == []  # agrees with the cards: nothing to say
    mismatch = of(table.do("declare banker"), "alarm")[0]  # judged, not refused and lost
    assert (mismatch.kind, mismatch.round) == ("result_mismatch", 1)
    table.do("accept_as_burn")
    assert of(table.do("declare player"), "alarm_cleared")[0].by == "declare"


def test_a_second_wrong_declare_is_refused_not_ignored() -> None:
    table = Table("macau", burn="none", decks=2, reveal="on_reveal")
    table.do("shoe", *STAND, "declare banker")
    reason = table.refused("declare tie")
    assert "result_mismatch" in reason
    assert "player" in reason  # what the cards say
    assert of(table.do("declare player"), "alarm_cleared")


def test_a_second_early_declare_is_kept_and_a_second_reveal_refused() -> None:
    table = implicit()
    table.do("2S", "3H", "KS", "KH", "reveal")
    out = table.do("declare banker")  # kept: the due card may no longer settle the alarm
    assert of(out, "alarm") == []
    [listed] = of(out, "alarms")[0].alarms
    assert (listed.kind, listed.corrections) == ("missing_card", ["declare", "void"])
    assert "P3" in table.refused("reveal")


def test_a_shoe_ended_during_its_burn_settles_burn_incomplete() -> None:
    table = Table("house6")
    table.do("shoe", "2C")
    alarm = of(table.do("open"), "alarm")[0]
    cleared = of(table.do("end"), "alarm_cleared")[0]
    assert (cleared.id, cleared.by) == (alarm.id, "end")
    table.do("shoe", "2C")
    alarm = of(table.do("open"), "alarm")[0]
    cleared = of(table.do("shoe"), "alarm_cleared")[0]  # a new shoe: the old burn is moot
    assert (cleared.id, cleared.by, cleared.shoe) == (alarm.id, "shoe", 2)


def test_a_new_shoe_waits_for_a_card_the_old_one_holds() -> None:
    table = explicit()
    table.do("9S")  # card_before_open, held by the shoe
    assert "settle alarm #1 card_before_open" in table.refused("shoe", alarm="shoe_refused")
    table.do("accept_as_burn", "shoe")
