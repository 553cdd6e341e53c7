"""Fixtures for the pit's history view: the floor's databases, SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.postgres import Postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A started PostgreSQL cluster on a free loopback port, for the whole session."""
    cluster = Postgres().start()
    yield cluster
    cluster.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new empty database of each kind: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "floor.db")
    cluster: Postgres = request.getfixturevalue("postgres")
    return cluster.new_database()
