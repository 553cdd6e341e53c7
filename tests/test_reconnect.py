"""The one reconnector: attempts, the backoff between them, the states, giving up."""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path

import pytest

from baccarat.backoff import Backoff
from baccarat.reconnect import LinkState, Lost, Reconnector


class LinkDownError(OSError):
    """What the links of these tests raise when an attempt fails."""


def quick_backoff() -> Backoff:
    return Backoff(first=0.001, cap=0.004, rng=random.Random(1))


async def test_failed_attempts_wait_the_backoff_and_a_connection_starts_it_over() -> None:
    script = ["fail", "fail", "up-then-lost", "fail", "stop"]
    lost: list[Lost] = []
    states: list[LinkState] = []
    backoff = quick_backoff()

    async def attempt() -> str | None:
        step = script.pop(0)
        if step == "stop":
            raise asyncio.CancelledError
        if step == "up-then-lost":
            link.connected()
            assert backoff.failures == 0  # the delays start over once the link is up
            return "cable pulled"
        raise LinkDownError("refused")

    link = Reconnector(attempt, backoff=backoff, errors=(LinkDownError,),
                       on_lost=lost.append, on_state=states.append)
    assert link.state is LinkState.IDLE
    with pytest.raises(asyncio.CancelledError):
        await link.run()
    assert [(each.was_up, each.failures, each.outage, each.first) for each in lost] == [
        (False, 1, 1, True), (False, 2, 2, False), (True, 0, 1, True), (False, 1, 2, False),
    ]
    assert lost[2].reason == "cable pulled"
    assert isinstance(lost[0].reason, LinkDownError)
    assert all(each.delay is not None and 0 < each.delay <= 0.004 for each in lost)
    assert states[:4] == [
        LinkState.CONNECTING, LinkState.WAITING, LinkState.CONNECTING, LinkState.WAITING,
    ]
    assert LinkState.UP in states
    assert link.state is LinkState.CONNECTING


async def test_it_gives_up_after_max_attempts_failed_in_a_row() -> None:
    lost: list[Lost] = []

    async def attempt() -> None:
        raise LinkDownError("no such port")

    link = Reconnector(attempt, backoff=quick_backoff(), errors=(LinkDownError,),
                       on_lost=lost.append, max_attempts=3)
    await asyncio.wait_for(link.run(), 5)
    assert [each.failures for each in lost] == [1, 2, 3]
    assert lost[-1].delay is None
    assert link.state is LinkState.FAILED
    link.stopped()
    assert link.state is LinkState.FAILED  # a link that gave up says so, stopped or not


async def test_an_error_that_is_not_the_links_is_a_bug_and_ends_the_loop() -> None:
    async def attempt() -> None:
        raise KeyError("a bug")

    link = Reconnector(attempt, backoff=quick_backoff(), errors=(LinkDownError,),
                       on_lost=lambda lost: None)
    with pytest.raises(KeyError):
        await link.run()


def test_in_a_worker_thread_a_stop_cuts_the_wait_short() -> None:
    stop = threading.Event()
    lost: list[Lost] = []

    def attempt() -> None:
        if len(lost) == 2:
            stop.set()
        raise LinkDownError("unplugged")

    link = Reconnector(attempt, backoff=Backoff(first=30, cap=60), errors=(LinkDownError,),
                       on_lost=lost.append)
    worker = threading.Thread(target=link.run_blocking, args=(stop,))
    worker.start()
    worker.join(timeout=0.5)
    assert worker.is_alive()  # waiting out its first delay (15 to 30 s)
    stop.set()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert len(lost) == 1


async def test_an_error_no_attempt_can_outlive_gives_up_at_once() -> None:
    lost: list[Lost] = []

    async def attempt() -> None:
        raise LookupError("no USB backend")

    link = Reconnector(attempt, backoff=quick_backoff(), errors=(LinkDownError,),
                       give_up_on=(LookupError,), on_lost=lost.append)
    await asyncio.wait_for(link.run(), 5)
    assert [(each.failures, each.delay) for each in lost] == [(1, None)]
    assert link.state is LinkState.FAILED


async def test_an_operation_is_retried_until_it_is_done() -> None:
    """until_done: the recorder's write, tried again while the database is unavailable."""
    lost: list[Lost] = []
    tries: list[str] = []

    async def write(row: str) -> str:
        tries.append(row)
        if len(tries) < 3:
            raise LinkDownError("database unavailable")
        return f"stored {row}"

    link = Reconnector(write, backoff=quick_backoff(), errors=(LinkDownError,),
                       on_lost=lost.append)
    assert await asyncio.wait_for(link.until_done("r1"), 5) == "stored r1"
    assert tries == ["r1", "r1", "r1"]
    assert [each.failures for each in lost] == [1, 2]


def test_only_the_reconnector_waits_between_attempts() -> None:
    """The acceptance of issue 31: one module holds a reconnect loop.

    A loop that reconnects waits the backoff's delay; only baccarat/reconnect.py asks for
    one, but for the publisher's hold of a refused message (:meth:`Publisher._retry_alone`:
    one message sent again on a live connection, not a link made again).
    """
    src = Path(__file__).resolve().parents[1] / "src" / "baccarat"
    askers = sorted(
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if ".next_delay()" in path.read_text(encoding="utf-8") and path.name != "backoff.py"
    )
    assert askers == ["controller/publisher.py", "reconnect.py"]
    publisher = (src / "controller" / "publisher.py").read_text(encoding="utf-8")
    assert publisher.count(".next_delay()") == 1
    retry = publisher[publisher.index("async def _retry_alone"):]
    assert ".next_delay()" in retry[: retry.index("\n    async def ", 1)]
