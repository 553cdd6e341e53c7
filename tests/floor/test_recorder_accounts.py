"""The recorder accounts for every message it receives: its log adds up, and so do its metrics.

``baccarat record`` as a process, a real mosquitto, a SQLite database. Each kind of message
a floor sees is published (new, repeated, hostile, an operator command, a retained status,
the pit's limits), and the stop line must say where each one went.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from floor.test_recorder import FLOOR_BROKER, RecorderProcess, card_body, recording
from floor.test_recorder_metrics import eventually, value
from support.mosquitto import Mosquitto
from support.postgres import _free_port

LIMITS = {"schema": 1, "type": "limits", "table": "T1", "currency": "HKD",
          "banker": [100, 10000], "player": [100, 10000], "tie": [50, 1000]}


async def test_received_is_stored_plus_duplicates_quarantined_and_skipped_by_reason(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    db = str(tmp_path / "floor.db")
    port = _free_port()
    recorder = RecorderProcess(tmp_path, broker, db)
    recorder.argv += ["--metrics-port", str(port)]
    recorder.start()
    try:
        await recording(broker, db)
        async with broker.client() as table:
            for seq in (1, 2, 3, 2):  # the last one again: a duplicate
                await table.publish("baccarat/T1/card", json.dumps(card_body(seq)), qos=1)
            await table.publish("baccarat/T1/card", b"\xff not json", qos=1)
            await table.publish("baccarat/T1/cmd/void", b'{"id": 1}', qos=1)
            await table.publish("baccarat/T1/limits", json.dumps(LIMITS), qos=1)
            online = {"schema": 1, "type": "status", "state": "online", "table": "T1"}
            await table.publish("baccarat/T1/status", json.dumps(online), qos=1)

        def settled(samples: Any) -> bool:
            return (value(samples, "quarantined_total", cause="encoding") >= 1
                    and value(samples, "statuses_total") >= 1
                    and value(samples, "skipped_total", reason="command") >= 1)

        samples = await eventually(port, settled)
        assert value(samples, "skipped_total", reason="command") == 1
        assert value(samples, "duplicates_total") >= 1
        parts = ["stored", "duplicates", "conflicts", "statuses", "unrecorded"]
        total = sum(value(samples, f"{p}_total") for p in parts)
        total += sum(v for (name, _), v in samples.items()
                     if name in ("baccarat_recorder_quarantined_total",
                                 "baccarat_recorder_skipped_total"))
        assert total == value(samples, "received_total")
    finally:
        assert recorder.stop() == 0
    line = next(x for x in recorder.log().splitlines() if "stopped:" in x)
    found = re.search(r"stopped: (\d+) received = (\d+) stored \+ (\d+) duplicate\(s\) \+ (\d+)"
                      r" conflict\(s\) \+ (\d+) status\(es\) \+ (\d+) quarantined \(\d+ refused"
                      r" by the database\) \+ (\d+) kept nowhere \+ (\d+) skipped \(([^)]*)\)",
                      line)
    assert found, line
    received, *parts_, skipped_text = found.groups()
    assert int(received) == sum(int(p) for p in parts_)
    assert "1 command" in skipped_text
    assert "not accounted for" not in line
