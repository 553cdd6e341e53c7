"""Game recall, device reports and continuing an engine's numbering."""

from __future__ import annotations

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import parse_input
from baccarat.rules.profiles import load_profile
from support.tables import Table, of


def test_recall_keeps_last_ten_rounds_with_every_card_in_order() -> None:
    table = Table("house6", decks=12, burn="none")
    table.do("shoe")
    for _ in range(11):
        table.do("2C", "7S", "6H", "KS", "KH")  # burn, then Player 7 / Banker 6
    recall = of(table.log, "recall")[-1]
    assert len(recall.rounds) == 10
    assert [r.round for r in recall.rounds] == list(range(2, 12))
    last = recall.rounds[-1]
    assert [(c.position, c.card) for c in last.cards] == [
        ("burn", "2C"), ("P1", "7S"), ("B1", "6H"), ("P2", "KS"), ("B2", "KH"),
    ]
    assert (last.status, last.winner, last.player_total, last.banker_total) == (
        "result", "player", 7, 6,
    )


def test_recall_shows_void_rounds_and_replaces_a_shown_round_voided_later() -> None:
    table = Table("macau", burn="none", decks=8, open_mode="explicit")
    table.do("shoe", "open", "7S", "6H", "KS", "KH")
    assert of(table.log, "recall")[-1].rounds[-1].status == "result"
    table.do("9D", "void")  # an extra card; the pit voids the round
    rounds = of(table.log, "recall")[-1].rounds
    assert len(rounds) == 1
    assert rounds[0].status == "void"
    assert rounds[0].winner is None


def test_link_down_and_up() -> None:
    table = Table("macau", burn="none", decks=8)
    alarm = of(table.do("device link_down cable pulled"), "alarm")[0]
    assert (alarm.kind, alarm.text, alarm.correctable) == ("link_down", "cable pulled", False)
    assert table.do("device link_down still down") == []  # one alarm until it is back
    cleared = of(table.do("device link_up ttyUSB0"), "alarm_cleared")[0]
    assert (cleared.id, cleared.by) == (alarm.id, "link_up")
    assert table.do("device link_up again") == []


def test_device_fault_bad_data_and_journal_reports() -> None:
    table = Table("macau", burn="none", decks=8)
    kinds = [
        of(table.do(line), "alarm")[0].kind
        for line in ("device fault 3: reader dirty", "device bad_data 2 bytes: ff 00",
                     "device journal torn tail at byte 1234")
    ]
    assert kinds == ["device_fault", "bad_data", "journal_damaged"]


def test_a_device_hello_is_recorded_and_changes_nothing() -> None:
    """The device's power-up is journaled for its session (PROTOCOL.md 6.4): no message."""
    table = Table("macau", burn="none", decks=8, open_mode="explicit")
    table.do("shoe", "open", "7S")
    hello = parse_input("device hello protocol version 2, session 0x1a2b")
    assert hello.to_text() == "device hello protocol version 2, session 0x1a2b"
    outcome = table.engine.feed(hello)
    assert (outcome.messages, outcome.refused) == ([], None)
    assert of(table.do("6H", "KS", "KH"), "result")  # the round goes on as before


def test_resume_continues_numbering_at_the_next_shoe() -> None:
    profile = load_profile("macau", burn="none")
    first = Engine(profile)
    for line in ("shoe", "7S", "6H", "KS", "KH", "device fault x"):
        first.feed(parse_input(line))
    counters = first.counters()
    assert counters == {"seq": first.seq, "alarm_seq": 1, "shoe": 1}
    again = Engine.resume(profile, counters)
    out = again.feed(parse_input("shoe")).messages
    assert out[0].seq == first.seq + 1
    assert out[0].shoe == 2  # type: ignore[attr-defined]
    alarm = again.feed(parse_input("device fault y")).messages[0]
    assert alarm.id == 2  # type: ignore[attr-defined]
