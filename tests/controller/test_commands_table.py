"""The table's command handler in-process: a bug behind a command never reaches the receive loop.

A bug cannot be made to happen with real parts, so one is planted (monkeypatch) in the
engine; everything else is real: the table, its journal folder, its outbox.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baccarat.controller.config import Config, DeviceConfig, JournalConfig
from baccarat.controller.engine.engine import Engine
from baccarat.controller.table import Table


def make_table(tmp_path: Path) -> Table:
    config = Config(
        table="T7",
        device=DeviceConfig(kind="none"),
        journal=JournalConfig(folder=tmp_path / "journal"),
        rules={"burn": "none"},
    )
    table = Table(config)
    table.recover()
    return table


def replies(table: Table) -> list[dict[str, object]]:
    return [json.loads(m.payload) for m in table.outbox if m.topic.endswith("/reply")]


async def test_a_bug_behind_a_command_is_answered_and_logged_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    table = make_table(tmp_path)
    try:
        with monkeypatch.context() as patch:

            def broken(self: Engine, inp: object) -> None:
                raise RuntimeError("planted bug")

            patch.setattr(Engine, "feed", broken)
            await table.on_command("shoe", b'{"id": 1}', None)  # must not raise
        await table.on_command("shoe", b'{"id": 2}', None)
    finally:
        table.journal.close()
    bug, after = replies(table)
    assert (bug["ok"], bug["command"]) == (False, "shoe")
    assert "internal error" in str(bug["error"])
    assert (after["id"], after["ok"]) == (2, True)
    assert "planted bug" in caplog.text


async def test_a_retained_command_is_answered_not_carried_out(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    try:
        await table.on_command("shoe", b"{}", None, True)
    finally:
        table.journal.close()
    [answer] = replies(table)
    assert answer["ok"] is False
    assert table.engine.shoe is None
