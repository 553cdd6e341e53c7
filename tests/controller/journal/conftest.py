"""Fixtures for the journal tests: real files in a temporary folder, no mocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.controller.engine.inputs import (
    AcceptAsBurn,
    Burn,
    CutCardSeen,
    Declare,
    Demo,
    DeviceReport,
    DrawCard,
    EndShoe,
    Exposed,
    Input,
    NewShoe,
    OpenRound,
    Reveal,
    VoidRound,
)
from baccarat.controller.journal.writer import Journal

EVERY_INPUT: list[Input] = [
    NewShoe(),
    NewShoe(decks=8, ts=1718000000.123456),
    DrawCard(parse_card("4S"), ts=1718000001.5),
    DrawCard(parse_card("KH"), ts=1718000002.1234567891),  # more than 6 decimals
    DrawCard(None, ts=0.0),
    CutCardSeen(ts=1718000003.0),
    OpenRound(),
    Reveal(ts=-1.25),
    VoidRound(),
    VoidRound(reason="dealer dropped a card * twice", ts=5.0),
    VoidRound(reason="naïve 中文 reason"),
    AcceptAsBurn(ts=6.0),
    Burn(),
    Burn(count=3, ts=7.0),
    Exposed(),
    Declare("banker"),
    Declare("player", ts=8.0),
    Declare("tie"),
    Demo(on=True),
    Demo(on=False, ts=9.0),
    EndShoe(ts=10.0),
    DeviceReport("link_down", "cable *deadbeef pulled", ts=11.0),
    DeviceReport("link_up"),
    DeviceReport("fault", "jam at 3"),
    DeviceReport("bad_data", "41 42 0d"),
    DeviceReport("journal", "shoe-000001.journal: byte 3: torn record"),
]


@pytest.fixture
def every_input() -> list[Input]:
    """One of each input, with and without times, free texts included."""
    return list(EVERY_INPUT)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A journal folder that does not exist yet."""
    return tmp_path / "journal"


@pytest.fixture
def open_journal(folder: Path) -> Iterator[Callable[..., Journal]]:
    """Open journals on ``folder``; each is closed at the end of the test."""
    opened: list[Journal] = []

    def opener(**options: object) -> Journal:
        journal = Journal(folder, fsync=False, **options)  # type: ignore[arg-type]
        journal.open()
        opened.append(journal)
        return journal

    yield opener
    for journal in opened:
        journal.close()


def write_journal(folder: Path, inputs: list[Input], *, fsync: bool = False) -> Path:
    """A closed journal holding ``inputs`` in one file; returns that file."""
    with Journal(folder, fsync=fsync) as journal:
        journal.open()
        for inp in inputs:
            journal.append(inp)
        assert journal.path is not None
        return journal.path


def line_starts(data: bytes) -> list[int]:
    """Where each line starts: the header's, then each record's."""
    return [0, *[i + 1 for i, byte in enumerate(data) if byte == ord("\n")][:-1]]


@pytest.fixture
def writer() -> Callable[..., Path]:
    """:func:`write_journal`."""
    return write_journal


@pytest.fixture
def starts() -> Callable[[bytes], list[int]]:
    """:func:`line_starts`."""
    return line_starts
