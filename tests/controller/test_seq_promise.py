"""A sequence number is a promise: the journal loses published records, no seq gets a 2nd body.

The real daemon process, a virtual framed shoe on a real pty, a real mosquitto, and a
subscriber that keeps every ``(seq, body)`` it receives. The journal loses records whose
messages were already published: its last records dropped (storage that acknowledged a
flush and lost it), its last record torn, or (as root) an ext4 that an I/O error turns
read-only mid-shoe, mended with the storage back as it was before the cards it lost.
After the restart no ``seq`` is published with a second body, and a lasting
``journal_damaged`` alarm names the lost range (``lost_first``, ``lost_last``), taking a
``seq`` after it; the device's frames the journal lost are said lost (``sequence_gap``),
not heartbeats.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from baccarat.cards import parse_card
from baccarat.controller.engine.engine import Engine
from baccarat.controller.faults import FAULT_EXIT
from baccarat.controller.journal.reader import read_journal_file
from baccarat.controller.serving import FAULT_REPORT_TIMEOUT
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.rules.profiles import load_profile
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.disk import ext4, needs_root, profile_file, run, unmount
from support.mosquitto import Mosquitto

WITHIN = 20.0
"""Seconds any one step may take before the test fails."""
CODES = [f"{rank}{suit}" for suit in "SHDC" for rank in "A23456789TJQK"]
"""Cards to deal, in this order (an 8-deck shoe holds each of them 8 times)."""


@asynccontextmanager
async def table_with_shoe(
    folder: Path, broker: Mosquitto
) -> AsyncIterator[tuple[Daemon, VirtualShoe, Recorder]]:
    """A daemon (not started) on a framed virtual shoe, and a board recording table T1."""
    shoe_path = str(folder / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(folder, broker, device=shoe_path, profile=str(profile_file(folder, 0)))
        try:
            async with Recorder(broker) as board:
                yield daemon, shoe, board
        finally:
            daemon.close()


def bodies_by_seq(board: Recorder) -> dict[int, set[str]]:
    """Every body the board received for each ``seq`` (canonical JSON), duplicates merged."""
    seen: dict[int, set[str]] = {}
    for _, body in board.received:
        seq = body.get("seq")
        if isinstance(seq, int):
            seen.setdefault(seq, set()).add(json.dumps(body, sort_keys=True))
    return seen


def second_bodies(board: Recorder) -> dict[int, list[str]]:
    """The seqs published with more than one body, and their bodies: none, ever."""
    return {seq: sorted(b) for seq, b in bodies_by_seq(board).items() if len(b) > 1}


def card_count(board: Recorder) -> int:
    """Card bodies received, each once (a card published again after a restart is the same)."""
    return len({json.dumps(b, sort_keys=True) for b in board.bodies("card")})


async def deal(shoe: VirtualShoe, board: Recorder, codes: list[str], *, new_shoe: bool) -> None:
    """Send ``codes`` (after a new shoe), until the board has a card message for each."""
    before = card_count(board)
    if new_shoe:
        shoe.send(ShoeInserted())
    for code in codes:
        shoe.send(CardDrawn(parse_card(code)))
    await board.wait_for(lambda b: card_count(b) >= before + len(codes), WITHIN)


def lost_alarms(board: Recorder) -> list[dict[str, Any]]:
    return [a for a in board.bodies("alarm") if a.get("lost_first") is not None]


def damage(journal: Path, records: int, *, torn: bool = False) -> None:
    """Drop the newest file's last ``records`` records; ``torn``: and half of the one before."""
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) > records + 2, lines
    kept = lines[: len(lines) - records]
    if torn:
        last = kept.pop()
        kept.append(last[: len(last) // 2])
    journal.write_bytes(b"".join(kept))


async def lose_the_tail(
    folder: Path, broker: Mosquitto, records: int, *, torn: bool = False
) -> tuple[Recorder, Daemon, int, int]:
    """Deal, SIGKILL after the publish, damage the journal, restart, deal on.

    The board, the daemon, the newest seq published before the kill and the newest seq
    the damaged journal's inputs make (by its own replay).
    """
    async with table_with_shoe(folder, broker) as (daemon, shoe, board):
        await asyncio.to_thread(daemon.start)
        await deal(shoe, board, CODES[:8], new_shoe=True)
        await asyncio.sleep(0.3)  # the last card's round message too
        daemon.kill()
        published = max(bodies_by_seq(board))
        damage(daemon.journal_files()[-1], records, torn=torn)
        kept = await asyncio.to_thread(replayed_seq, daemon)
        assert kept < published  # the journal lost messages already published

        await asyncio.to_thread(daemon.start)
        await board.wait_for(lambda b: bool(lost_alarms(b)), WITHIN)
        await deal(shoe, board, CODES[8:12], new_shoe=False)
        assert await asyncio.to_thread(daemon.stop) == 0
    return board, daemon, published, kept


def replayed_seq(daemon: Daemon) -> int:
    """The newest seq the journal's inputs make: its newest file replayed, up to a bad record."""
    file = read_journal_file(daemon.journal_files()[-1])
    assert file.header is not None
    profile = load_profile(str(daemon.folder / "profile.toml"), open_mode="implicit")
    engine = Engine.resume(profile, file.header.counters)
    for _, inp in file.records:
        engine.feed(inp)
    return engine.seq


def check_promise(board: Recorder, daemon: Daemon, published: int, kept: int) -> None:
    """No seq with a second body; the lost range named, past it; frames said lost."""
    assert second_bodies(board) == {}
    (alarm,) = lost_alarms(board)
    assert alarm["kind"] == "journal_damaged"
    assert (alarm["lost_first"], alarm["lost_last"]) == (kept + 1, published)
    assert alarm["seq"] == published + 1  # the alarm takes no lost seq
    assert alarm["lasting"] is True
    assert f"seq {kept + 1} to {published}" in alarm["text"]
    listed = [a for body in board.bodies("alarms") for a in body["alarms"]]
    assert any(a["id"] == alarm["id"] for a in listed)  # on the retained alarms topic
    log = daemon.log()
    assert "nothing to record (heartbeats)" not in log, log
    gaps = [a for a in board.bodies("alarm") if a["kind"] == "sequence_gap"]
    assert gaps, [a["kind"] for a in board.bodies("alarm")]
    assert "journal lost" in gaps[0]["text"]


@pytest.mark.parametrize("records", [1, 3])
async def test_the_journal_loses_its_last_records(
    tmp_path: Path, mosquitto: Mosquitto, records: int
) -> None:
    board, daemon, published, kept = await lose_the_tail(tmp_path, mosquitto, records)
    check_promise(board, daemon, published, kept)


async def test_the_journal_loses_a_torn_last_record(tmp_path: Path, mosquitto: Mosquitto) -> None:
    board, daemon, published, kept = await lose_the_tail(tmp_path, mosquitto, 1, torn=True)
    check_promise(board, daemon, published, kept)
    cut = [a for a in board.bodies("alarm")
           if a["kind"] == "journal_damaged" and a.get("lost_first") is None]
    assert cut, "the torn record is reported too"  # its own notice, after the lost range
    assert cut[0]["seq"] > published


@needs_root
async def test_an_io_error_mid_shoe_and_a_mend(tmp_path: Path, mosquitto: Mosquitto) -> None:
    """ext4 with ``errors=remount-ro``: the storage loses what it acknowledged since a point.

    A snapshot of the file system is taken (frozen) after the first cards; more cards are
    dealt and published; a disk error turns it read-only and the daemon stops on the fault;
    the mend (unmount, the storage back as it was at the snapshot, ``e2fsck``, mount) loses
    every record since, ``seq-mark`` and the cursor with them: only the broker's retained
    messages still show how far the table numbered.
    """
    disk = tmp_path / "journal"
    disk.mkdir()
    image = tmp_path / "journal.ext4"
    with ext4(image, disk) as trigger:
        async with table_with_shoe(tmp_path, mosquitto) as (daemon, shoe, board):
            await asyncio.to_thread(daemon.start)
            await deal(shoe, board, CODES[:6], new_shoe=True)
            await asyncio.sleep(0.3)
            assert run("fsfreeze", "-f", str(disk)).returncode == 0
            try:
                shutil.copyfile(image, tmp_path / "snapshot.ext4")
            finally:
                assert run("fsfreeze", "-u", str(disk)).returncode == 0
            await deal(shoe, board, CODES[6:36], new_shoe=False)
            await asyncio.sleep(0.3)
            published = max(bodies_by_seq(board))
            trigger.write_text("a disk error\n")
            shoe.send(CardDrawn(parse_card(CODES[36])))
            status = await asyncio.to_thread(daemon.wait, WITHIN + FAULT_REPORT_TIMEOUT)
            assert status == FAULT_EXIT, daemon.log()

            await asyncio.to_thread(unmount, disk)
            shutil.copyfile(tmp_path / "snapshot.ext4", image)
            run("e2fsck", "-fy", str(image))
            done = run("mount", "-o", "loop,errors=remount-ro", str(image), str(disk))
            assert done.returncode == 0, done.stderr
            kept = await asyncio.to_thread(replayed_seq, daemon)
            await asyncio.to_thread(daemon.start)
            await board.wait_for(lambda b: bool(lost_alarms(b)), WITHIN)
            await deal(shoe, board, CODES[37:40], new_shoe=False)
            assert await asyncio.to_thread(daemon.stop) == 0
    assert published - kept > 50  # dozens of messages lost with the cards
    assert second_bodies(board) == {}
    (alarm,) = lost_alarms(board)
    assert (alarm["lost_first"], alarm["lost_last"]) == (kept + 1, published)
    assert alarm["seq"] == published + 1
    assert "broker" in daemon.log()
    gaps = [a for a in board.bodies("alarm") if a["kind"] == "sequence_gap"]
    assert gaps
    assert "journal lost" in gaps[0]["text"]
    assert "nothing to record (heartbeats)" not in daemon.log()
