"""Disk faults reach MQTT: the table stops in order, says why, and loses no card.

The real daemon process, a virtual framed shoe on a real pty, a real mosquitto, and real
faults on a file system the test mounts (as root): a small tmpfs that fills up or is
remounted read-only, a loop-mounted ext4 that a disk error turns read-only, a journal
folder locked by another process. Each gives the fault alarm and the retained status on
MQTT, one log line, exit status :data:`FAULT_EXIT` and no traceback; a restart after the
fault is fixed loses no card. (The full disk that the journal's append hits first is
tests/drivers/test_disk_fault.py.)
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from baccarat.controller.faults import FAULT_EXIT
from baccarat.controller.journal.writer import LOCK_NAME
from baccarat.controller.serving import FAULT_REPORT_TIMEOUT
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, replay_journal, retained_body
from support.disk import (
    CARDS,
    WITHIN,
    cards,
    cards_published,
    cursor_caught_up,
    ext4,
    fault_reported,
    fill,
    journal_sizes,
    mount_tmpfs,
    needs_root,
    padding_for,
    profile_file,
    remount,
    repair_ext4,
    unmount,
)
from support.mosquitto import Mosquitto

pytestmark = needs_root


@asynccontextmanager
async def table_with_shoe(
    folder: Path, broker: Mosquitto, profile: Path | None = None
) -> AsyncIterator[tuple[Daemon, VirtualShoe, Recorder]]:
    """A daemon (not started) on a framed virtual shoe, and a board recording table T1."""
    shoe_path = str(folder / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(
            folder, broker, device=shoe_path,
            profile=str(profile or profile_file(folder, 0)),
        )
        try:
            async with Recorder(broker) as board:
                yield daemon, shoe, board
        finally:
            daemon.close()


async def deal(shoe: VirtualShoe, board: Recorder, count: int) -> None:
    """A new shoe and its first ``count`` cards, until the board has them."""
    shoe.send(ShoeInserted())
    for card in CARDS[:count]:
        shoe.send(CardDrawn(card))
    await board.wait_for(cards_published(count), WITHIN)


async def stopped_on_fault(daemon: Daemon, board: Recorder) -> str:
    """Until the daemon has stopped by itself and the board has the fault; its log."""
    exit_status = await asyncio.to_thread(daemon.wait, WITHIN + FAULT_REPORT_TIMEOUT)
    log = daemon.log()
    assert exit_status == FAULT_EXIT, log
    await board.wait_for(lambda b: bool(b.bodies("fault")), WITHIN)
    return log


def one_fault_line(log: str, *words: str) -> str:
    """The one CRITICAL line of the log (asserted), which names ``words``; no traceback."""
    lines = [line for line in log.splitlines() if "CRITICAL" in line]
    assert len(lines) == 1, log
    assert "Traceback" not in log, log
    for word in words:
        assert word in lines[0], log
    return lines[0]


def fault_of(board: Recorder, *words: str) -> dict[str, Any]:
    """The one fault alarm the board saw on ``alarm``, which names ``words``.

    The same body is on the retained ``fault`` topic too.
    """
    (fault,) = [b for t, b in board.received if t.endswith("/alarm") and b["type"] == "fault"]
    assert [b for t, b in board.received if t.endswith("/fault")] in ([], [fault])
    assert fault["kind"] == "journal_fault"
    assert (fault["article"], fault["correctable"], fault["corrections"]) == ("device", False, [])
    for word in words:
        assert word in fault["text"], fault
    return fault


async def test_a_full_disk_that_the_cursor_hits_first(tmp_path: Path, mosquitto: Mosquitto) -> None:
    sizes = await journal_sizes(tmp_path / "probe", mosquitto, str(tmp_path / "probe-shoe"))
    record = sizes[2] - sizes[1]
    padding = padding_for(sizes, record + record // 2)  # the third card's record fits
    folder = tmp_path / "table"
    disk = folder / "journal"
    disk.mkdir(parents=True)
    profile = profile_file(folder, padding)
    mount_tmpfs(disk)
    try:
        async with table_with_shoe(folder, mosquitto, profile) as (daemon, shoe, board):
            await asyncio.to_thread(daemon.start)
            await deal(shoe, board, 2)
            await cursor_caught_up(daemon, board)
            filler = await asyncio.to_thread(fill, disk)

            shoe.send(CardDrawn(CARDS[2]))  # recorded in the last page; the cursor is not
            log = await stopped_on_fault(daemon, board)
            await board.wait_for(fault_reported, WITHIN)
            line = one_fault_line(log, "published", "No space left on device")
            fault = fault_of(board, "published", "No space left on device")
            assert cards(board) == ["9S", "2H", "KD"]
            assert await retained_body(mosquitto) == {
                **{k: v for k, v in board.bodies("status")[0].items() if k != "device"},
                "state": "offline", "fault": fault["text"],  # offline: no device to tell
            }

            filler.unlink()
            await asyncio.to_thread(daemon.start)
            async with asyncio.timeout(WITHIN):
                await shoe.drain()
            assert await asyncio.to_thread(daemon.stop) == 0
            replayed = await asyncio.to_thread(replay_journal, daemon, profile)
    finally:
        unmount(disk)
    assert f"exit status {FAULT_EXIT}" in line
    assert [m["card"] for m in replayed if m["type"] == "card"] == ["9S", "2H", "KD"]
    assert cards(board) == ["9S", "2H", "KD"]


async def test_a_read_only_journal_at_start(tmp_path: Path, mosquitto: Mosquitto) -> None:
    disk = tmp_path / "journal"
    disk.mkdir()
    mount_tmpfs(disk, "1m")
    try:
        async with table_with_shoe(tmp_path, mosquitto) as (daemon, shoe, board):
            await asyncio.to_thread(daemon.start)
            await deal(shoe, board, 2)
            assert await asyncio.to_thread(daemon.stop) == 0
            remount(disk, "ro")

            board.received.clear()
            await asyncio.to_thread(daemon.start, wait_ready=False)
            log = await stopped_on_fault(daemon, board)
            await board.wait_for(fault_reported, WITHIN)
            one_fault_line(log, "Read-only file system")
            fault = fault_of(board, str(disk), "Read-only file system")
            assert {s["state"] for s in board.bodies("status")} == {"offline"}  # never online
            assert (fault["shoe"], fault["round"]) == (None, None)  # no journal, no state
            assert (await retained_body(mosquitto) or {}).get("fault") == fault["text"]
            kept = await retained_body(mosquitto, "fault")  # a late screen sees it too
            assert kept is not None
            assert (kept["type"], kept["text"]) == ("fault", fault["text"])

            remount(disk, "rw")
            await asyncio.to_thread(daemon.start)
            shoe.send(CardDrawn(CARDS[2]))
            await board.wait_for(cards_published(1), WITHIN)
            assert await retained_body(mosquitto, "fault") is None  # over: cleared
            assert await asyncio.to_thread(daemon.stop) == 0
            replayed = await asyncio.to_thread(replay_journal, daemon)
    finally:
        unmount(disk)
    assert [m["card"] for m in replayed if m["type"] == "card"] == ["9S", "2H", "KD"]


async def test_a_disk_error_turns_the_journal_read_only_while_serving(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    disk = tmp_path / "journal"
    disk.mkdir()
    image = tmp_path / "journal.ext4"
    with ext4(image, disk) as trigger:
        async with table_with_shoe(tmp_path, mosquitto) as (daemon, shoe, board):
            await asyncio.to_thread(daemon.start)
            await deal(shoe, board, 2)
            await cursor_caught_up(daemon, board)
            trigger.write_text("a disk error\n")  # ext4: errors=remount-ro

            shoe.send(CardDrawn(CARDS[2]))
            log = await stopped_on_fault(daemon, board)
            await board.wait_for(fault_reported, WITHIN)
            one_fault_line(log, "cannot append record", "Read-only file system")
            fault = fault_of(board, "Read-only file system")
            assert (fault["shoe"], fault["round"]) == (1, 1)
            unacknowledged = len(shoe.sender.unacknowledged)
            assert cards(board) == ["9S", "2H"]

            await asyncio.to_thread(repair_ext4, image, disk)
            await asyncio.to_thread(daemon.start)
            await board.wait_for(cards_published(3), WITHIN)
            async with asyncio.timeout(WITHIN):
                await shoe.drain()
            assert await asyncio.to_thread(daemon.stop) == 0
            replayed = await asyncio.to_thread(replay_journal, daemon)
    assert unacknowledged == 1  # the third card's frame: the shoe sent it again
    assert cards(board) == ["9S", "2H", "KD"]
    assert [m["card"] for m in replayed if m["type"] == "card"] == ["9S", "2H", "KD"]


async def test_a_journal_on_a_full_disk_at_start(tmp_path: Path, mosquitto: Mosquitto) -> None:
    disk = tmp_path / "journal"
    disk.mkdir()
    mount_tmpfs(disk)
    try:
        async with table_with_shoe(tmp_path, mosquitto) as (daemon, shoe, board):
            filler = await asyncio.to_thread(fill, disk)
            # an empty journal needs no room yet, but the daemon proves it can write
            # before it opens the shoe: a fault at once, the shoe's frame not taken
            await asyncio.to_thread(daemon.start, wait_ready=False)
            shoe.send(ShoeInserted())
            log = await stopped_on_fault(daemon, board)
            await board.wait_for(fault_reported, WITHIN)
            one_fault_line(log, "cannot write to journal", "No space left on device")
            fault_of(board, "No space left on device")
            assert sorted(p.name for p in disk.iterdir()) == [".lock", "filler"]
            assert shoe.sender.unacknowledged  # the shoe's frame: it will send it again

            filler.unlink()
            await asyncio.to_thread(daemon.start)
            shoe.send(CardDrawn(CARDS[0]))
            await board.wait_for(cards_published(1), WITHIN)
            assert await asyncio.to_thread(daemon.stop) == 0
            replayed = await asyncio.to_thread(replay_journal, daemon)
    finally:
        unmount(disk)
    assert [m["type"] for m in replayed][:1] == ["shoe"]  # the shoe, sent again, then its card
    assert [m["card"] for m in replayed if m["type"] == "card"] == ["9S"]


@contextmanager
def lock_held_by_another_process(folder: Path) -> Iterator[None]:
    """A process of its own holds the journal folder's lock until the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('locked', flush=True)\n"
         "sys.stdin.read()\n",
         str(folder / LOCK_NAME)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(WITHIN)


