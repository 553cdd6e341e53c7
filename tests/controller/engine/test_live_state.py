"""Live state for late joiners: the open alarms list, the round with its cards, coalescing."""

from __future__ import annotations

from baccarat.controller.engine import alarms
from baccarat.messages.bodies import AlarmMessage
from support.tables import Table, of

STAND = ("7S", "6H", "KS", "KH")  # Player 7, Banker 6: both stand, player wins


def explicit() -> Table:
    table = Table("macau", burn="none", open_mode="explicit", decks=2)
    table.do("shoe")
    return table


def listed(table: Table) -> list[tuple[int, str, int]]:
    """(id, kind, count) of each alarm on the last ``alarms`` message."""
    last = of(table.log, "alarms")[-1]
    return [(a.id, a.kind, a.count) for a in last.alarms]


def test_a_correctable_alarm_is_listed_until_settled() -> None:
    table = explicit()
    out = table.do("open", *STAND, "5D")
    assert of(out, "alarms")[0].alarms == of(out, "alarm")
    assert listed(table) == [(1, "extra_card", 1)]
    assert [a.id for a in table.engine.open_alarms()] == [1]
    out = table.do("accept_as_burn")
    assert of(out, "alarms")[0].alarms == []
    assert out[-1].type != "alarms" or out[-1].alarms == []


def test_link_down_is_listed_until_link_up_and_one_off_alarms_never() -> None:
    table = explicit()
    out = table.do("device link_down cable pulled")
    assert listed(table) == [(1, "link_down", 1)]
    assert of(out, "alarm")[0].lasting is True
    assert table.do("device link_down still down") == []  # one alarm until it is back
    out = table.do("device bad_data 3 byte(s) rejected: ff00ff")
    assert of(out, "alarm")[0].lasting is False
    assert of(out, "alarms") == []  # a one-off notice changes no open alarm
    table.do("open", *STAND, "5D")
    assert listed(table) == [(1, "link_down", 1), (3, "extra_card", 1)]
    out = table.do("device link_up")
    assert of(out, "alarm_cleared")[0].id == 1
    assert listed(table) == [(3, "extra_card", 1)]


def test_void_settles_every_alarm_of_the_round_in_one_alarms_message() -> None:
    table = Table("macau", burn="none", open_mode="explicit", decks=1)
    table.do("shoe", "open", *STAND, "5D", "AS")  # two extra cards: coalesced
    assert listed(table) == [(1, "extra_card", 2)]
    table.do("AS")  # the second ace of spades of a 1-deck shoe: foreign
    assert listed(table) == [(1, "extra_card", 2), (2, "foreign_card", 1)]
    out = table.do("void")
    assert len(of(out, "alarm_cleared")) == 2
    assert [m.alarms for m in of(out, "alarms")] == [[]]


def test_cards_dealt_into_a_blocked_round_are_coalesced_into_one_alarm() -> None:
    table = explicit()
    table.do("open", *STAND)
    cards = [f"{rank}{suit}" for suit in "SHDC" for rank in "A23456789TJQK"] * 3
    extra = [c for c in cards if c not in STAND][:140]  # 2 decks: at most 2 of each
    counts: dict[str, int] = {}
    held = []
    for card in extra:
        if counts.get(card, 0) + STAND.count(card) < 2:
            counts[card] = counts.get(card, 0) + 1
            held.append(card)
    table.do(*held)
    raised = of(table.log, "alarm")
    assert [(a.id, a.count, a.cards) for a in raised] == [(1, 1, [held[0]])]  # raised once
    last: AlarmMessage = of(table.log, "alarms")[-1].alarms[0]
    assert (last.id, last.seq, last.count, last.cards) == (1, raised[0].seq, len(held), held)
    assert len(of(table.log, "alarms")) == len(held)  # the open entry, at each card
    assert len(last.text) < 300, last.text
    assert f"{len(held)} cards held aside: {held[0]}, {held[1]}, {held[2]} and" in last.text
    refusal = table.refused("open")
    assert f"#1 extra_card ({len(held)} cards)" in refusal
    assert len(refusal) < 200, refusal
    out = table.do("accept_as_burn")  # one card per correction, the oldest first
    assert of(out, "card")[0].card == held[0]
    assert of(out, "alarm") == []
    assert listed(table) == [(1, "extra_card", len(held) - 1)]
    assert of(out, "alarms")[0].alarms[0].card == held[1]
    for _ in held[1:]:
        out = table.do("accept_as_burn")
    assert of(out, "alarm_cleared")[0].id == 1
    assert of(out, "alarms")[0].alarms == []
    assert of(table.do("open"), "round")[0].round == 2


