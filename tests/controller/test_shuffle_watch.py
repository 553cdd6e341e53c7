"""The table's shuffle check: a shoe that repeats an earlier shoe's order.

Real tables on a real journal in a temporary folder (the daemon's own ``Table``); the
real daemon with a shoe on a pty is in ``test_shuffle_daemon.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baccarat.cards import Card, shuffled_shoe
from baccarat.chain import split
from baccarat.controller.config import Config, ConfigError, JournalConfig, ShuffleConfig
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import (
    DrawCard,
    InputError,
    NewShoe,
    ShuffleSuspect,
    VoidRound,
    notation,
    parse_input,
)
from baccarat.controller.journal.reader import newest_file, read_journal_file
from baccarat.controller.table import Table
from baccarat.rules.profiles import load_profile


def make_table(folder: Path, shoes: int = 24, profile: str = "macau") -> Table:
    config = Config(
        table="T1", profile=profile, rules={"burn": "none"} if profile == "macau" else {},
        journal=JournalConfig(folder=str(folder), fsync=False),  # speed: no power cut here
        shuffle=ShuffleConfig(shoes=shoes),
    )
    table = Table(config)
    table.recover()
    return table


def notices(table: Table) -> list[dict[str, Any]]:
    bodies = [json.loads(message.payload) for message in table.outbox]
    return [b for b in bodies if b.get("type") == "alarm" and b["kind"] == "shuffle_suspect"]


def deal_shoe(table: Table, cards: list[Card], *, upto: int | None = None) -> list[int]:
    """A new shoe and its cards; the cards (1-based) after which a notice came out."""
    if table.engine.round is not None and not table.engine.round.complete:
        table.handle(VoidRound(confirm=True, ts=1.0))  # the last shoe stopped mid-round
    assert table.handle(NewShoe(ts=1.0)).refused is None
    found = []
    for n, card in enumerate(cards[:upto], 1):
        before = len(table.outbox)
        table.handle(DrawCard(card=card, ts=1.0 + n))
        added = list(table.outbox)[before:]
        if any(b'"kind":"shuffle_suspect"' in m.payload for m in added):
            found.append(n)
    return found


def two_shoes() -> tuple[list[Card], list[Card]]:
    first, second = shuffled_shoe(8, 1), shuffled_shoe(8, 2)
    second[39:59] = first[119:139]
    return first, second


def test_a_shoe_repeating_the_last_one_raises_shuffle_suspect_at_card_49(tmp_path: Path) -> None:
    first, second = two_shoes()
    table = make_table(tmp_path)
    assert deal_shoe(table, first, upto=300) == []
    assert deal_shoe(table, second, upto=100) == [49]
    [notice] = notices(table)
    assert notice["shoe"] == 2
    assert notice["corrections"] == []
    assert notice["lasting"] is False  # a notice: nothing to settle, play goes on
    assert notice["text"].startswith(
        "cards 40-49 of this shoe repeat cards 120-129 of table T1's shoe 1 in the same order"
    )
    assert table.engine.open_alarms() == []
    # the finding is an input of the journal, right after the card that made it certain
    records = [notation(inp) for _, inp in read_journal_file(newest_file(tmp_path)).records]
    at = records.index("shuffle_suspect table=T1 shoe=1 earlier=120-129 now=40-49 cards=10"
                       " gap=none")
    assert records[at - 1] == second[48].code


def test_earlier_shoes_come_from_the_journal_after_a_restart(tmp_path: Path) -> None:
    first, second = two_shoes()
    table = make_table(tmp_path)
    deal_shoe(table, first, upto=300)
    deal_shoe(table, shuffled_shoe(8, 3), upto=300)
    table.journal.close()
    table = make_table(tmp_path)  # a restart: shoes 1 and 2 are older files now
    assert deal_shoe(table, second, upto=60) == [49]
    assert "of table T1's shoe 1 " in notices(table)[-1]["text"]


def test_a_restart_between_the_card_and_its_finding_raises_it_once(tmp_path: Path) -> None:
    first, second = two_shoes()
    table = make_table(tmp_path, shoes=0)  # no check: the card is journaled, no finding
    deal_shoe(table, first, upto=300)
    deal_shoe(table, second, upto=52)
    assert notices(table) == []
    table.journal.close()
    table = make_table(tmp_path)
    assert len(notices(table)) == 1  # raised after the replay
    for n, card in enumerate(second[52:80], 53):
        table.handle(DrawCard(card=card, ts=100.0 + n))
    table.journal.close()
    table = make_table(tmp_path)  # and again: the journal holds it now, no second one
    assert len(notices(table)) == 1  # the replay's copy of the journaled one
    records = [notation(inp) for _, inp in read_journal_file(newest_file(tmp_path)).records]
    assert sum(r.startswith("shuffle_suspect ") for r in records) == 1


def test_the_notice_is_replayed_from_the_journal_byte_for_byte(tmp_path: Path) -> None:
    """Invariant 1: the journal's inputs give every body the table published.

    The notice included: the second shoe's file, replayed from its header's counters as
    recovery does.
    """
    first, second = two_shoes()
    table = make_table(tmp_path)
    deal_shoe(table, first, upto=300)
    deal_shoe(table, second, upto=60)
    table.journal.close()
    newest = read_journal_file(sorted(tmp_path.glob("shoe-*.journal"))[-1])
    assert newest.header is not None
    counters = newest.header.counters
    published = [split(m.payload)[0] for m in table.outbox  # the chain member taken off
                 if m.seq is not None and m.seq > counters["seq"]]
    engine = Engine.resume(load_profile("macau", burn="none"), counters)
    replayed = [m.to_bytes() for _, inp in newest.records for m in engine.feed(inp).messages]
    assert replayed == published
    assert sum(b'"kind":"shuffle_suspect"' in p for p in published) == 1
    # and the notation reads back as the same input
    lines = [f"@{inp.ts!r} {notation(inp)}" for _, inp in newest.records]
    again = [parse_input(line.split(" ", 1)[1], inp.ts)
             for line, (_, inp) in zip(lines, newest.records, strict=True)]
    assert again == [inp for _, inp in newest.records]


def test_a_continuous_shuffler_and_shoes_0_are_not_checked(tmp_path: Path) -> None:
    first, _ = two_shoes()
    for folder, table in ((tmp_path / "a", lambda f: make_table(f, shoes=0)),
                          (tmp_path / "b", lambda f: make_table(f, profile="csm"))):
        made = table(folder)
        assert made.shuffle.index is None
        deal_shoe(made, first, upto=200)
        made.handle(DrawCard(card=first[0], ts=500.0))
        assert notices(made) == []


def test_the_notation_round_trips_and_refuses_bad_lines() -> None:
    for gap in ("none", "extra:44", "missing:124"):
        text = f"shuffle_suspect table=T-1.a shoe=3 earlier=120-129 now=40-50 cards=10 gap={gap}"
        inp = parse_input(text, 5.0)
        assert isinstance(inp, ShuffleSuspect)
        assert notation(inp) == text
    for bad in (
        "shuffle_suspect",
        "shuffle_suspect table=T1 shoe=x earlier=1-2 now=1-2 cards=10 gap=none",
        "shuffle_suspect table=T1 shoe=1 earlier=0-2 now=1-2 cards=10 gap=none",
        "shuffle_suspect table=T1 shoe=1 earlier=1-2 now=1-2 cards=10 gap=sideways:3",
        "shuffle_suspect shoe=1 table=T1 earlier=1-2 now=1-2 cards=10 gap=none",
        "shuffle_suspect table=#1 shoe=1 earlier=1-2 now=1-2 cards=10 gap=none",
    ):
        with pytest.raises(InputError, match="shuffle_suspect"):
            parse_input(bad)


def test_a_bad_shoes_setting_is_refused() -> None:
    with pytest.raises((ConfigError, ValueError), match="shoes"):
        Config(table="T1", shuffle={"shoes": -1})


def test_no_table_may_be_named_floor() -> None:
    """The recorder's findings are on {prefix}/floor/surveillance: no table speaks there."""
    with pytest.raises((ConfigError, ValueError), match="floor recorder speaks"):
        Config(table="floor")
