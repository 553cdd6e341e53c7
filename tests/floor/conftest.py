"""Fixtures for the floor: a store on each kind of database (tests/conftest.py has them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from baccarat.floor.store import Store, open_store


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = open_store(db_url)
    yield opened
    opened.close()
