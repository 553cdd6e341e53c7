"""Fixtures for driver and simulator tests: leak checks and a place for device symlinks."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio


def open_fds() -> set[int]:
    """The file descriptors this process has open now."""
    return {int(name) for name in os.listdir("/proc/self/fd")}


@pytest.fixture(autouse=True)
def no_leaked_threads_or_fds() -> Iterator[None]:
    """Fail a test that leaves threads running or file descriptors open."""
    threads_before = set(threading.enumerate())
    fds_before = open_fds()
    yield
    leaked_threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
    for thread in leaked_threads:
        thread.join(timeout=2.0)
    assert not [t for t in leaked_threads if t.is_alive()], "threads left running"
    leaked = {fd for fd in open_fds() - fds_before if _is_real(fd)}
    assert not leaked, f"file descriptors left open: {sorted(leaked)}"


def _is_real(fd: int) -> bool:
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False  # closed in the meantime (the listing's own descriptor)
    return not target.startswith("anon_inode:")  # the event loop's own epoll and eventfds


@pytest_asyncio.fixture(autouse=True)
async def no_leaked_tasks(no_leaked_threads_or_fds: None) -> AsyncIterator[None]:
    """Fail an async test that leaves tasks running on its loop.

    Then shut the loop's default executor down, so that the thread check (which runs
    after this) sees only threads the test itself left behind.
    """
    yield
    current = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    if left:  # pyserial-asyncio-fast closes ports in a background task: a moment
        await asyncio.wait(left, timeout=1.0)
    still = [t for t in left if not t.done()]
    assert not still, f"tasks left running: {still}"
    await asyncio.get_running_loop().shutdown_default_executor()


@pytest.fixture
def device_link(tmp_path: Path) -> Path:
    """Where a virtual device puts its stable symlink."""
    return tmp_path / "serial-by-id-shoe"
