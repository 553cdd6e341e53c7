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


# Seconds of worker time each of the longest modules took (a run of the whole suite on two
# workers, 2026-12-04: docs/developers.md#the-suite). xdist hands the workers tests in
# collection order (a module's xdist_group as one unit, the largest groups first); a long
# test that starts last keeps one worker busy alone at the end, so the longest modules go
# first, then the other modules with a test marked slow, then the rest as collected. A
# module's tests stay together (its module-scoped fixtures are made once). The figures only
# order the run: a module missing here or grown since runs a little later, nothing more.
LONGEST_MODULES: dict[str, int] = {
    "tests/rules/test_edge.py": 361,
    "tests/packaging/test_deb_arm64.py": 211,
    "tests/drivers/test_framed_restart_daemon.py": 123,
    "tests/packaging/test_deb.py": 83,
    "tests/floor/test_recorder.py": 78,
    "tests/drivers/test_board_shows_the_table.py": 76,
    "tests/drivers/test_board_at_dealing_pace.py": 68,
    "tests/pit/test_pit_console.py": 67,
    "tests/examples/test_floor_bridge.py": 52,
    "tests/floor/test_recorder_broker.py": 47,
    "tests/boards/test_web_board.py": 45,
    "tests/floor/test_derived.py": 44,
    "tests/controller/test_outbox_across_files.py": 42,
    "tests/pit/test_pit_history_e2e.py": 40,
    "tests/controller/test_disk_faults.py": 38,
    "tests/pit/test_pit_cli.py": 33,
    "tests/pit/test_pit_history.py": 31,
    "tests/pit/test_pit_quarantine.py": 31,
    "tests/controller/test_daemon.py": 31,
    "tests/drivers/test_line_daemon.py": 27,
    "tests/boards/test_web_forged.py": 24,
    "tests/cli/test_rough_edges.py": 23,
    "tests/drivers/test_shoe_over_pty.py": 21,
    "tests/sim_hardware/test_sim_floor.py": 21,
    "tests/packaging/test_identity.py": 21,
    "tests/floor/test_history_tail.py": 20,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first (``LONGEST_MODULES``), then those with a slow test."""
    root = Path(__file__).resolve().parents[1]
    weight: dict[Path, int] = {}
    for item in items:
        module = item.path
        known = LONGEST_MODULES.get(module.relative_to(root).as_posix(), 0)
        slow = 1 if item.get_closest_marker("slow") is not None else 0
        weight[module] = max(weight.get(module, 0), known, slow)
    items.sort(key=lambda item: -weight[item.path])  # stable: each module's order kept
