"""A rotation that fails at any step: recovery and the appends agree on one file.

Real journal files in a temporary folder, written by the journal and by the daemon's
table. The flushes are the real ones, wrapped so that a test can make one report EIO on
cue, as a dying disk's would: a real disk that fails an fsync at a chosen moment cannot be
had here.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.controller.config import BrokerConfig, Config, DeviceConfig, JournalConfig
from baccarat.controller.engine.inputs import DrawCard, Input, NewShoe, OpenRound, VoidRound
from baccarat.controller.journal.reader import JournalError
from baccarat.controller.journal.records import Record, file_name
from baccarat.controller.journal.writer import Journal
from baccarat.controller.table import Table


class FlushThatFailsOnCue:
    """``os.fsync`` or ``os.fdatasync`` for real; while ``fail`` is set, then EIO."""

    def __init__(self, flush: object) -> None:
        self.flush = flush
        self.fail = False

    def __call__(self, fd: int) -> None:
        assert callable(self.flush)
        self.flush(fd)
        if self.fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))


AFTER_THE_SHOE: list[Input] = [OpenRound(ts=3.0), DrawCard(parse_card("4S"), ts=4.0)]


def deal_a_second_shoe(journal: Journal, flush: FlushThatFailsOnCue) -> list[Record]:
    """Shoe, card, shoe (its rotation's flush fails), then more: what append accepted."""
    accepted: list[Record] = []
    for inp in (NewShoe(ts=1.0), DrawCard(parse_card("KH"), ts=1.5)):
        accepted.append((journal.append(inp), inp))
    second = NewShoe(ts=2.0)
    accepted.append((journal.append(second), second))
    flush.fail = True
    with contextlib.suppress(JournalError):
        journal.rotate({"seq": 5, "alarm_seq": 0, "shoe": 1}, second)
    flush.fail = False
    for inp in AFTER_THE_SHOE:
        with contextlib.suppress(JournalError):
            accepted.append((journal.append(inp), inp))
    return accepted


def recovered(folder: Path) -> tuple[list[Record], int]:
    """What a restart's recovery replays, and the number its next append would get."""
    with Journal(folder) as journal:
        recovery = journal.open()
        return recovery.records, journal.next_record


def test_a_folder_that_cannot_be_flushed_after_the_rename_loses_nothing(tmp_path: Path) -> None:
    folder_sync = FlushThatFailsOnCue(os.fsync)
    with Journal(tmp_path, folder_sync=folder_sync) as journal:
        journal.open()
        accepted = deal_a_second_shoe(journal, folder_sync)
    assert (tmp_path / file_name(2)).exists()  # the rename happened

    records, next_record = recovered(tmp_path)
    assert records[0] == accepted[2]  # the second shoe, first record of the new file
    for record in accepted:
        assert record in records or record[0] < records[0][0], f"{record} lost"
    assert next_record == accepted[-1][0] + 1
    assert len(accepted) == 3  # the journal refused what came after: the daemon stops


def test_a_new_file_that_cannot_be_flushed_leaves_the_shoe_in_the_old_one(
    tmp_path: Path,
) -> None:
    datasync = FlushThatFailsOnCue(os.fdatasync)
    with Journal(tmp_path, datasync=datasync) as journal:
        journal.open()
        accepted = deal_a_second_shoe(journal, datasync)
        assert journal.path == tmp_path / file_name(1)
    assert not (tmp_path / file_name(2)).exists()

    records, next_record = recovered(tmp_path)
    assert records == accepted  # every record, all in the first file
    assert next_record == accepted[-1][0] + 1


def table_on(folder: Path, folder_sync: FlushThatFailsOnCue | None = None) -> Table:
    """The daemon's table on a journal in ``folder`` (no device; no broker needed here)."""
    config = Config(
        table="T6",
        profile="csm",
        device=DeviceConfig(kind="none"),
        broker=BrokerConfig(host="127.0.0.1", port=1),
        journal=JournalConfig(folder=folder),
    )
    table = Table(config)
    if folder_sync is not None:
        table.journal = Journal(folder, profile=table.profile, folder_sync=folder_sync)
    return table


async def test_the_table_stops_when_a_new_shoe_cannot_be_flushed_into_the_folder(
    tmp_path: Path,
) -> None:
    folder_sync = FlushThatFailsOnCue(os.fsync)
    table = table_on(tmp_path, folder_sync)
    table.recover()
    assert table.handle(NewShoe(ts=1.0)).refused is None
    assert table.handle(OpenRound(ts=1.5)).refused is None
    assert table.handle(VoidRound(reason="test", ts=1.6)).refused is None
    folder_sync.fail = True
    assert table.handle(NewShoe(ts=2.0)).refused is None  # recorded; its file not flushed
    folder_sync.fail = False
    assert table.fatal.is_set()
    assert table.fault is not None
    assert "cannot be flushed" in table.fault
    with pytest.raises(JournalError, match="failed earlier"):
        table.handle(OpenRound(ts=3.0))
    table.journal.close()

    again = table_on(tmp_path)
    again.recover()
    assert again.engine.shoe is not None
    assert again.engine.shoe.number == 2  # the second shoe, as recorded
    assert again.journal.next_record == 5
    again.journal.close()
