"""Real disk faults for the journal, mounted by the test.

A small tmpfs that fills up, a loop-mounted ext4 that turns read-only on an error, and a
journal laid out so that a chosen write is the one that fails.

Mounting needs root; each helper skips the test when the kernel refuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from baccarat.cards import Card, parse_card
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

PAGE = os.sysconf("SC_PAGE_SIZE")
"""tmpfs gives a file its space a page at a time."""
CARDS: list[Card] = [parse_card(code) for code in ("9S", "2H", "KD")]
WITHIN = 15.0
"""Seconds any one step may take before the test fails."""

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounts file systems: needs root")


def run(*command: str) -> subprocess.CompletedProcess[str]:
    """Run a mount tool, never for long; its result (not checked)."""
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def mount_tmpfs(path: Path, size: str = "256k") -> None:
    """A tmpfs of ``size`` at ``path`` (skip the test if it cannot be mounted)."""
    done = run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs for the journal: {done.stderr.strip()}")


def remount(path: Path, mode: str) -> None:
    """``mount -o remount,ro`` or ``rw``."""
    done = run("mount", "-o", f"remount,{mode}", str(path))
    assert done.returncode == 0, done.stderr


def unmount(path: Path) -> None:
    """Unmount (the test's own mount)."""
    done = run("umount", str(path))
    assert done.returncode == 0, done.stderr


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


@contextlib.contextmanager
def ext4(image: Path, path: Path) -> Iterator[Path]:
    """An 8 MiB ext4 in ``image``, loop-mounted at ``path`` with ``errors=remount-ro``.

    Yields the file that turns it read-only as a disk error would
    (``/sys/fs/ext4/<loop>/trigger_fs_error``).
    """
    with image.open("wb") as f:
        f.truncate(8 << 20)
    done = run("mkfs.ext4", "-q", "-F", str(image))
    if done.returncode:
        pytest.skip(f"mkfs.ext4: {done.stderr.strip()}")
    done = run("mount", "-o", "loop,errors=remount-ro", str(image), str(path))
    if done.returncode:
        pytest.skip(f"cannot loop-mount an ext4 for the journal: {done.stderr.strip()}")
    try:
        device = Path(run("findmnt", "-no", "SOURCE", str(path)).stdout.strip()).name
        trigger = Path("/sys/fs/ext4") / device / "trigger_fs_error"
        if not trigger.exists():
            pytest.skip(f"{trigger} is missing: this kernel cannot fail an ext4 on cue")
        yield trigger
    finally:
        run("umount", str(path))


def repair_ext4(image: Path, path: Path) -> None:
    """After an error: unmount, fsck, and mount it read-write again."""
    unmount(path)
    run("e2fsck", "-fy", str(image))  # exit 1: errors corrected, as expected
    done = run("mount", "-o", "loop,errors=remount-ro", str(image), str(path))
    assert done.returncode == 0, done.stderr


def profile_file(folder: Path, padding: int) -> Path:
    """The table's profile in ``folder``: burn none, its name ``padding`` characters longer."""
    path = folder / "profile.toml"
    name = "macau" + "-" * padding
    path.write_text(f'[profile]\nbase = "macau"\nname = "{name}"\nburn = "none"\n')
    return path


def cards_published(count: int) -> Callable[[Recorder], bool]:
    """A condition: ``count`` card messages have arrived (by seq)."""

    def enough(board: Recorder) -> bool:
        return len({body["seq"] for body in board.bodies("card")}) >= count

    return enough


def fault_reported(board: Recorder) -> bool:
    """A condition: the fault alarm and the retained status that names it have arrived."""
    statuses = board.bodies("status")
    return bool(board.bodies("fault")) and bool(statuses) and "fault" in statuses[-1]


def cards(board: Recorder) -> list[str]:
    """The cards the board has seen, in seq order, each once."""
    published = [b for b in board.by_seq().values() if b.get("type") == "card"]
    return [b["card"] for b in sorted(published, key=lambda b: b["seq"])]


async def cursor_caught_up(daemon: Daemon, board: Recorder) -> None:
    """Until the daemon's published cursor names the newest message the board has."""
    newest = max(board.by_seq())
    cursor = daemon.journal / "published"
    async with asyncio.timeout(WITHIN):
        while True:
            with contextlib.suppress(OSError, ValueError):
                if int(cursor.read_text()) >= newest:
                    return
            await asyncio.sleep(0.05)


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


def padding_for(sizes: list[int], room: int) -> int:
    """The profile name's padding that leaves ``room`` bytes in the page after card 2."""
    return -(sizes[1] + room) % PAGE
