"""What the engine does with the pit's corrections: confirmed voids, refused new shoes.

And the notation of ``void`` in the journal: old journals, whose every ``void`` was
carried out whatever the round, read back as they were played.
"""

from __future__ import annotations

import zlib

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import VoidRound, parse_input
from baccarat.controller.journal.records import decode_record, encode_record
from baccarat.messages.bodies import AlarmMessage
from baccarat.messages.roads import RoadsMessage
from baccarat.rules.profiles import load_profile
from support.tables import Table, of

ROUND_1 = ("7S", "6H", "KS", "KH")  # player 7, banker 6: both stand, player wins


def test_void_of_a_published_round_needs_confirm() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe", *ROUND_1)
    assert of(table.log, "result")[0].winner == "player"
    error = table.refused("void_unconfirmed dealer button")
    assert "round 1's result (player) is already published" in error
    assert '"confirm": true' in error
    out = table.do("void pit confirmed")
    assert [m.reason for m in of(out, "void")] == ["pit confirmed"]


def test_confirmed_void_takes_the_result_off_the_roads() -> None:
    engine = Engine(load_profile("macau", burn="none", decks=8))
    for line in ("shoe", *ROUND_1):
        outcome = engine.feed(parse_input(line))
        assert outcome.refused is None
    [roads] = [m for m in outcome.messages if isinstance(m, RoadsMessage)]
    assert roads.stats.rounds == 1
    assert engine.feed(VoidRound()).refused is not None
    outcome = engine.feed(VoidRound(confirm=True))
    [roads] = [m for m in outcome.messages if isinstance(m, RoadsMessage)]
    assert (roads.bead_plate.cells, roads.stats.rounds) == ([], 0)


def test_void_of_a_round_not_yet_published_needs_no_confirm() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe", "7S", "6H", "KS")
    assert of(table.do("void_unconfirmed"), "void")[0].round == 1


def test_a_new_shoe_refused_for_a_round_with_an_open_alarm_raises_an_alarm() -> None:
    table = Table("macau", burn="none", decks=8, open_mode="explicit")
    table.do("shoe", "open", "reveal")  # no card yet: missing_card, the round stays open
    error = table.refused("shoe", alarm="shoe_refused")
    assert "round 1 is in progress with open alarm #1 missing_card" in error
    [alarm] = [m for m in table.log if isinstance(m, AlarmMessage) and m.kind == "shoe_refused"]
    assert alarm.text == f"a new shoe was refused: {error}"
    assert alarm.article == "2.1"


def test_void_notation_round_trips_with_its_confirmation() -> None:
    for inp in (
        VoidRound(),
        VoidRound(confirm=True),
        VoidRound("dealer button"),
        VoidRound("pit: wrong card", confirm=True),
    ):
        assert parse_input(inp.to_text()) == inp
        assert decode_record(encode_record(12, inp)[:-1]) == (12, inp)
    assert VoidRound("dealer button").to_text() == "void_unconfirmed dealer button"
    assert VoidRound(confirm=True).to_text() == "void"


def test_an_old_journal_void_of_a_published_round_still_voids_it() -> None:
    """Before confirmation existed, every recorded ``void`` was carried out."""
    old_lines = ["1 - shoe", "2 - 7S", "3 - 6H", "4 - KS", "5 - KH", "6 - void dealer error"]
    engine = Engine(load_profile("macau", burn="none", decks=8))
    voids = []
    for text in old_lines:
        body = text.encode()
        _, inp = decode_record(b"%s *%08x" % (body, zlib.crc32(body)))
        outcome = engine.feed(inp)
        assert outcome.refused is None, outcome.refused
        voids += of(outcome.messages, "void")
    assert [v.reason for v in voids] == ["dealer error"]
