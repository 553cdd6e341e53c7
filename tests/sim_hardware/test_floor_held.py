"""A simulated floor whose dealers' mistakes hold their tables says so, and what lets them on.

Real daemons on virtual shoes (``run_floor``), a real mosquitto; every round has a
mistake (``misdeal_rate`` 1), nobody settles it in the pit: the tables stop, and the floor
prints how many wait and the option that lets the dealers deal on.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from baccarat.sim_hardware import floor as floor_module
from baccarat.sim_hardware.floor import Floor, FloorPlan
from support.mosquitto import Mosquitto


@pytest.mark.timeout(180)
async def test_tables_held_by_mistakes_point_at_dealer_ignores_alarms(
    tmp_path: Path, mosquitto: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(floor_module, "HELD_EVERY", 1.0)  # the look, not the behaviour
    plan = FloorPlan(tables=2, folder=tmp_path, broker_host=mosquitto.host,
                     broker_port=mosquitto.port, pace=0.01, misdeal_rate=1.0, fsync=False)
    out = io.StringIO()
    floor = Floor(plan, out=out)
    stop = asyncio.Event()
    running = asyncio.create_task(floor.run(stop))
    try:
        async with asyncio.timeout(150):
            while "wait for the pit" not in out.getvalue():  # noqa: ASYNC110 - a printed line
                await asyncio.sleep(0.5)
    finally:
        stop.set()
        await running
    line = next(x for x in out.getvalue().splitlines() if "wait for the pit" in x)
    assert "of 2 tables wait for the pit to settle an alarm" in line
    assert "--misdeal-rate 1" in line
    assert "--dealer-ignores-alarms lets the dealers deal on" in line
