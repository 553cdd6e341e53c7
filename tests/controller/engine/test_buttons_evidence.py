"""The dealer's buttons are evidence: ``open`` mid-round, ``declare`` kept, ``reveal`` then more.

Each of these shifted a round, or lost a press, before.
"""

from __future__ import annotations

from baccarat.controller.config import Config
from support.tables import Table, of

STAND = ("7S", "6H", "KS", "KH")  # Player 7, Banker 6: both stand, player wins
NEXT = ("9D", "2C", "QH", "5S")  # Player 9 (natural), Banker 7: player wins


def implicit() -> Table:
    table = Table("macau", burn="none", decks=2)
    table.do("shoe")
    return table


def explicit() -> Table:
    table = Table("macau", burn="none", decks=2, open_mode="explicit")
    table.do("shoe")
    return table


def results(table: Table) -> list[tuple[int, str, list[str], list[str]]]:
    return [(r.round, r.winner, r.player.cards, r.banker.cards) for r in of(table.log, "result")]


# ---------------------------------------------------------------- open in a round


def test_an_extra_card_that_implicit_mode_took_for_the_next_round_is_caught_by_open() -> None:
    """The issue's repro: the extra card became round 2's P1 and shifted every round."""
    table = implicit()
    table.do("by=button open", *STAND)  # round 1, published
    table.do("4D")  # an extra card: implicit mode opens round 2 with it
    missing = of(table.do("by=button reveal"), "alarm")[0]
    assert missing.kind == "missing_card"
    table.do("by=button declare player")  # the dealer's declare of round 1: kept, not lost
    out = table.do("by=button open")  # the dealer opens his round 2
    alarm = of(out, "alarm")[0]
    assert (alarm.kind, alarm.round, alarm.cards) == ("open_in_round", 2, ["4D"])
    assert alarm.corrections == ["accept_as_burn", "void"]
    assert [(c.id, c.by) for c in of(out, "alarm_cleared")] == [(missing.id, "open")]
    assert of(out, "round")[-1].cards == []  # round 2 starts again from P1
    table.do(*NEXT)  # his round 2, dealt while the pit has not looked yet
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]  # blocked
    out = table.do("accept_as_burn")  # the pit: the 4D was round 1's extra card
    assert (of(out, "card")[0].position, of(out, "card")[0].card) == ("burn", "4D")
    assert results(table)[-1] == (2, "player", ["9D", "QH"], ["2C", "5S"])  # not shifted


def test_void_of_an_interrupted_round_keeps_the_round_the_dealer_opened() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "KS")  # B2 never comes: the dealer gives up on it
    table.do("reveal", "declare player", "open")
    alarm = of(table.log, "alarm")[-1]
    assert (alarm.kind, alarm.cards) == ("open_in_round", ["7S", "6H", "KS"])
    out = table.do("void")  # the pit voids the unfinished round; the press stands
    assert of(out, "void")[0].round == 1
    assert [(r.round, r.status) for r in of(out, "round")][-1] == (2, "open")
    table.do(*NEXT)
    assert results(table) == [(2, "player", ["9D", "QH"], ["2C", "5S"])]


def test_void_after_cards_came_into_the_restarted_round_voids_them_too() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "reveal", "open", "9D")  # a card since the press
    out = table.do("void")
    assert of(out, "void")[0].round == 1
    assert [r for r in of(out, "round") if r.status == "open"] == []  # nothing reopened
    assert "card_before_open" in [a.kind for a in of(table.do("2C"), "alarm")]


def test_open_in_a_round_with_only_its_burn_starts_the_burn_again() -> None:
    """house6, implicit: an extra card became the next round's burn card."""
    table = Table("house6", burn="none")
    table.do("shoe", "by=button open", "AS", *STAND)  # round 1: burn AS, then the cards
    table.do("4D", "by=button reveal")  # 4D: round 2's burn; reveal: P1 is due
    out = table.do("by=button open")
    notice = of(out, "alarm")[0]
    assert (notice.kind, notice.correctable, notice.round) == ("open_in_round", False, 2)
    assert of(out, "alarm_cleared")[0].by == "open"  # the missing_card of the reveal
    table.do("3H", *NEXT)  # his burn card, then his round
    assert results(table)[-1] == (2, "player", ["9D", "QH"], ["2C", "5S"])


def test_a_second_press_of_open_before_any_card_is_refused_as_before() -> None:
    table = explicit()
    table.do("open")
    assert "already open" in table.refused("open")


