"""The journal's overlapped fdatasync (io_uring) on real files, and what a failed one does."""

from __future__ import annotations

import errno
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.controller.engine.inputs import DrawCard, NewShoe, OpenRound
from baccarat.controller.journal.datasync import InlineSync, UringSync, make_sync
from baccarat.controller.journal.journal import Journal, JournalError, file_name

URING = sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64")
needs_uring = pytest.mark.skipif(not URING, reason="io_uring is tested on x86-64 and arm64")


class FailingDisk:
    """A disk whose flush fails: the data is really written and flushed, then the flush
    reports EIO, as a dying disk would. (A disk that fails on cue cannot exist here.)"""

    name = "failing-disk"

    def __init__(self, fail_from: int) -> None:
        self.calls = 0
        self.fail_from = fail_from
        self.started: int | None = None

    def start(self, fd: int) -> None:
        self.calls += 1
        os.fdatasync(fd)
        self.started = self.calls

    def wait(self) -> None:
        started, self.started = self.started, None
        if started is not None and started >= self.fail_from:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    def close(self) -> None:
        self.started = None


@needs_uring
def test_make_sync_gives_io_uring_here() -> None:
    sync = make_sync()
    try:
        assert isinstance(sync, UringSync)
        assert sync.name == "io_uring"
        assert sync.active
    finally:
        sync.close()
    assert isinstance(make_sync(overlap=False), InlineSync)


@needs_uring
def test_a_flush_started_then_waited_for(tmp_path: Path) -> None:
    sync = UringSync()
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for n in range(50):
            os.write(fd, b"record %d\n" % n)
            sync.start(fd)
            sync.wait()
        sync.wait()  # nothing outstanding: returns at once
        assert sync.active
    finally:
        sync.close()
        os.close(fd)
    assert (tmp_path / "f").read_bytes().count(b"\n") == 50


@needs_uring
def test_one_flush_at_a_time(tmp_path: Path) -> None:
    sync = UringSync()
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        sync.start(fd)
        with pytest.raises(RuntimeError, match="already outstanding"):
            sync.start(fd)
        sync.wait()
    finally:
        sync.close()
        os.close(fd)


@needs_uring
def test_a_file_the_kernel_cannot_flush_asynchronously_falls_back_to_fdatasync(
    tmp_path: Path,
) -> None:
    """A pipe has no fsync: the completion says EINVAL, and so does fdatasync, inline."""
    sync = UringSync()
    read_end, write_end = os.pipe()
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        sync.start(write_end)
        with pytest.raises(OSError) as raised:
            sync.wait()
        assert raised.value.errno == errno.EINVAL
        assert not sync.active  # from now on fdatasync, inline
        os.write(fd, b"x\n")
        sync.start(fd)
        sync.wait()
    finally:
        sync.close()
        for each in (read_end, write_end, fd):
            os.close(each)


@needs_uring
def test_the_journal_overlaps_its_flushes(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    cards = [DrawCard(parse_card(code), ts=1.0 + n) for n, code in enumerate(("4S", "KH", "9D"))]
    with Journal(folder, fsync=True, overlap=True) as journal:
        journal.open()
        assert journal.sync_name == "io_uring"
        journal.append(NewShoe())
        assert not journal.unsettled  # append() waits by itself
        for card in cards:
            journal.append(card, wait=False)
            assert journal.unsettled
            journal.settle()
            assert not journal.unsettled
        journal.append(OpenRound(), wait=False)  # the next call settles it
        journal.append(OpenRound(), wait=False)
    with Journal(folder) as journal:
        assert journal.open().inputs == [NewShoe(), *cards, OpenRound(), OpenRound()]


def test_a_failed_flush_cuts_the_record_and_stops_the_journal(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    disk = FailingDisk(fail_from=2)  # the 2nd flush of an append
    with Journal(folder, fsync=True, sync=disk) as journal:
        journal.open()
        journal.append(NewShoe())  # the first record creates the file: no append sync
        journal.append(OpenRound(), wait=False)
        journal.settle()
        size = (folder / file_name(1)).stat().st_size
        assert journal.append(DrawCard(parse_card("4S")), wait=False) == 3
        assert (folder / file_name(1)).stat().st_size > size  # written, not yet durable
        with pytest.raises(JournalError, match="cannot sync record 3"):
            journal.settle()
        assert (folder / file_name(1)).stat().st_size == size  # cut back: it never was
        with pytest.raises(JournalError, match="failed earlier"):
            journal.append(OpenRound())
    with Journal(folder) as journal:
        recovery = journal.open()
        assert recovery.clean
        assert recovery.inputs == [NewShoe(), OpenRound()]


def test_closing_waits_for_the_last_flush_and_cuts_a_failed_record(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "journal"
    with Journal(folder, fsync=True, sync=FailingDisk(fail_from=1)) as journal:
        journal.open()
        journal.append(NewShoe())
        journal.append(OpenRound(), wait=False)
    assert "cannot sync record 2" in caplog.text
    with Journal(folder) as journal:
        assert journal.open().inputs == [NewShoe()]


_UNDER_MDWE = """
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN (Linux 6.3)
    print("no-mdwe")
    sys.exit(0)
try:
    mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    print("w+x allowed")
except OSError:
    pass
from baccarat.controller.engine.inputs import NewShoe, OpenRound
from baccarat.controller.journal.journal import Journal
with Journal(sys.argv[1], fsync=True, overlap=True) as journal:
    journal.open()
    journal.append(NewShoe())
    journal.append(OpenRound(), wait=False)
    journal.settle()
    print(journal.sync_name)
"""


@needs_uring
def test_the_flush_works_under_the_units_memory_deny_write_execute(tmp_path: Path) -> None:
    """The unit sets MemoryDenyWriteExecute=yes; ctypes must not need W+X memory for it."""
    proc = subprocess.run(
        [sys.executable, "-c", _UNDER_MDWE, str(tmp_path / "journal")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.strip() == "no-mdwe":
        pytest.skip("this kernel has no PR_SET_MDWE (Linux < 6.3)")
    assert proc.stdout.split() == ["io_uring"]


def test_on_a_machine_without_io_uring_wired_the_flush_is_inline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Another architecture cannot exist here: platform.machine() is made to say one."""
    monkeypatch.setattr(platform, "machine", lambda: "s390x")
    sync = make_sync()
    assert isinstance(sync, InlineSync)
    with Journal(tmp_path / "journal", fsync=True, overlap=True) as journal:
        journal.open()
        assert journal.sync_name == "inline"
        journal.append(NewShoe())
        journal.append(OpenRound(), wait=False)
        assert journal.unsettled
        journal.settle()
