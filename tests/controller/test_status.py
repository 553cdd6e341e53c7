"""The retained ``status`` body names the controller's version (issue 12: software identity)."""

from __future__ import annotations

import json
from importlib.metadata import version

from baccarat.controller.publisher import status_payload


def test_status_carries_the_installed_version() -> None:
    body = json.loads(status_payload("online", "T1"))
    assert body == {
        "schema": 1, "type": "status", "state": "online", "table": "T1",
        "version": version("baccarat-controller"),
    }
    assert json.loads(status_payload("offline", "T1"))["state"] == "offline"
