"""A pit boss who has looked at the table, settling the alarms of a real daemon by MQTT."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from baccarat.sim_hardware.dealer import Step
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto
from support.table_truth import Body, correction, not_burned


class SlowPit:
    """Settles each open alarm ``delay`` seconds after it shows, as pit/ana.

    With the corrections of :func:`support.table_truth.correction`, by the alarm's id, on
    table T1; it looks again while the alarm is open (a command refused, or a round that
    is not complete yet), ten times at most.
    """

    def __init__(
        self, board: Recorder, client: Any, delay: float, played: Sequence[Step] = ()
    ) -> None:
        self.board, self.client, self.delay = board, client, delay
        self.played = played
        """What the dealer did so far (his burned cards are what the pit sees on the table)."""
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
            cards = self.board.bodies("card")
            commands = correction(alarm, rounds, not_burned(self.played, cards))  # none: again
            for name, body in commands:
                self.commands += 1
                await self.client.publish(f"baccarat/T1/cmd/{name}/pit-ana", body, qos=1)


@asynccontextmanager
async def a_slow_pit(
    daemon: Daemon, broker: Mosquitto, delay: float, played: Sequence[Step] = ()
) -> AsyncIterator[tuple[Recorder, SlowPit]]:
    """Start ``daemon`` with a board and a :class:`SlowPit` settling its alarms; yield both.

    On the way out the pit stops and the daemon is closed; the board keeps what it received.
    """
    try:
        async with Recorder(broker) as board, broker.client() as client:
            await asyncio.to_thread(daemon.start)
            pit = SlowPit(board, client, delay, played)
            task = asyncio.create_task(pit.run())
            try:
                yield board, pit
            finally:
                task.cancel()
    finally:
        daemon.close()


async def dealt(dealing: Awaitable[None], delay: float) -> None:
    """Await ``dealing`` (200 s at most), then six pit delays to settle the last alarms."""
    async with asyncio.timeout(200):
        await dealing
    await asyncio.sleep(delay * 6)
