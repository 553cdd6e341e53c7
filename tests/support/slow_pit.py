"""A pit boss who has looked at the table, settling the alarms of a real daemon by MQTT."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from support.daemon import Recorder
from support.table_truth import Body, correction


class SlowPit:
    """Settles each open alarm ``delay`` seconds after it shows, as pit/ana.

    With the corrections of :func:`support.table_truth.correction`, by the alarm's id, on
    table T1; it looks again while the alarm is open (a command refused, or a round that
    is not complete yet), ten times at most.
    """

    def __init__(self, board: Recorder, client: Any, delay: float) -> None:
        self.board, self.client, self.delay = board, client, delay
        self.seen: set[int] = set()
        self.commands = 0

    async def run(self) -> None:
        tasks: set[asyncio.Task[None]] = set()
        while True:
            await asyncio.sleep(0.05)
            for alarm in self._open():
                if alarm["correctable"] and alarm["id"] not in self.seen:
                    self.seen.add(alarm["id"])
                    task = asyncio.create_task(self._settle(alarm["id"]))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)

    def _open(self) -> list[Body]:
        lists = self.board.bodies("alarms")
        return lists[-1]["alarms"] if lists else []

    async def _settle(self, alarm_id: int) -> None:
        for _ in range(10):  # look again while it is open (refused, or not yet complete)
            await asyncio.sleep(self.delay)
            alarm = next((a for a in self._open() if a["id"] == alarm_id), None)
            if alarm is None:
                return
            rounds = {b["round"]: b for b in self.board.bodies("round")}
            commands = correction(alarm, rounds)  # none yet: look again
            for name, body in commands:
                self.commands += 1
                await self.client.publish(f"baccarat/T1/cmd/{name}/pit-ana", body, qos=1)


async def dealt_with_a_slow_pit(
    board: Recorder, client: Any, delay: float, dealing: Awaitable[None]
) -> None:
    """Await ``dealing`` (200 s at most) while a :class:`SlowPit` settles the alarms.

    Then the pit has the time to settle the last ones.
    """
    pit_task = asyncio.create_task(SlowPit(board, client, delay).run())
    try:
        async with asyncio.timeout(200):
            await dealing
        await asyncio.sleep(delay * 6)
    finally:
        pit_task.cancel()