def test_the_dealers_second_open_refused_is_a_notice_the_pit_reads() -> None:
    """A press the engine cannot take is evidence too: a one-off notice, not a log line."""
    table = explicit()
    table.do("by=button open")
    text = table.refused("by=button open", alarm="signal_refused")
    notice = of(table.log, "alarm")[-1]
    assert notice.text == f"the dealer's 'open' was refused: {text}"
    assert notice.corrections == []
    assert table.engine.open_alarms() == []


def test_the_dealers_open_on_a_complete_round_an_alarm_blocks_names_that_alarm() -> None:
    table = explicit()
    table.do("by=button open", *STAND, "by=button declare banker")  # result_mismatch
    blocking = of(table.log, "alarm")[-1]
    assert blocking.kind == "result_mismatch"
    text = table.refused("by=button open", alarm="signal_refused")
    assert f"#{blocking.id}" in text
    assert "not closed" in text
    assert [a.id for a in table.engine.open_alarms()] == [blocking.id]  # still waits


def test_a_second_reveal_while_a_card_is_due_is_a_notice_naming_the_card() -> None:
    table = explicit()
    table.do("by=button open", "7S", "6H", "KS", "by=button reveal")  # missing_card
    text = table.refused("by=button reveal", alarm="signal_refused")
    assert "deal B2" in text
    assert "'reveal'" in of(table.log, "alarm")[-1].text


def test_the_dealers_void_of_a_published_round_is_a_notice_not_a_void() -> None:
    table = explicit()
    table.do("by=button open", *STAND)
    text = table.refused("by=button void_unconfirmed dealer button", alarm="signal_refused")
    assert "already published" in text
    assert "the dealer's 'void' was refused" in of(table.log, "alarm")[-1].text
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_a_cut_card_the_profile_has_none_of_is_a_notice() -> None:
    table = Table("csm", decks=2)  # an automatic shuffler: no cut card
    table.do("shoe")
    assert "no cut card" in table.refused("cut", alarm="signal_refused")
    assert of(table.log, "alarm")[-1].text.startswith("the shoe's cut card was refused")


def test_a_persons_refused_command_is_answered_not_raised() -> None:
    table = explicit()
    table.do("by=pit/ana open")
    assert "already open" in table.refused("by=pit/ana open")  # its reply says it; no alarm


# ---------------------------------------------------------------- declare kept


def test_a_declare_before_the_last_card_is_kept_and_judged_when_it_comes() -> None:
    table = explicit()
    table.do("open", "7S", "6H")
    missing = of(table.do("by=button declare banker"), "alarm")[0]
    assert missing.kind == "missing_card"
    assert of(table.do("KS"), "alarm_cleared")[0].id == missing.id  # no press since: a deal
    mismatch = of(table.do("KH"), "alarm")[0]  # complete: the kept declare is judged
    assert (mismatch.kind, mismatch.round) == ("result_mismatch", 1)
    assert "before the round was complete" in mismatch.text
    assert results(table) == []
    table.do("declare player")
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_a_kept_declare_that_agrees_lets_the_result_out() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "by=button declare player", "KS", "KH")
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]
    assert [a.kind for a in of(table.log, "alarm")] == ["missing_card"]


# ---------------------------------------------------------------- reveal, then cards and presses


def test_a_card_after_reveal_settles_missing_card_when_no_press_came_between() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "KS", "reveal")
    assert of(table.do("KH"), "alarm_cleared")[0].by == "deal"
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_a_card_after_reveal_and_declare_is_no_proof_a_person_settles_it() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "KS", "by=button reveal", "by=button declare player")
    assert of(table.do("KH"), "alarm_cleared") == []  # the card does not settle it
    assert results(table) == []
    assert of(table.do("by=button declare player"), "alarm_cleared") == []  # nor the dealer
    out = table.do("by=pit/ana declare player")  # a person has looked at the table
    assert [c.by for c in of(out, "alarm_cleared")] == ["declare"]
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_reveal_then_open_restarts_the_round_and_holds_its_cards() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "KS", "reveal", "open")
    assert of(table.log, "alarm")[-1].kind == "open_in_round"
    table.do(*NEXT)
    assert results(table) == []  # held cards block the result until the pit decides
    for _ in range(3):
        table.do("accept_as_burn")
    assert results(table) == [(1, "player", ["9D", "QH"], ["2C", "5S"])]


# ---------------------------------------------------------------- counting


