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
import errno
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, replay_journal
from support.mosquitto import Mosquitto

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="mounts a tmpfs for the journal, which needs root"
)

PAGE = os.sysconf("SC_PAGE_SIZE")
"""tmpfs gives a file its space a page at a time."""
CARDS = [parse_card(code) for code in ("9S", "2H", "KD")]
WITHIN = 15.0
"""Seconds any one step may take before the test fails."""


def profile_file(folder: Path, padding: int) -> Path:
    """The table's profile in ``folder``: burn none, its name ``padding`` characters longer."""
    path = folder / "profile.toml"
    name = "macau" + "-" * padding
    path.write_text(f'[profile]\nbase = "macau"\nname = "{name}"\nburn = "none"\n')
    return path


def cards_published(count: int) -> Callable[[Recorder], bool]:
    def enough(board: Recorder) -> bool:
        return len({body["seq"] for body in board.bodies("card")}) >= count

    return enough


async def journal_sizes(folder: Path, broker: Mosquitto, shoe_path: str) -> list[int]:
    """The size of the journal's file once each of :data:`CARDS` is recorded.

    A probe run on an ordinary disk, as table T2.
    """
    folder.mkdir()  # noqa: ASYNC240 - before anything runs
    profile = str(profile_file(folder, 0))
    sizes: list[int] = []
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(folder, broker, device=shoe_path, profile=profile, table="T2")
        try:
            async with Recorder(broker, table="T2") as board:
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                for count, card in enumerate(CARDS, start=1):
                    shoe.send(CardDrawn(card))
                    await board.wait_for(cards_published(count), WITHIN)
                    sizes.append(daemon.journal_files()[-1].stat().st_size)
        finally:
            daemon.close()
    return sizes


def mount_tmpfs(path: Path) -> None:
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(path)],
        capture_output=True, text=True, check=False,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs for the journal: {done.stderr.strip()}")


def unmount(path: Path) -> None:
    subprocess.run(["umount", str(path)], check=True)


def fill(folder: Path) -> Path:
    """Write zeros into a new file in ``folder`` until its file system is full."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as f:
        try:
            while True:
                f.write(bytes(PAGE))
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
    return filler


async def test_the_disk_fills_up_on_the_third_card(tmp_path: Path, mosquitto: Mosquitto) -> None:
    shoe_path = str(tmp_path / "shoe")
    sizes = await journal_sizes(tmp_path / "probe", mosquitto, shoe_path)
    record = sizes[2] - sizes[1]  # what the third card's record needs
    room = record // 2  # what the journal's last page has left for it
    padding = -(sizes[1] + room) % PAGE

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
                    filler = await asyncio.to_thread(fill, disk)
                    assert os.statvfs(disk).f_bavail == 0

                    shoe.send(CardDrawn(CARDS[2]))
                    status = await asyncio.to_thread(daemon.wait, WITHIN)
                    failed_run = daemon.log()
                    unacknowledged = shoe.sender.unacknowledged
                    cards_before = [b["card"] for b in board.by_seq().values()
                                    if b.get("type") == "card"]

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

    assert status == 1
    stop_lines = [line for line in failed_run.splitlines() if "CRITICAL" in line]
    assert stop_lines, failed_run
    assert "cannot record inputs, stopping" in stop_lines[0]
    assert "Traceback" not in failed_run
    assert len(unacknowledged) == 1  # the third card's frame, and nothing else
    assert cards_before == ["9S", "2H"]
    published = [b for b in board.by_seq().values() if b.get("type") == "card"]
    assert [b["card"] for b in sorted(published, key=lambda b: b["seq"])] == ["9S", "2H", "KD"]
    assert [m["card"] for m in replayed if m["type"] == "card"] == ["9S", "2H", "KD"]
