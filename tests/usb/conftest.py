"""Fixtures for the USB driver tests: fast timeouts, and no thread or task left behind."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from baccarat.drivers import source, usb_source
from baccarat.sim_hardware import virtual_shuffler


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves a thread running (waits briefly for threads that are ending)."""
    before = threading.active_count()
    yield
    deadline = time.monotonic() + 2.0
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before, f"threads left: {threading.enumerate()}"


@pytest.fixture(autouse=True)
async def no_leaked_tasks() -> AsyncIterator[None]:
    """Fail a test that leaves an asyncio task running."""
    yield
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert not others, f"tasks left: {others}"


@pytest.fixture(autouse=True)
def fast_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink the source's and the virtual shuffler's timeouts (all in seconds)."""
    monkeypatch.setattr(usb_source, "READ_TIMEOUT", 0.02)
    monkeypatch.setattr(usb_source, "HANDOFF_POLL", 0.02)
    monkeypatch.setattr(source, "RECONNECT_FIRST", 0.01)
    monkeypatch.setattr(source, "RECONNECT_CAP", 0.05)
    monkeypatch.setattr(usb_source, "STOP_TIMEOUT", 2.0)
    monkeypatch.setattr(virtual_shuffler, "RETRANSMIT_TIMEOUT", 0.05)
