"""A restart during a round: the pit is asked to check it when the device is ``line``.

Real tables with a real journal in a temporary folder: the first records a shoe and two
cards, the second starts on the same journal, as the daemon does after a restart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

from baccarat.controller.config import Config, DeviceConfig, JournalConfig
from baccarat.controller.engine.inputs import parse_input
from baccarat.controller.table import Table


def make_table(folder: Path, protocol: Literal["line", "framed"]) -> Table:
    config = Config(
        table="T1",
        rules={"burn": "none"},
        device=DeviceConfig(kind="serial", path="/dev/null", protocol=protocol),
        journal=JournalConfig(folder=str(folder)),
    )
    table = Table(config)
    table.recover()
    return table


def restart_alarms(table: Table) -> list[dict[str, Any]]:
    bodies = [json.loads(message.payload) for message in table.outbox]
    return [b for b in bodies if b.get("type") == "alarm" and b["kind"] == "restart_in_round"]


def deal(folder: Path, protocol: Literal["line", "framed"], *inputs: str) -> None:
    table = make_table(folder, protocol)
    for text in inputs:
        assert table.handle(parse_input(text, ts=1.0)).refused is None
    table.journal.close()


def test_a_line_table_restarted_mid_round_raises_restart_in_round(tmp_path: Path) -> None:
    deal(tmp_path, "line", "shoe", "9S", "KD")
    table = make_table(tmp_path, "line")
    table.journal.close()
    (alarm,) = restart_alarms(table)
    assert (alarm["shoe"], alarm["round"], alarm["correctable"]) == (1, 1, False)
    assert "cards it has: P1 9S, B1 KD; next: P2" in alarm["text"]


@pytest.mark.parametrize(
    ("protocol", "inputs"),
    [
        ("line", ("shoe", "9S", "KD", "KH", "QD")),  # the round is over: nothing to check
        ("framed", ("shoe", "9S", "KD")),  # the shoe sends again what was not recorded
    ],
)
def test_no_restart_alarm_when_nothing_can_be_missing(
    tmp_path: Path, protocol: Literal["line", "framed"], inputs: tuple[str, ...]
) -> None:
    deal(tmp_path, protocol, *inputs)
    table = make_table(tmp_path, protocol)
    table.journal.close()
    assert restart_alarms(table) == []
