"""The disk fills up on the third card of a framed shoe: no card lost, none taken twice.

The real daemon process, a virtual shoe on a real pty, a real mosquitto, and a real disk
fault: the journal folder is a small tmpfs (mounted by the test, so it needs root) that the
test fills up once the second card is recorded. The third card's record then cannot be
written: the daemon stops without acknowledging that frame, and after a restart with room
on the disk again it takes the shoe's retransmission of it.

A full file system still takes a write that fits in the last page of the journal file, so
the test lays the journal out first: a probe run on an ordinary disk gives the journal's
size after each card, and the profile's name (which the header of the journal file holds)
is lengthened so that the second card's record ends half a record before a page boundary.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from baccarat.controller.faults import FAULT_EXIT
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, replay_journal
from support.disk import (
    CARDS,
    WITHIN,
    cards,
    cards_published,
    cursor_caught_up,
    fault_reported,
    fill,
    journal_sizes,
    mount_tmpfs,
    needs_root,
    padding_for,
    profile_file,
    unmount,
)
from support.mosquitto import Mosquitto

pytestmark = needs_root


async def test_the_disk_fills_up_on_the_third_card(tmp_path: Path, mosquitto: Mosquitto) -> None:
    shoe_path = str(tmp_path / "shoe")
    sizes = await journal_sizes(tmp_path / "probe", mosquitto, shoe_path)
    record = sizes[2] - sizes[1]  # what the third card's record needs
    room = record // 2  # what the journal's last page has left for it
    padding = padding_for(sizes, room)

    folder = tmp_path / "table"
    disk = folder / "journal"
    disk.mkdir(parents=True)
    profile = profile_file(folder, padding)
    mount_tmpfs(disk)
    try:
        async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
            daemon = Daemon(folder, mosquitto, device=shoe_path, profile=str(profile))
            try:
                async with Recorder(mosquitto) as board:
                    await asyncio.to_thread(daemon.start)
                    shoe.send(ShoeInserted())
                    for card in CARDS[:2]:
                        shoe.send(CardDrawn(card))
                    await board.wait_for(cards_published(2), WITHIN)
                    journal = daemon.journal_files()[-1]
                    assert journal.stat().st_size == sizes[1] + padding, "not laid out"
                    await cursor_caught_up(daemon, board)  # the journal is what fails first
                    filler = await asyncio.to_thread(fill, disk)
                    assert os.statvfs(disk).f_bavail == 0

                    shoe.send(CardDrawn(CARDS[2]))
                    exit_status = await asyncio.to_thread(daemon.wait, WITHIN)
                    await board.wait_for(fault_reported, WITHIN)
                    failed_run = daemon.log()
                    unacknowledged = shoe.sender.unacknowledged
                    cards_before = cards(board)
                    faults = [b for t, b in board.received if t.endswith("/alarm")
                              and b["type"] == "fault"]  # (and once on the retained fault)
                    status = board.bodies("status")[-1]

                    filler.unlink()  # room on the disk again
                    await asyncio.to_thread(daemon.start)
                    await board.wait_for(cards_published(3), WITHIN)
                    async with asyncio.timeout(WITHIN):
                        await shoe.drain()  # every frame acknowledged
                    assert await asyncio.to_thread(daemon.stop) == 0
                    replayed = await asyncio.to_thread(replay_journal, daemon, profile)
            finally:
                daemon.close()
    finally:
        unmount(disk)

    assert exit_status == FAULT_EXIT
    stop_lines = [line for line in failed_run.splitlines() if "CRITICAL" in line]
    assert len(stop_lines) == 1, failed_run
    assert "No space left on device: cannot record inputs" in stop_lines[0], failed_run
    assert "Traceback" not in failed_run
    assert [f["kind"] for f in faults] == ["journal_fault"]
    assert "No space left on device" in faults[0]["text"]
    assert (status["state"], status["fault"]) == ("offline", faults[0]["text"])
    assert len(unacknowledged) == 1  # the third card's frame, and nothing else
    assert cards_before == ["9S", "2H"]
    assert cards(board) == ["9S", "2H", "KD"]
    assert board.bodies("status")[-1]["state"] == "offline"  # the clean stop after the fix
    assert [m["card"] for m in replayed if m["type"] == "card"] == ["9S", "2H", "KD"]
