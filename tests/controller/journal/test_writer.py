"""Writing the journal: records, rotation, retention, the folder lock, failures."""

from __future__ import annotations

import errno
import math
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.controller.config import JournalConfig
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import (
    DeviceReport,
    DrawCard,
    EndShoe,
    Input,
    NewShoe,
    OpenRound,
    VoidRound,
)
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.controller.journal.reader import JournalError, read_journal_file
from baccarat.controller.journal.records import (
    UnrecordableInputError,
    as_recorded,
    decode_record,
    encode_record,
    file_name,
)
from baccarat.controller.journal.writer import Journal, JournalLockedError
from baccarat.messages.bodies import Message
from baccarat.rules.profiles import load_profile

Opener = Callable[..., Journal]


def test_every_input_reads_back_the_same(every_input: list[Input]) -> None:
    for number, inp in enumerate(every_input, start=1):
        line = encode_record(number, inp)
        assert line.endswith(b"\n")
        assert line.count(b"\n") == 1
        assert decode_record(line[:-1]) == (number, inp)


@pytest.mark.parametrize("fsync", [True, False])
def test_round_trip_through_files(
    folder: Path, every_input: list[Input], writer: Callable[..., Path], fsync: bool
) -> None:
    path = writer(folder, every_input, fsync=fsync)
    with Journal(folder, fsync=fsync) as journal:
        recovery = journal.open()
        assert recovery.clean
        assert recovery.file == path
        assert recovery.inputs == every_input
        assert [n for n, _ in recovery.records] == list(range(1, len(every_input) + 1))
        assert recovery.counters == {}  # the first file of an empty journal: a fresh engine
        assert journal.append(OpenRound()) == len(every_input) + 1
    assert read_journal_file(path).problem is None


def test_a_record_is_one_greppable_line(folder: Path, writer: Callable[..., Path]) -> None:
    inputs = [DrawCard(parse_card("4S"), ts=1718000001.5), VoidRound("dropped", confirm=True)]
    path = writer(folder, inputs)
    lines = path.read_text().splitlines()
    assert lines[0].startswith('#journal {"version":1,"file":1,"first_record":1,')
    assert lines[1].startswith("1 1718000001.500000 4S *")
    assert lines[2].startswith("2 - void dropped *")
    assert all(len(line.rsplit(" *", 1)[1]) == 8 for line in lines)


@pytest.mark.parametrize(
    "inp",
    [
        VoidRound("two\nlines"),
        VoidRound("double  space"),
        VoidRound(""),
        DeviceReport("fault", "a # comment"),
        DeviceReport("fault", "trailing "),
        DrawCard(parse_card("4S"), ts=math.nan),
        DrawCard(parse_card("4S"), ts=math.inf),
        VoidRound("surrogate \udc80"),
    ],
)
def test_an_input_that_would_not_read_back_is_refused_and_nothing_written(
    open_journal: Opener, inp: Input
) -> None:
    journal = open_journal()
    journal.append(OpenRound())
    path = journal.path
    assert path is not None
    before = path.read_bytes()
    with pytest.raises(UnrecordableInputError):
        journal.append(inp)
    assert path.read_bytes() == before
    assert journal.append(OpenRound()) == 2


def test_as_recorded_makes_free_text_recordable(open_journal: Opener) -> None:
    journal = open_journal()
    report = as_recorded(DeviceReport("fault", "jam  at\nslot # 3", ts=1.0))
    assert report == DeviceReport("fault", "jam at slot 3", ts=1.0)
    journal.append(report)
    assert journal.next_record == 2