def test_cards_held_aside_are_out_of_the_shoe_at_once() -> None:
    table = explicit()
    table.do("open", *STAND)
    left = of(table.log, "shoe")[-1].cards_left
    out = table.do("5D")  # an extra card, held aside
    assert of(out, "shoe")[-1].cards_left == left - 1
    out = table.do("5C")  # coalesced into the same alarm: still counted
    assert of(out, "shoe")[-1].cards_left == left - 2


def test_reveal_of_the_shoes_last_round_is_not_refused() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "cut", "KS", "KH")  # the cut card: this round is the last
    assert of(table.log, "shoe")[-1].phase == "closed"
    assert table.do("reveal") == []  # the dealer's button after the last round: no refusal


def test_the_dealers_open_after_a_card_before_open_does_not_take_that_card() -> None:
    """Left over from a burn that ran into a round: the card came before his press."""
    table = explicit()
    alarm = of(table.do("9S"), "alarm")[0]
    assert alarm.kind == "card_before_open"
    out = table.do("by=button open", *NEXT)
    assert of(out, "alarm_cleared") == []  # still held aside by the shoe
    assert results(table) == [(1, "player", ["9D", "QH"], ["2C", "5S"])]
    assert of(table.do("accept_as_burn"), "alarm_cleared")[0].id == alarm.id


def test_the_pits_open_takes_a_card_before_open_for_the_round() -> None:
    table = explicit()
    table.do("9D", "by=pit/ana open", *NEXT[1:])  # the dealer forgot to press it
    assert results(table) == [(1, "player", ["9D", "QH"], ["2C", "5S"])]


def test_accept_as_burn_of_one_alarm_leaves_another_alarms_card_held() -> None:
    """The pit burns the extra card; the foreign card before it stays held.

    That card shifted the round: the round must still be voidable.
    """
    table = Table("macau", burn="none", decks=1, open_mode="explicit")
    table.do("shoe", "open", "7S")
    foreign = of(table.do("7S"), "alarm")[0]  # a second 7S in a one-deck shoe
    table.do("6H", "KS", "KH")
    extra = of(table.do("5D"), "alarm")[0]
    out = table.do(f"accept_as_burn {extra.id}")
    assert [(c.position, c.card) for c in of(out, "card")] == [("burn", "5D")]
    assert [a.id for a in of(out, "alarms")[-1].alarms] == [foreign.id]
    assert "#99 is not open" in table.refused("accept_as_burn 99")


# ---------------------------------------------------------------- implicit mode's blind spot


def test_a_line_shoe_cannot_tell_an_extra_card_from_the_next_rounds_first() -> None:
    """The named risk (docs/operators.md), pinned: with no button, an extra card opens a round.

    A line shoe's table runs implicit (``auto``). The extra card 4D after round 1 becomes
    round 2's P1 with no alarm, and round 2 is published one card off. This test is here
    so that a change which makes it worse (or better) is seen and docs/operators.md said again.
    """
    config = Config(table="T1", device={"kind": "serial", "path": "/dev/null",
                                        "protocol": "line"}, rules={"burn": "none"})
    table = Table("macau", **config.rules, open_mode=config.rule_profile().open_mode)
    assert "cards only" in config.open_mode_reason()
    table.do("shoe", *STAND, "4D", *NEXT)
    assert of(table.log, "alarm") == []
    assert results(table) == [
        (1, "player", ["7S", "KS"], ["6H", "KH"]),
        (2, "banker", ["4D", "2C"], ["9D", "QH"]),  # his round was 9D QH / 2C 5S: player
    ]
    rnd = of(table.log, "round")[-1]
    assert (rnd.round, rnd.cards[-1].card) == (3, "5S")  # and the shift goes on


def test_the_open_mode_and_why_as_the_daemon_logs_it() -> None:
    def reason(protocol: str | None, **rules: str) -> str:
        device = ({"kind": "none"} if protocol is None
                  else {"kind": "serial", "path": "/dev/null", "protocol": protocol})
        return Config(table="T1", device=device, rules=rules).open_mode_reason()

    assert reason("framed") == (
        "rounds open on the dealer's 'open' (open_mode explicit): "
        "the framed device sends the dealer's buttons"
    )
    assert reason("line").startswith("rounds open with their first card (open_mode implicit)")
    assert "no device" in reason(None)
    assert reason("framed", open_mode="implicit").endswith("as the configuration sets it")
    assert reason("line", open_mode="explicit").startswith("rounds open on the dealer's 'open'")


