"""Fixtures of the pit's tests: a broker with the example's accounts and ACL."""

from __future__ import annotations

import pytest

from pit.history_support import history_broker
from support.mosquitto import Mosquitto, MosquittoFactory


@pytest.fixture
def broker(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    """A broker with three of the example's accounts, its ACL and a WebSocket listener."""
    return history_broker(mosquitto_factory)