def test_missing_folders_are_created(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b" / "journal"
    with Journal(folder) as journal:
        recovery = journal.open()
        assert recovery.header is None
        assert recovery.records == []
        assert recovery.clean
        assert journal.path is None  # no file until the first record
        journal.append(OpenRound())
        assert journal.path == folder / file_name(1)


def test_the_folder_is_locked_while_open(folder: Path, open_journal: Opener) -> None:
    first = open_journal()
    with pytest.raises(JournalLockedError):
        Journal(folder).open()
    first.close()
    with Journal(folder) as second:
        second.open()


def test_appending_needs_an_open_journal(folder: Path) -> None:
    journal = Journal(folder)
    with pytest.raises(RuntimeError):
        journal.append(OpenRound())
    journal.open()
    journal.close()
    journal.close()  # harmless
    with pytest.raises(RuntimeError):
        journal.append(OpenRound())


def test_from_config(tmp_path: Path) -> None:
    config = JournalConfig(folder=tmp_path / "j", fsync=False, retention=3)
    with Journal.from_config(config, load_profile("house6")) as journal:
        journal.open()
        journal.append(NewShoe())
        journal.rotate({"seq": 0}, NewShoe())
        assert journal.retention == 3
        assert journal.path is not None
        header = read_journal_file(journal.path).header
        assert header is not None
        assert header.profile_name == "house6"


# ---------------------------------------------------------------------- rotation


def test_rotation_repeats_the_shoe_record_in_a_new_file(open_journal: Opener) -> None:
    journal = open_journal(profile=load_profile("macau"))
    journal.append(OpenRound())
    shoe = NewShoe(decks=8, ts=100.0)
    assert journal.append(shoe) == 2
    new = journal.rotate({"seq": 7, "alarm_seq": 1, "shoe": 3}, shoe)
    assert new == journal.path == journal.folder / file_name(2)
    assert journal.append(DrawCard(parse_card("9D"))) == 3
    old = read_journal_file(journal.folder / file_name(1))
    assert [n for n, _ in old.records] == [1, 2]
    found = read_journal_file(new)
    assert found.problem is None
    assert found.header is not None
    assert found.header.first_record == 2
    assert found.header.counters == {"seq": 7, "alarm_seq": 1, "shoe": 3}
    assert found.header.profile_name == "macau"
    assert found.records == [(2, shoe), (3, DrawCard(parse_card("9D")))]


def test_rotate_takes_only_the_last_input_appended(open_journal: Opener) -> None:
    journal = open_journal()
    with pytest.raises(ValueError, match="last input appended"):
        journal.rotate({}, NewShoe())
    journal.append(NewShoe(decks=8))
    with pytest.raises(ValueError, match="last input appended"):
        journal.rotate({}, NewShoe(decks=6))
    with pytest.raises(ValueError, match="whole number"):
        journal.rotate({"seq": -1}, NewShoe(decks=8))


def test_reopened_journal_continues_numbers_and_files(folder: Path, open_journal: Opener) -> None:
    journal = open_journal()
    journal.append(NewShoe())
    journal.rotate({"seq": 0, "alarm_seq": 0, "shoe": 0}, NewShoe())
    journal.append(OpenRound())
    journal.close()
    again = open_journal()
    assert again.path == folder / file_name(2)
    assert again.next_record == 3
    assert again.append(NewShoe()) == 3
    again.rotate({"seq": 5, "alarm_seq": 0, "shoe": 1}, NewShoe())
    assert again.path == folder / file_name(3)


def test_rotation_after_reopen_may_repeat_the_last_recovered_record(
    folder: Path, open_journal: Opener
) -> None:
    journal = open_journal()
    journal.append(NewShoe(ts=1.0))
    journal.close()  # a crash after the append, before the rotation
    again = open_journal()
    again.rotate({"seq": 0}, NewShoe(ts=1.0))
    assert again.path == folder / file_name(2)
    assert again.append(OpenRound()) == 2


def test_retention_keeps_the_newest_files(folder: Path, open_journal: Opener) -> None:
    journal = open_journal(retention=3)
    journal.append(OpenRound())
    (folder / (file_name(1) + ".dropped-at-9")).write_bytes(b"evidence")
    for shoe in range(1, 6):
        journal.append(NewShoe())
        journal.rotate({"shoe": shoe - 1}, NewShoe())
    names = sorted(p.name for p in folder.iterdir() if p.name.startswith("shoe-"))
    assert names == [file_name(4), file_name(5), file_name(6)]  # evidence of 1 went with it
    journal.close()
    again = Journal(folder, fsync=False)
    recovery = again.open()
    again.close()
    assert recovery.clean
    assert recovery.header is not None
    assert recovery.header.first_record == 6
    assert recovery.counters == {"shoe": 4}


def test_retention_is_at_least_one_file(folder: Path) -> None:
    with pytest.raises(ValueError, match="at least one"):
        Journal(folder, retention=0)


def test_an_unfinished_rotation_is_removed(folder: Path, writer: Callable[..., Path]) -> None:
    writer(folder, [NewShoe()])
    (folder / (file_name(2) + ".new")).write_bytes(b"#journal {half")
    with Journal(folder) as journal:
        recovery = journal.open()
        assert recovery.clean
        assert recovery.file == folder / file_name(1)
    assert not (folder / (file_name(2) + ".new")).exists()


# ---------------------------------------------------------------------- the daemon's way


class Table:
    """The daemon's order: counters, append, feed, rotate on a started shoe."""

    def __init__(self, folder: Path, *, fsync: bool = False, retention: int = 200) -> None:
        self.profile = load_profile("macau")
        self.journal = Journal(folder, fsync=fsync, retention=retention, profile=self.profile)
        recovery = self.journal.open()
        self.problems = recovery.problems
        self.engine = Engine.resume(self.profile, recovery.counters)
        self.replayed: list[Message] = []
        for inp in recovery.inputs:
            self.replayed += self.engine.feed(inp).messages
        self.published: list[Message] = []
        self.since_rotation: list[Message] = []

    def handle(self, inp: Input) -> None:
        counters = self.engine.counters()
        self.journal.append(inp)
        outcome = self.engine.feed(inp)
        if isinstance(inp, NewShoe) and outcome.refused is None:
            self.journal.rotate(counters, inp)
            self.since_rotation = []
        self.published += outcome.messages
        self.since_rotation += outcome.messages


def _json(messages: list[Message], *, recall: bool = True) -> list[str]:
    return [m.to_json() for m in messages if recall or getattr(m, "type", None) != "recall"]


def _three_shoes_and_a_crash(folder: Path) -> tuple[Table, Table]:
    table = Table(folder, retention=2)
    for seed in (1, 2, 3):
        for inp in shoe_inputs(8, seed):
            table.handle(inp)
        table.handle(EndShoe())  # refused when the shoe has already ended: journaled anyway
    for inp in list(shoe_inputs(8, 4))[:30]:  # a crash mid-shoe
        table.handle(inp)
    table.journal.close()
    return table, Table(folder)


def test_a_restart_rebuilds_the_same_state_from_the_newest_file(folder: Path) -> None:
    table, again = _three_shoes_and_a_crash(folder)
    assert len([p for p in folder.iterdir() if p.name.endswith(".journal")]) == 2
    assert again.problems == []
    assert again.replayed  # the round in progress, resumed
    assert _json(again.replayed, recall=False) == _json(table.since_rotation, recall=False)
    assert again.engine.counters() == table.engine.counters()
    next_card = DrawCard(parse_card("AS"), ts=9.0)
    expected = table.engine.feed(next_card).messages
    assert _json(again.engine.feed(next_card).messages, recall=False) == _json(
        expected, recall=False
    )


def test_a_restart_rebuilds_the_game_recall(folder: Path) -> None:
    table, again = _three_shoes_and_a_crash(folder)
    assert _json(again.replayed) == _json(table.since_rotation)


def test_a_refused_shoe_does_not_rotate(folder: Path) -> None:
    table = Table(folder)
    table.handle(NewShoe(decks=8))
    table.handle(DrawCard(parse_card("2S")))  # burn by the first card: 2 -> 2 more
    table.handle(DrawCard(parse_card("3S")))
    table.handle(DrawCard(parse_card("4S")))
    table.handle(DrawCard(parse_card("7S")))  # P1: a round is in progress
    table.handle(NewShoe(decks=8))  # refused
    assert table.journal.path == folder / file_name(2)
    table.journal.close()
    again = Table(folder)
    assert _json(again.replayed) == _json(table.published)


# ---------------------------------------------------------------------- failures

_FULL_DISK = textwrap.dedent(
    """
    import resource, signal, sys
    from pathlib import Path
    from baccarat.controller.engine.inputs import VoidRound
    from baccarat.controller.journal.reader import JournalError
    from baccarat.controller.journal.writer import Journal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    journal = Journal(Path(sys.argv[1]), fsync=True)
    journal.open()
    journal.append(VoidRound("first"))
    size = journal.path.stat().st_size
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, resource.RLIM_INFINITY))
    for attempt in range(2):
        try:
            journal.append(VoidRound("a reason far longer than the ten bytes left"))
        except JournalError as exc:
            print(f"JournalError {attempt}: {exc}")
    print(journal.path.stat().st_size == size)
    """
)


def test_a_failed_write_raises_cuts_back_and_stops_the_journal(folder: Path) -> None:
    """A real write failure: the file size limit (RLIMIT_FSIZE) in a child process."""
    proc = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("JournalError 0: cannot append record 2")
    assert lines[1].startswith("JournalError 1: the journal failed earlier")
    assert lines[2] == "True"  # the partial record was cut off
    with Journal(folder) as journal:
        recovery = journal.open()
        assert recovery.clean
        assert recovery.inputs == [VoidRound("first")]


def test_an_unwritable_folder_is_a_journal_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(JournalError, match="cannot open journal"):
        Journal(blocker / "journal").open()


def test_a_failed_rotation_goes_on_in_the_current_file(folder: Path, open_journal: Opener) -> None:
    journal = open_journal()
    journal.append(NewShoe())
    (folder / (file_name(2) + ".new")).mkdir()  # the temporary name cannot be a file
    assert journal.rotate({"seq": 0}, NewShoe()) is None
    assert journal.path == folder / file_name(1)
    assert journal.append(OpenRound()) == 2


class DiskThatFailsOnCue:
    """Flushes for real; while ``fail`` is set, each flush then reports EIO.

    As a dying disk's would: a real one cannot be had here on cue.
    """

    def __init__(self) -> None:
        self.fail = False
        self.flushes = 0

    def __call__(self, fd: int) -> None:
        os.fdatasync(fd)
        self.flushes += 1
        if self.fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_every_record_is_flushed_before_append_returns(folder: Path) -> None:
    disk = DiskThatFailsOnCue()
    with Journal(folder, fsync=True, datasync=disk) as journal:
        journal.open()
        for count, inp in enumerate((NewShoe(), OpenRound(), DrawCard(parse_card("4S"))), 1):
            journal.append(inp)
            assert disk.flushes == count
    with Journal(folder, fsync=False, datasync=disk) as journal:
        journal.open()
        journal.append(OpenRound())
        assert disk.flushes == 3  # fsync off: nothing flushed


def test_a_failed_flush_cuts_the_record_and_stops_the_journal(folder: Path) -> None:
    disk = DiskThatFailsOnCue()
    with Journal(folder, fsync=True, datasync=disk) as journal:
        journal.open()
        journal.append(NewShoe())
        journal.append(OpenRound())
        size = (folder / file_name(1)).stat().st_size
        disk.fail = True
        with pytest.raises(JournalError, match="cannot append record 3"):
            journal.append(DrawCard(parse_card("4S")))
        assert (folder / file_name(1)).stat().st_size == size  # cut back: it never was
        disk.fail = False
        with pytest.raises(JournalError, match="failed earlier"):
            journal.append(OpenRound())
    with Journal(folder) as journal:
        recovery = journal.open()
        assert recovery.clean
        assert recovery.inputs == [NewShoe(), OpenRound()]
