"""Where a restarted daemon tells a framed device to resume: after the frame handled last.

Heartbeats are acknowledged and not journaled. After minutes of them the device's 8-bit
frame number comes round to the one the journal recorded last, and a host resuming after
that one takes the device's new frame of that number for it: cards dropped as
duplicates (tests/drivers/test_resume_after_restart.py shows it on the wire). The daemon
keeps the frame it handled last in ``device-position`` beside the journal, with the
newest frame the journal held then, and resumes after the newer of the two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.controller.config import Config, JournalConfig
from baccarat.controller.positions import DEVICE_FILE
from baccarat.controller.table import Table
from baccarat.drivers import events as ev


def config(tmp_path: Path) -> Config:
    return Config(table="T1", rules={"open_mode": "explicit"},
                  journal=JournalConfig(folder=tmp_path / "journal"))


def run_and_stop(tmp_path: Path, events: list[ev.DeviceEvent]) -> Table:
    table = Table(config(tmp_path))
    table.recover()
    for event in events:
        table.on_device_event(event)
    table.write_device_position()
    table.journal.close()
    return table


def restarted(tmp_path: Path) -> int | None:
    table = Table(config(tmp_path))
    table.recover()
    table.journal.close()
    return table.last_device_seq


def test_after_heartbeats_the_daemon_resumes_after_the_last_one_handled(tmp_path: Path) -> None:
    events: list[ev.DeviceEvent] = [ev.ShuffleDone(seq=1), ev.CardDrawn(parse_card("AS"), seq=2)]
    events += [ev.Heartbeat(seq=n & 0xFF) for n in range(3, 258)]  # ... 254, 255, 0, 1
    run_and_stop(tmp_path, events)
    assert (tmp_path / "journal" / DEVICE_FILE).read_text() == "1 2\n"
    assert restarted(tmp_path) == 1  # not 2: the device's next frame 2 is a new one


def test_a_card_recorded_after_the_file_was_written_wins(tmp_path: Path) -> None:
    run_and_stop(tmp_path, [ev.ShuffleDone(seq=1), ev.Heartbeat(seq=2), ev.Heartbeat(seq=3)])
    table = Table(config(tmp_path))
    table.recover()
    table.on_device_event(ev.CardDrawn(parse_card("AS"), seq=4))  # then killed: not written
    table.journal.close()
    assert restarted(tmp_path) == 4


@pytest.mark.parametrize("text", ["", "x y\n", "300 2\n", "5\n", "5 z\n"])
def test_a_damaged_file_falls_back_to_the_journal(tmp_path: Path, text: str) -> None:
    run_and_stop(tmp_path, [ev.ShuffleDone(seq=1), ev.CardDrawn(parse_card("AS"), seq=2)])
    (tmp_path / "journal" / DEVICE_FILE).write_text(text)
    assert restarted(tmp_path) == 2


def test_without_the_file_the_journal_says(tmp_path: Path) -> None:
    run_and_stop(tmp_path, [ev.ShuffleDone(seq=1), ev.CardDrawn(parse_card("AS"), seq=2)])
    (tmp_path / "journal" / DEVICE_FILE).unlink()
    assert restarted(tmp_path) == 2


def newest_recorded(tmp_path: Path) -> int:
    """A journal whose newest frame is 10 (a shoe, then a card)."""
    run_and_stop(tmp_path, [ev.ShuffleDone(seq=9), ev.CardDrawn(parse_card("AS"), seq=10)])
    return 10


@pytest.mark.parametrize("ahead", [1, 3, 127])
def test_a_file_naming_frames_past_the_journal_is_not_believed(
    tmp_path: Path, ahead: int
) -> None:
    """A frame 1..127 past the journal's newest is not taken: the journal's is.

    Resumed after it, the device's cards in flight would be acknowledged unseen; resumed
    after the journal's newest, they come (the frames between were heartbeats, if any).
    """
    recorded = newest_recorded(tmp_path)
    forged = (recorded + ahead) & 0xFF
    (tmp_path / "journal" / DEVICE_FILE).write_text(f"{forged} {recorded}\n")
    assert restarted(tmp_path) == recorded


@pytest.mark.parametrize("ahead", [128, 200, 255])
def test_a_file_naming_a_frame_behind_the_journals_is_believed(
    tmp_path: Path, ahead: int
) -> None:
    """128 frames or more past it: the journal's newest number may have come round."""
    recorded = newest_recorded(tmp_path)
    handled = (recorded + ahead) & 0xFF
    (tmp_path / "journal" / DEVICE_FILE).write_text(f"{handled} {recorded}\n")
    assert restarted(tmp_path) == handled


def test_a_file_for_a_journal_without_frames_is_not_believed(tmp_path: Path) -> None:
    """No frame recorded: nothing can come round, the device's oldest frame says where."""
    (tmp_path / "journal").mkdir()
    (tmp_path / "journal" / DEVICE_FILE).write_text("13 -\n")
    assert restarted(tmp_path) is None
