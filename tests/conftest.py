"""Fixtures for the whole suite: no thread left behind, real mosquitto brokers, a PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.mosquitto import Mosquitto, MosquittoFactory
from support.postgres import Postgres

THREAD_GRACE = 2.0  # seconds a test's threads get to finish after it


@pytest.fixture(autouse=True)
def no_thread_left_behind() -> Iterator[None]:
    """Fail a test that leaves a thread running (after a short grace period to exit).

    Compares the thread objects before and after, so a thread that ended and another that
    started in its place still count as a leak, and the message names the threads.
    """
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_GRACE
    while True:
        extra = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not extra or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    if extra:
        names = ", ".join(f"{t.name} (daemon={t.daemon}, target={_target(t)})" for t in extra)
        pytest.fail(f"the test left {len(extra)} thread(s) running: {names}", pytrace=False)


def _target(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    return getattr(target, "__qualname__", repr(target))


@pytest.fixture
def mosquitto_factory(tmp_path: Path) -> Iterator[MosquittoFactory]:
    """``mosquitto_factory(**options)``: a started :class:`Mosquitto`, closed after the test.

    Options are those of :class:`Mosquitto` (anonymous, users, acl, tls,
    require_certificate, websockets, persistence, config, extra_config). Each broker gets
    its own folder under the test's tmp_path.
    """
    brokers: list[Mosquitto] = []

    def start(**options: Any) -> Mosquitto:
        broker = Mosquitto(tmp_path / f"mosquitto-{len(brokers)}", **options)
        brokers.append(broker)
        return broker.start()

    yield start
    for broker in brokers:
        broker.close()


@pytest.fixture
def mosquitto(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    """A started broker that lets anyone in (no password, no ACL), on a free loopback port."""
    return mosquitto_factory()


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A started private PostgreSQL cluster on a free loopback port, for the whole session."""
    cluster = Postgres().start()
    yield cluster
    cluster.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new empty floor database of each kind: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "floor.db")
    cluster: Postgres = request.getfixturevalue("postgres")
    return cluster.new_database()