# ---------------------------------------------------------------- the burn button (house6)


def pressed_burns() -> Table:
    """house6 as a framed shoe runs it: a round's burn card only after the burn button."""
    table = Table("house6", burn="none", decks=2, open_mode="explicit", burn_press="required")
    table.do("shoe")
    return table


def test_a_round_burn_after_the_burn_button_is_taken_as_before() -> None:
    table = pressed_burns()
    out = table.do("by=button open", "by=button announce_burn", "AS", *STAND)
    first = of(out, "card")[0]
    assert (first.position, first.card) == ("burn", "AS")
    assert of(out, "alarm") == []
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_a_round_dealt_without_the_burn_button_is_not_shifted_and_waits_for_a_person() -> None:
    """The named risk of house6: a skipped round burn took P1 for the burn card."""
    table = pressed_burns()
    out = table.do("by=button open", *STAND)  # the dealer skipped the burn, and its press
    alarm = of(out, "alarm")[0]
    assert (alarm.kind, alarm.round, alarm.corrections) == ("burn_skipped", 1, ["declare", "void"])
    assert [c.position for c in of(out, "card")] == ["P1", "B1", "P2", "B2"]  # not shifted
    assert results(table) == []  # the result waits
    table.do("by=button reveal", "by=button declare player")
    assert results(table) == []  # the dealer's own declare does not settle it
    out = table.do("by=pit/ana declare player")  # a person looked at the table
    assert [c.by for c in of(out, "alarm_cleared")] == ["declare"]
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]


def test_a_pit_who_sees_another_table_voids_a_round_dealt_without_the_burn_button() -> None:
    table = pressed_burns()
    table.do("by=button open", *STAND)
    mismatch = of(table.do("by=pit/ana declare banker"), "alarm")[0]
    assert mismatch.kind == "result_mismatch"
    table.do("by=pit/ana void")
    assert results(table) == []
    table.do("by=button open", "by=button announce_burn", "3H", *NEXT)  # the next goes on
    assert results(table) == [(2, "player", ["9D", "QH"], ["2C", "5S"])]


def test_the_burn_button_twice_or_late_is_evidence_not_a_notice() -> None:
    """Issue 33: each press says the next card is a burn card (test_burn_presses.py)."""
    table = pressed_burns()
    table.do("by=button open", "by=button announce_burn", "by=button announce_burn")
    out = table.do("AS", "4D", "7S", "by=button announce_burn", "3H")
    assert [c.position for c in of(out, "card")] == ["burn", "burn", "P1", "burn"]
    assert [a.kind for a in of(out, "alarm")] == ["extra_burn", "extra_burn"]


def test_the_burn_button_is_ignored_where_the_profile_does_not_require_it() -> None:
    table = Table("house6", burn="none", decks=2, open_mode="explicit")  # auto: a replay
    out = table.do("shoe", "by=button open", "AS", *STAND, "by=button announce_burn")
    assert of(out, "card")[0].position == "burn"  # the first card is the burn, as before
    assert [a.kind for a in of(out, "alarm")] == []


def test_a_framed_shoe_requires_the_burn_button_a_line_shoe_cannot_send_it() -> None:
    def resolved(protocol: str) -> str:
        config = Config(table="T1", profile="house6",
                        device={"kind": "serial", "path": "/dev/null", "protocol": protocol})
        return config.rule_profile().burn_press

    assert (resolved("framed"), resolved("line")) == ("required", "ignored")
    text = Config(table="T1", profile="house6",
                  device={"kind": "serial", "path": "/dev/null", "protocol": "framed"}
                  ).open_mode_reason()
    assert "burn_press required" in text


def test_a_burn_press_before_open_announces_nothing_for_the_round_it_opens() -> None:
    """Found by the property test: a press between rounds let a later skipped burn shift.

    Since issue 33 the press is evidence that the next card is a burn card: the round's
    first card is burned, and the round waits for a person on both alarms.
    """
    table = pressed_burns()
    table.do("by=button open", "by=button announce_burn", "AS", *STAND)  # round 1
    table.do("by=button announce_burn")
    out = table.do("by=button open", *NEXT)  # round 2 dealt without its burn
    assert [a.kind for a in of(out, "alarm")] == ["burn_skipped", "extra_burn"]
    assert of(out, "card")[0].position == "burn"
    assert results(table) == [(1, "player", ["7S", "KS"], ["6H", "KH"])]  # nothing shifted
