"""The pit console and the web board in headless Chromium while nothing happens.

A fresh mosquitto (TCP and WebSocket), one table's retained state published once (status
online, its shoe), ``baccarat pit --web`` and ``baccarat board --web --table T1``; each page
is opened in the system's Chromium (``tests/boards/chromium_cdp.py``), the pit logged in,
and, after ``--settle`` seconds, watched for ``--seconds`` with nothing more published:

* the main thread's busy share: CDP ``Performance.getMetrics``'s ``TaskDuration`` over
  the window, in the thread's own CPU time (``timeDomain: threadTicks``), with
  ``ScriptDuration`` and ``LayoutDuration`` beside it;
* the CPU of Chromium's renderer processes as a share of one core (psutil).

    python bench/pages_idle.py [--seconds 20] [--settle 5]

Target (issue 34): under 2 % of a core for each page while idle (no timer that redraws an
unchanged screen). The pit's tiles show ages ("3 s ago"), which change once a second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from paho.mqtt import publish

from floor import baccarat, free_port, start_broker
from pit import Chromium, Page, cpu_of, listening, metrics, renderers, start_console

TABLE = "T1"


def retained_state(port: int) -> None:
    base = f"baccarat/{TABLE}"
    status = {"schema": 1, "type": "status", "state": "online", "table": TABLE}
    shoe = {"schema": 1, "type": "shoe", "seq": 1, "ts": time.time(), "shoe": 1,
            "phase": "dealing", "decks": 8, "cards_dealt": 0, "cards_burned": 0}
    publish.multiple([(f"{base}/status", json.dumps(status), 1, True),
                      (f"{base}/shoe", json.dumps(shoe), 1, True)],
                     hostname="127.0.0.1", port=port)


def start_web_board(folder: Path, web: int, ws_port: int) -> subprocess.Popen[bytes]:
    """``baccarat board --web`` for the table, its page on the broker's WebSocket."""
    return subprocess.Popen(
        baccarat("board", "--web", str(web), "--broker", "127.0.0.1", "--ws-port",
                 str(ws_port), "--table", TABLE),
        stdout=(folder / "board.log").open("wb"), stderr=subprocess.STDOUT,
    )


async def watch(page: Page, browser: Chromium, seconds: float) -> dict[str, float]:
    """The page's main-thread shares and its renderers' CPU over ``seconds``."""
    pages = renderers(browser)
    before, t0, cpu0 = await metrics(page), time.monotonic(), cpu_of(pages)
    await asyncio.sleep(seconds)
    after, window = await metrics(page), time.monotonic() - t0

    def share(name: str) -> float:
        return 100 * (after.get(name, 0.0) - before.get(name, 0.0)) / window

    return {"busy": share("TaskDuration"), "script": share("ScriptDuration"),
            "layout": share("LayoutDuration"),
            "renderer": 100 * (cpu_of(pages) - cpu0) / window}


async def run(args: argparse.Namespace, folder: Path) -> dict[str, dict[str, float]]:
    port, ws_port, pit_web, board_web = free_port(), free_port(), free_port(), free_port()
    broker = start_broker(folder, port, ws_port=ws_port)
    pit = start_console(folder, pit_web, ws_port)
    board = start_web_board(folder, board_web, ws_port)
    found: dict[str, dict[str, float]] = {}
    try:
        retained_state(port)
        listening(pit_web, pit, folder / "pit.log")
        listening(board_web, board, folder / "board.log")
        async with Chromium.launch(folder / "chromium") as browser:
            pages: dict[str, Any] = {}
            pages["pit console"] = await browser.open(f"http://127.0.0.1:{pit_web}/")
            page = pages["pit console"]
            await page.wait_for("document.body.dataset.ready === 'true'", limit=30)
            await page.evaluate("document.getElementById('username').value = 'pit-bench';"
                                " document.getElementById('login-button').click(); true")
            pages["web board"] = await browser.open(
                f"http://127.0.0.1:{board_web}/?table={TABLE}")
            for page in pages.values():
                await page.call("Performance.enable", timeDomain="threadTicks")
            await asyncio.sleep(args.settle)
            for name, page in pages.items():  # one at a time: the renderers are shared
                found[name] = await watch(page, browser, args.seconds)
    finally:
        for process in (board, pit, broker):
            process.terminate()
            process.wait(30)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="watched time (20)")
    parser.add_argument("--settle", type=float, default=5.0, help="time to settle (5)")
    args = parser.parse_args()
    logging.disable(logging.ERROR)  # paho's note of its closed helper connection
    with tempfile.TemporaryDirectory() as tmp:
        found = asyncio.run(run(args, Path(tmp)))
    for name, r in found.items():
        verdict = "OK" if r["busy"] < 2.0 else "ABOVE TARGET"
        print(f"{name} idle: main thread busy {r['busy']:.2f} % (script {r['script']:.2f} %,"
              f" layout {r['layout']:.2f} %), Chromium renderers {r['renderer']:.2f} % of a"
              f" core, over {args.seconds:.0f} s (target < 2 %): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