def test_a_refusal_names_at_most_three_alarms() -> None:
    text = alarms.listed([(n, "extra_card", 1) for n in range(1, 141)])
    assert text == "#1 extra_card, #2 extra_card, #3 extra_card and 137 more"
    assert alarms.listed([(4, "extra_card", 2)]) == "#4 extra_card (2 cards)"


def test_cards_before_open_coalesce_and_all_go_to_the_round_that_opens() -> None:
    table = explicit()
    table.do("7S", "6H")
    assert listed(table) == [(1, "card_before_open", 2)]
    out = table.do("open")
    assert [(c.position, c.card) for c in of(out, "card")] == [("P1", "7S"), ("B1", "6H")]
    assert of(out, "alarms")[0].alarms == []


def test_the_round_message_carries_the_cards_so_far_totals_and_what_is_due() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe")
    out = table.do("7S")
    opened, now = of(out, "round")
    assert (opened.status, opened.cards, opened.next) == ("open", [], "P1")
    assert [(c.position, c.card) for c in now.cards] == [("P1", "7S")]
    assert (now.status, now.player_total, now.banker_total, now.next) == ("open", 7, 0, "B1")
    now = of(table.do("6H"), "round")[0]
    assert [c.card for c in now.cards] == ["7S", "6H"]
    assert (now.player_total, now.banker_total, now.next) == (7, 6, "P2")
    table.do("KS")
    closed = of(table.do("KH"), "round")
    assert len(closed) == 1  # the last card closes the round: one round message
    assert closed[0].status == "complete"
    assert [c.card for c in closed[0].cards] == ["7S", "6H", "KS", "KH"]
    assert (closed[0].player_total, closed[0].banker_total, closed[0].next) == (7, 6, None)


def test_the_round_message_shows_held_and_burned_cards_as_the_card_topic_does() -> None:
    table = explicit()
    table.do("open", "7S", "6H", "KS", "5D")  # KS dealt as P2, 5D as B2: banker 1
    rnd = of(table.log, "round")[-1]
    assert [c.position for c in rnd.cards] == ["P1", "B1", "P2", "B2"]
    assert rnd.next == "B3"


def test_a_squeeze_table_shows_no_card_nor_what_is_due_before_reveal() -> None:
    table = Table("macau", burn="none", decks=8, reveal="on_reveal")
    table.do("shoe")
    shown = [m for card in STAND for m in of(table.do(card), "round")]
    assert [(m.cards, m.next, m.player_total) for m in shown] == [([], "P1", None)]  # opened
    revealed = of(table.do("reveal"), "round")[-1]
    assert [c.card for c in revealed.cards] == list(STAND)
    assert revealed.status == "complete"


def test_alarms_message_for_the_table_takes_no_seq_and_appends_extra_ones() -> None:
    table = explicit()
    table.do("open", *STAND, "5D")
    seq = table.engine.seq
    extra = AlarmMessage(
        seq=seq, id=0, kind="journal_damaged", article="device", correctable=False,
        corrections=[], shoe=None, round=None, text="disk full", lasting=True,
    )
    body = table.engine.alarms_message([extra])
    assert (body.seq, [a.kind for a in body.alarms]) == (seq, ["extra_card", "journal_damaged"])
    assert table.engine.seq == seq
    assert table.engine.alarms_message().alarms == table.engine.open_alarms()
