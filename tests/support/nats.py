"""A real three-node NATS JetStream cluster for tests, and tables' traffic to send through it.

    cluster = start_cluster(tmp_path, tables=["T07"])   # three nats-server processes
    cluster.kill(0); cluster.start_node(0)              # SIGKILL a node, bring it back
    cluster.close()

:class:`baccarat.floor.nodes.LocalCluster` with every node killed if the test process dies
(PR_SET_PDEATHSIG, as :mod:`support.mosquitto` does for its brokers). :func:`traffic` makes
a table's real bodies with the engine (tests/support/tables.py): a shoe, then cards.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from baccarat.floor.nodes import LocalCluster
from support.mosquitto import _die_with_parent
from support.tables import Table

RANKS = "A23456789TJQK"
SUITS = "SHDC"
TEST_BYTES = 256 * 1024**2
"""The test stream's max_bytes (the nodes' max_file_store is 2 GB)."""


def start_cluster(folder: Path, **options: object) -> LocalCluster:
    """Three nodes started (the test is skipped, saying so, if nats-server is missing)."""
    if shutil.which("nats-server") is None and not Path("/usr/sbin/nats-server").exists():
        pytest.skip("nats-server is not installed (scripts/setup --system installs it)")
    cluster = LocalCluster(folder, **options)  # type: ignore[arg-type]
    cluster.preexec = _die_with_parent
    return cluster.start()


def traffic(table: str, cards: int, seed: int = 0) -> list[tuple[str, bytes]]:
    """A table's bodies, with its topics: a shoe, then ``cards`` cards (rounds, results)."""
    engine = Table()
    shuffled = random.Random(f"{table}:{seed}")
    messages = engine.do("shoe")
    for _ in range(cards):
        messages += engine.do(shuffled.choice(RANKS) + shuffled.choice(SUITS))
    return [(f"baccarat/{table}/{m.topic}", m.to_json().encode()) for m in messages]
