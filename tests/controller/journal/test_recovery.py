"""Recovery: torn tails, flipped bits, garbage, empty and headless files."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from baccarat.cards import parse_card
from baccarat.controller.engine.inputs import (
    DeviceReport,
    DrawCard,
    Input,
    NewShoe,
    OpenRound,
    VoidRound,
)
from baccarat.controller.journal.reader import HEX_SHOWN, read_journal_file, scan
from baccarat.controller.journal.records import decode_record, encode_record, file_name
from baccarat.controller.journal.writer import Journal, Recovery

Writer = Callable[..., Path]
Starts = Callable[[bytes], list[int]]

SHOE: list[Input] = [
    NewShoe(decks=8, ts=1.0),
    *(DrawCard(parse_card(code), ts=2.0 + i) for i, code in enumerate(["2S", "3S", "4S"])),
    DrawCard(parse_card("7S"), ts=6.0),
    DrawCard(parse_card("6H"), ts=7.0),
    VoidRound("the dealer dropped a card", ts=8.0),
]


def recover(folder: Path) -> Recovery:
    with Journal(folder, fsync=True) as journal:
        return journal.open()


def test_a_clean_file_needs_nothing(folder: Path, writer: Writer) -> None:
    path = writer(folder, SHOE)
    before = path.read_bytes()
    recovery = recover(folder)
    assert recovery.clean
    assert recovery.inputs == SHOE
    assert path.read_bytes() == before


def test_torn_tail_at_every_byte_of_the_last_record(
    folder: Path, writer: Writer, starts: Starts
) -> None:
    path = writer(folder, SHOE)
    data = path.read_bytes()
    last = starts(data)[-1]
    for cut in range(last, len(data)):
        path.write_bytes(data[:cut])
        recovery = recover(folder)
        assert recovery.inputs == SHOE[:-1], cut
        assert path.read_bytes() == data[:last], cut
        if cut == last:
            assert recovery.clean
            continue
        (problem,) = recovery.problems
        assert problem.offset == last
        assert problem.dropped == cut - last
        assert problem.dropped_hex == data[last:cut].hex(" ")
        assert problem.records_after == 0
        assert problem.saved_to is None  # everything dropped is shown in the problem
        assert recover(folder).clean  # the cut is made once


def test_a_last_line_without_newline_is_torn_even_if_its_crc_is_right(
    folder: Path, writer: Writer
) -> None:
    path = writer(folder, SHOE)
    path.write_bytes(path.read_bytes()[:-1])
    (problem,) = recover(folder).problems
    assert problem.reason == "torn record: no newline at the end"


def test_flipped_bit_in_the_last_record(folder: Path, writer: Writer, starts: Starts) -> None:
    path = writer(folder, SHOE)
    data = path.read_bytes()
    last = starts(data)[-1]
    for position in range(last, len(data)):
        for bit in (0x01, 0x20, 0x80):
            damaged = bytearray(data)
            damaged[position] ^= bit
            path.write_bytes(damaged)
            recovery = recover(folder)
            assert recovery.inputs == SHOE[:-1], (position, bit)
            (problem,) = recovery.problems
            assert problem.offset == last
            assert path.read_bytes() == data[:last]


def test_a_crc_mismatch_names_both_values(folder: Path, writer: Writer, starts: Starts) -> None:
    path = writer(folder, SHOE)
    data = bytearray(path.read_bytes())
    last = starts(bytes(data))[-1]
    data[last + 4] ^= 0x01  # in the ts, still a number
    path.write_bytes(data)
    (problem,) = recover(folder).problems
    assert problem.reason.startswith("CRC mismatch: the line says ")
    assert ", its bytes give " in problem.reason


def test_flipped_bit_in_a_middle_record_stops_replay_there_and_saves_the_rest(
    folder: Path, writer: Writer, starts: Starts
) -> None:
    path = writer(folder, SHOE)
    data = path.read_bytes()
    offsets = starts(data)
    bad = offsets[3]  # the third record
    damaged = bytearray(data)
    damaged[bad + 2] ^= 0x04
    path.write_bytes(damaged)
    recovery = recover(folder)
    assert recovery.inputs == SHOE[:2]
    (problem,) = recovery.problems
    assert problem.offset == bad
    assert problem.records_after == len(SHOE) - 3
    assert problem.saved_to is not None
    assert problem.saved_to.read_bytes() == bytes(damaged[bad:])
    assert path.read_bytes() == data[:bad]
    assert "intact records after the bad one" in str(problem)
    alarm = DeviceReport("journal", str(problem))
    assert decode_record(encode_record(1, alarm)[:-1]) == (1, alarm)  # journaled as is
    with Journal(folder) as journal:  # appending goes on after the cut
        assert journal.open().clean
        assert journal.append(OpenRound()) == 3


def test_a_record_out_of_sequence(folder: Path, writer: Writer, starts: Starts) -> None:
    path = writer(folder, SHOE)
    data = path.read_bytes()
    offsets = starts(data)
    duplicated = data + data[offsets[-1] :]  # the last record twice
    path.write_bytes(duplicated)
    recovery = recover(folder)
    assert recovery.inputs == SHOE
    (problem,) = recovery.problems
    assert problem.reason == f"record {len(SHOE)} where {len(SHOE) + 1} is due"


def test_garbage_appended(folder: Path, writer: Writer) -> None:
    path = writer(folder, SHOE)
    data = path.read_bytes()
    path.write_bytes(data + b"\x00\xff garbage\nmore\n")
    recovery = recover(folder)
    assert recovery.inputs == SHOE
    (problem,) = recovery.problems
    assert problem.offset == len(data)
    assert problem.dropped_hex.startswith("00 ff 20 67")
    assert path.read_bytes() == data


def test_long_garbage_is_saved_beside_the_file(folder: Path, writer: Writer) -> None:
    path = writer(folder, SHOE)
    data = path.read_bytes()
    garbage = bytes(range(256)) * 4
    path.write_bytes(data + garbage)
    (problem,) = recover(folder).problems
    assert problem.dropped == len(garbage)
    assert problem.dropped_hex.endswith(f"... (+{len(garbage) - HEX_SHOWN} bytes)")
    assert problem.saved_to == path.with_name(f"{path.name}.dropped-at-{len(data)}")
    assert problem.saved_to.read_bytes() == garbage
    alarm = DeviceReport("journal", str(problem))
    assert decode_record(encode_record(1, alarm)[:-1]) == (1, alarm)  # journaled as is
    path.write_bytes(data + garbage)  # the same damage again: a second copy, not overwritten
    (again,) = recover(folder).problems
    assert again.saved_to == path.with_name(f"{path.name}.dropped-at-{len(data)}.2")


def test_an_empty_file(folder: Path) -> None:
    folder.mkdir()
    path = folder / file_name(1)
    path.write_bytes(b"")
    recovery = recover(folder)
    assert recovery.header is None
    assert recovery.records == []
    (problem,) = recovery.problems
    assert problem.reason == "empty file: no header"
    assert not path.exists()
    assert problem.saved_to is not None
    assert problem.saved_to.exists()
    with Journal(folder) as journal:  # the next file takes the next number
        journal.open()
        journal.append(OpenRound())
        assert journal.path == folder / file_name(2)


def test_a_headless_newest_file_falls_back_to_the_one_before(folder: Path) -> None:
    with Journal(folder, fsync=False) as journal:
        journal.open()
        journal.append(NewShoe())
        journal.rotate({"seq": 0, "alarm_seq": 0, "shoe": 0}, NewShoe())
        journal.append(OpenRound())
    newest = folder / file_name(2)
    data = bytearray(newest.read_bytes())
    data[3] ^= 0x40  # the header
    newest.write_bytes(data)
    recovery = recover(folder)
    assert recovery.file == folder / file_name(1)
    assert recovery.inputs == [NewShoe()]  # the shoe starts again from the older file
    (problem,) = recovery.problems
    assert problem.reason.startswith("bad header: ")
    assert problem.records_after == 2
    assert problem.saved_to == folder / (file_name(2) + ".dropped-at-0")


def test_only_headless_files_give_a_fresh_start(folder: Path) -> None:
    folder.mkdir()
    (folder / file_name(1)).write_bytes(b"#journal {torn")
    recovery = recover(folder)
    assert recovery.header is None
    assert recovery.counters == {}
    assert recovery.problems[0].reason == "torn header: no newline"


def test_read_journal_file_changes_nothing(folder: Path, writer: Writer) -> None:
    path = writer(folder, SHOE)
    damaged = path.read_bytes() + b"torn"
    path.write_bytes(damaged)
    found = read_journal_file(path)
    assert found.problem is not None
    assert found.records == [(n, inp) for n, inp in enumerate(SHOE, start=1)]
    assert path.read_bytes() == damaged


@settings(max_examples=300, deadline=None)
@given(tail=st.binary(max_size=200), cut=st.integers(min_value=0, max_value=len(SHOE)))
def test_any_bytes_appended_never_raise_and_never_lose_a_record(tail: bytes, cut: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with Journal(folder, fsync=False) as journal:
            journal.open()
            for inp in SHOE[:cut] or [OpenRound()]:
                journal.append(inp)
            path = journal.path
        assert path is not None
        kept = read_journal_file(path).records
        with path.open("ab") as f:
            f.write(tail)
        with Journal(folder, fsync=False) as journal:
            recovery = journal.open()
            assert recovery.records[: len(kept)] == kept
            number = journal.append(OpenRound())
            assert number == kept[-1][0] + 1 + len(recovery.records) - len(kept)
        final = read_journal_file(path)
        assert final.problem is None
        assert final.records[: len(kept)] == kept


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_scan_never_raises_on_any_bytes(data: bytes) -> None:
    found = scan(data, Path("any.journal"))
    assert (found.problem is None) == (found.good_end == len(data) and found.header is not None)