async def test_a_journal_locked_by_another_process(tmp_path: Path, mosquitto: Mosquitto) -> None:
    async with table_with_shoe(tmp_path, mosquitto) as (daemon, shoe, board):
        with lock_held_by_another_process(daemon.journal):
            await asyncio.to_thread(daemon.start, wait_ready=False)
            log = await stopped_on_fault(daemon, board)
            one_fault_line(log, "in use by another process")
            fault_of(board, "in use by another process")
            # The status belongs to whoever holds the journal: left alone (none here).
            assert board.bodies("status") == []
            assert await retained_body(mosquitto) is None

        await asyncio.to_thread(daemon.start)
        await deal(shoe, board, 1)
        assert await asyncio.to_thread(daemon.stop) == 0
    assert cards(board) == ["9S"]


async def test_a_fault_at_start_with_the_broker_away_waits_a_bounded_time(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    daemon = Daemon(tmp_path, mosquitto)
    (tmp_path / "journal").write_text("not a folder\n")  # the journal cannot be opened
    await mosquitto.stop_async()
    try:
        started = asyncio.get_running_loop().time()
        await asyncio.to_thread(daemon.start, wait_ready=False)
        exit_status = await asyncio.to_thread(daemon.wait, FAULT_REPORT_TIMEOUT + WITHIN)
        took = asyncio.get_running_loop().time() - started
        log = daemon.log()
    finally:
        daemon.close()
    assert exit_status == FAULT_EXIT, log
    one_fault_line(log, "cannot open journal")
    assert "the broker did not take the fault" in log
    assert FAULT_REPORT_TIMEOUT <= took < FAULT_REPORT_TIMEOUT + WITHIN
    assert (tmp_path / "journal").read_text() == "not a folder\n"


async def test_a_second_daemon_on_the_same_journal_leaves_the_first_serving(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with table_with_shoe(tmp_path, mosquitto) as (daemon, shoe, board):
        await asyncio.to_thread(daemon.start)
        (tmp_path / "second").mkdir()
        second = Daemon(tmp_path / "second", mosquitto)
        second.config.write_text(daemon.config.read_text())  # the same table, by mistake
        try:
            await asyncio.to_thread(second.start, wait_ready=False)
            log = await stopped_on_fault(second, board)
        finally:
            second.close()
        one_fault_line(log, "in use by another process")
        await asyncio.sleep(2.0)  # the first reconnects if the second took its session
        assert (await retained_body(mosquitto) or {}).get("state") == "online"
        await deal(shoe, board, 1)
        assert await asyncio.to_thread(daemon.stop) == 0
    assert cards(board) == ["9S"]


async def test_a_line_shoe_is_not_read_while_the_disk_is_full(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Each start on a full disk is a fault before the port is opened.

    The cards the shoe sent wait in the port, and the start after the disk is freed takes
    them all.
    """
    disk = tmp_path / "journal"
    disk.mkdir()
    mount_tmpfs(disk)
    shoe_path = str(tmp_path / "shoe")
    try:
        async with VirtualShoe(shoe_path, "line", baud=9600) as shoe:
            daemon = Daemon(tmp_path, mosquitto, device=shoe_path, protocol="line", baud=9600,
                            rules={"burn": "none"})
            try:
                async with Recorder(mosquitto) as board:
                    filler = await asyncio.to_thread(fill, disk)
                    for card in CARDS:
                        shoe.send(CardDrawn(card))
                    await shoe.drain()  # in the port, for whoever opens it
                    for _ in range(2):
                        board.received.clear()
                        await asyncio.to_thread(daemon.start, wait_ready=False)
                        log = await stopped_on_fault(daemon, board)
                        await board.wait_for(fault_reported, WITHIN)
                        one_fault_line(log, str(disk), "No space left on device")
                        fault_of(board, "No space left on device")
                    assert "cannot write to journal" in log  # the write probe, not an input
                    assert sorted(p.name for p in disk.iterdir()) == [".lock", "filler"]

                    filler.unlink()
                    await asyncio.to_thread(daemon.start)
                    async with asyncio.timeout(WITHIN):
                        while len(daemon.journaled_cards()) < len(CARDS):  # noqa: ASYNC110
                            await asyncio.sleep(0.1)
                    assert await asyncio.to_thread(daemon.stop) == 0
            finally:
                daemon.close()
            taken = daemon.journaled_cards()
    finally:
        unmount(disk)
    assert taken == [str(card) for card in CARDS]
