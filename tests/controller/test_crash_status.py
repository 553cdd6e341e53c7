"""A daemon that crashes by an exception leaves ``status`` offline: the broker's last will.

The real daemon process and a real mosquitto. The crash is injected from outside the
package: a ``sitecustomize`` module on the daemon's ``PYTHONPATH`` replaces one of the
daemon's background loops (``serving.TableRun``) with one that raises once the test says
so. A daemon that left the broker with a clean DISCONNECT on the way out made the broker
drop the will, and the retained ``status`` said ``online`` for a table that was gone.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.daemon import Daemon, Recorder, retained_body
from support.mosquitto import Mosquitto

WITHIN = 15.0
"""Seconds any one step may take before the test fails."""

CRASH_HOOK = '''
import asyncio
import os
import pathlib

from baccarat.controller import serving


async def _crash_on_cue(self):
    cue = pathlib.Path(os.environ["BACCARAT_TEST_CRASH_CUE"])
    while not cue.exists():
        await asyncio.sleep(0.05)
    raise RuntimeError("injected by the test: a bug in a background loop")


serving.TableRun._watchdog_loop = _crash_on_cue
'''


def states(board: Recorder) -> list[str]:
    return [body["state"] for body in board.bodies("status")]


async def test_a_crash_by_exception_leaves_status_offline(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(CRASH_HOOK)
    cue = tmp_path / "crash-now"
    daemon = Daemon(tmp_path, mosquitto,
                    env={"PYTHONPATH": str(hooks), "BACCARAT_TEST_CRASH_CUE": str(cue)})
    try:
        async with Recorder(mosquitto) as board:
            await asyncio.to_thread(daemon.start)
            await board.wait_for(lambda b: states(b)[-1:] == ["online"], WITHIN)
            cue.touch()
            exit_status = await asyncio.to_thread(daemon.wait, WITHIN)
            await board.wait_for(lambda b: states(b)[-1:] == ["offline"], WITHIN)
            log = daemon.log()
    finally:
        daemon.close()
    assert exit_status == 1, log
    assert "injected by the test" in log  # the crash, with its traceback
    assert (await retained_body(mosquitto) or {}).get("state") == "offline"
