"""The engine's side of the seq promise: a ``JournalLost`` input numbers on past the range.

The daemon decides the loss (tests/controller/test_seq_promise.py); the engine takes it as
an input, so that a replay of the journal numbers on the same way, and carries its open
alarm in its counters, so that a journal file's header resumes it.
"""

from __future__ import annotations

import pytest

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import InputError, JournalLost, notation, parse_input
from baccarat.rules.profiles import load_profile

PROFILE = load_profile("macau", burn="none", open_mode="implicit")
TS = 1_700_000_000.5


def dealt() -> Engine:
    engine = Engine(PROFILE)
    for line in ["shoe", "9S", "2H", "KD", "3C"]:
        engine.feed(parse_input(line, TS))
    return engine


def test_numbering_goes_on_past_the_lost_range_and_the_alarm_names_it() -> None:
    engine = dealt()
    made = engine.seq
    out = engine.feed(JournalLost(first=made + 1, last=made + 5, evidence="seq-mark", ts=TS))
    alarm, listed = out.messages
    assert alarm.seq == made + 6  # no seq of the range is taken
    assert alarm.kind == "journal_damaged"
    assert (alarm.lost_first, alarm.lost_last) == (made + 1, made + 5)
    assert alarm.lasting
    assert [a.id for a in listed.alarms] == [alarm.id]
    assert f"seq {made + 1} to {made + 5}" in alarm.text
    assert engine.feed(parse_input("4D", TS)).messages[0].seq == made + 8


def test_a_range_already_numbered_is_refused() -> None:
    engine = dealt()
    outcome = engine.feed(JournalLost(first=engine.seq, last=engine.seq + 2, ts=TS))
    assert outcome.refused is not None
    assert outcome.messages == []


def test_the_notation_round_trips_and_refuses_bad_ranges() -> None:
    lost = JournalLost(first=23, last=30, evidence="seq-mark,broker", ts=TS)
    assert notation(lost) == "journal_lost first=23 last=30 evidence=seq-mark,broker"
    assert parse_input(notation(lost), TS) == lost
    for bad in ["journal_lost first=30 last=23 evidence=seq-mark",
                "journal_lost first=0 last=3 evidence=seq-mark",
                "journal_lost last=3 first=1 evidence=seq-mark",
                "journal_lost first=1 last=3 evidence=Seq#mark"]:
        with pytest.raises(InputError):
            parse_input(bad, TS)


def test_a_file_header_resumes_the_open_alarm_and_the_next_shoe_clears_it_the_same() -> None:
    engine = dealt()
    engine.feed(JournalLost(first=engine.seq + 1, last=engine.seq + 3, ts=TS + 0.123456))
    resumed = Engine.resume(PROFILE, engine.counters())
    assert [a.to_bytes() for a in resumed.open_alarms()] == [
        a.to_bytes() for a in engine.open_alarms()
    ]
    shoe = parse_input("shoe", TS + 1)
    original, again = engine.feed(shoe).messages, resumed.feed(shoe).messages
    assert [m.to_bytes() for m in original] == [m.to_bytes() for m in again]
    assert original[0].type == "alarm_cleared"
    assert engine.open_alarms() == []
    assert engine.counters() == resumed.counters() == {"seq": original[-1].seq,
                                                      "alarm_seq": 1, "shoe": 2}


def test_counters_that_name_no_whole_loss_resume_none() -> None:
    counters = {"seq": 9, "alarm_seq": 1, "shoe": 1, "lost_alarm": 1, "lost_first": 5}
    assert Engine.resume(PROFILE, counters).open_alarms() == []
