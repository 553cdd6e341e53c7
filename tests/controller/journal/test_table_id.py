"""The journal records its table's id in each file's header, and refuses another table."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.controller.engine.inputs import DrawCard, NewShoe
from baccarat.controller.journal.reader import read_journal_file
from baccarat.controller.journal.records import Header, decode_header, encode_header
from baccarat.controller.journal.writer import Journal, JournalTableError


def test_the_header_carries_the_table(folder: Path, open_journal: Callable[..., Journal]) -> None:
    journal = open_journal(table="T04")
    journal.append(NewShoe(ts=1.0))
    assert journal.path is not None
    header = read_journal_file(journal.path).header
    assert header is not None
    assert header.table == "T04"
    assert b'"table":"T04"' in journal.path.read_bytes().splitlines()[0]


def test_a_journal_of_another_table_is_refused(
    folder: Path, open_journal: Callable[..., Journal]
) -> None:
    first = open_journal(table="T04")
    first.append(NewShoe(ts=1.0))
    first.append(DrawCard(parse_card("4S"), ts=2.0))
    first.close()
    with pytest.raises(JournalTableError, match=r"belongs to table T04 .* not to T05"):
        Journal(folder, fsync=False, table="T05").open()
    again = open_journal(table="T04")  # its own table opens it as before
    assert again.next_record == 3


def test_a_file_written_before_the_table_was_recorded_still_opens(folder: Path) -> None:
    """An old header has no ``table``: it is taken as the daemon's, and replays as it was."""
    folder.mkdir()
    body = b'#journal {"version":1,"file":1,"first_record":1,"counters":{},"profile":null}'
    path = folder / "shoe-000001.journal"
    path.write_bytes(b"%s *%08x\n" % (body, zlib.crc32(body)))
    with Journal(folder, fsync=False, table="T05") as journal:
        report = journal.open()
        assert report.header is not None
        assert report.header.table is None
        journal.append(NewShoe(ts=1.0))
        journal.rotate({}, NewShoe(ts=1.0))  # the next file says whose it is
        assert journal.path is not None
        header = read_journal_file(journal.path).header
    assert header is not None
    assert header.table == "T05"


def test_a_header_without_a_table_encodes_as_before() -> None:
    header = Header(1, 1, {}, None)
    assert b"table" not in encode_header(header)
    assert decode_header(encode_header(header).rstrip(b"\n")) == header
    named = Header(1, 1, {}, None, "T05")
    assert decode_header(encode_header(named).rstrip(b"\n")) == named
