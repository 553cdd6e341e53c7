"""Where a card's time goes inside the daemon, stage by stage (a companion to latency.py).

Runs ``baccarat run`` on a pty with a loopback mosquitto, as ``bench/latency.py`` does,
but in a process that wraps a few functions of the daemon and its libraries to note the
time (``time.perf_counter``, the same clock in every process here) as each card passes:

    written      the card's last byte written on the pty (this process)
    readable     the event loop finds the pty readable (pyserial-asyncio-fast)
    handled      the card reaches ``Table.handle``
    journaled    its record is written and fdatasync'd (``Journal.append`` returns)
    fed          the engine has produced the card's messages
    queued       the card message is in the outbox
    publish      the publisher's MQTT client's ``publish`` is called for it
    paho         paho-mqtt's ``publish`` is called for it
    sent         its bytes are on the broker's socket
    received     a subscriber has it (this process)

and prints p50/p90/p99/max of each step over ``--cards`` cards. The wrapping costs a few
microseconds per stage, so the total is a little above latency.py's. ``sent`` wraps a
private function of paho-mqtt (``_sock_send``): this is a measuring tool, not the daemon.
A tool for finding what to make faster, not a figure to quote.

    python bench/latency_stages.py [--cards 400] [--gap 0.004] [--journal DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiomqtt

sys.path.insert(0, str(Path(__file__).parent))
import latency  # the bench folder is not a package

STAGES = ("readable", "handled", "journaled", "fed", "queued", "publish", "paho", "sent")

DAEMON = r"""
import atexit, json, os, sys, time
clock = time.perf_counter
cards, current = [], None

def mark(stage):
    if current is not None and stage not in current:
        current[stage] = clock()

def wrap(owner, name, before=None, after=None):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        if before: before(*args)
        result = original(*args, **kwargs)
        if after: after(*args)
        return result
    setattr(owner, name, wrapper)

def readable(*_):
    global current
    current = {"readable": clock()}
    cards.append(current)

import paho.mqtt.client as paho
import serial_asyncio_fast
from baccarat import mqtt
from baccarat.controller import publisher, table
from baccarat.controller.engine import engine
from baccarat.controller.journal import writer
wrap(serial_asyncio_fast.SerialTransport, "_read_ready", before=readable)
wrap(table.Table, "handle", before=lambda *_: mark("handled"))
wrap(writer.Journal, "append", after=lambda *_: mark("journaled"))
wrap(engine.Engine, "feed", after=lambda *_: mark("fed"))
wrap(publisher.Outbox, "put",
     after=lambda box, m: mark("queued") if m.topic.endswith("/card") else None)
wrap(mqtt.MqttClient, "publish",
     before=lambda c, topic, *_: mark("publish") if topic.endswith("/card") else None)
wrap(paho.Client, "publish",
     before=lambda c, topic, *_: mark("paho") if topic.endswith("/card") else None)
wrap(paho.Client, "_sock_send",
     after=lambda c, buf: mark("sent") if b"/card" in bytes(buf[:48]) else None)

def dump():
    with open(os.environ["STAGES_OUT"], "w") as out:
        json.dump(cards, out)
atexit.register(dump)
from baccarat.cli import main
sys.exit(main())
"""


async def measure(
    master: int, port: int, lines: list[bytes], gap: float
) -> list[tuple[float, float]]:
    """Write each card, wait for its message; (written, received) per card."""
    times: list[tuple[float, float]] = []
    async with aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe("baccarat/BENCH/card", qos=1)
        await asyncio.sleep(0.3)
        for line in lines:
            written = time.perf_counter()
            os.write(master, line)
            async with asyncio.timeout(5):
                await anext(client.messages)
            times.append((written, time.perf_counter()))
            await asyncio.sleep(gap)
    return times


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    pick = [ordered[min(len(ordered) - 1, int(len(ordered) * q))] for q in (0.5, 0.9, 0.99)]
    pick.append(ordered[-1])
    names = ("p50", "p90", "p99", "max")
    return "   ".join(f"{name} {v * 1e6:7.0f} us" for name, v in zip(names, pick, strict=True))


def main() -> None:
    """Run the daemon with the marks, send the cards, print the stages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=400)
    parser.add_argument("--gap", type=float, default=0.004, help="seconds between cards")
    parser.add_argument("--journal", type=Path, help="journal folder (default: a temp dir)")
    args = parser.parse_args()
    lines = list(latency.card_lines(args.cards))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = latency.free_port()
        broker = latency.start_mosquitto(folder, port)
        master, pty = latency.open_pty()
        journal = args.journal or folder / "journal"
        config = folder / "table.toml"
        config.write_text(
            f'table = "BENCH"\nprofile = "csm"\n'
            f'[device]\nkind = "serial"\npath = "{pty}"\nprotocol = "line"\n'
            f'[broker]\nhost = "127.0.0.1"\nport = {port}\n'
            f'[journal]\nfolder = "{journal}"\nfsync = true\n'
        )
        out = folder / "stages.json"
        daemon = subprocess.Popen(
            [sys.executable, "-c", DAEMON, "run", "--config", str(config),
             "--log-level", "ERROR"],
            env={**os.environ, "STAGES_OUT": str(out)},
        )
        try:
            time.sleep(1.5)
            asyncio.run(latency.send_command(port, "shoe"))
            times = asyncio.run(measure(master, port, lines, args.gap))
        finally:
            daemon.terminate()
            daemon.wait(10)
            broker.terminate()
            broker.wait(10)
        cards = json.loads(out.read_text())
    if len(cards) != len(times):
        raise SystemExit(f"{len(cards)} cards seen by the daemon, {len(times)} sent")
    pairs = zip(times, cards, strict=True)
    rows = [{"written": w, **card, "received": r} for (w, r), card in pairs]
    complete = [row for row in rows if all(stage in row for stage in STAGES)]

    def median_time(stage: str) -> float:
        return statistics.median(row[stage] - row["written"] for row in complete)

    middle = sorted(STAGES, key=median_time)
    order = ("written", *middle, "received")
    print(f"{len(complete)} of {len(rows)} cards with every stage; journal {journal}")
    for before, after in itertools.pairwise(order):
        steps = [row[after] - row[before] for row in complete]
        print(f"  {before + ' -> ' + after:<24} {percentiles(steps)}")
    print(f"  {'written -> received':<24} "
          f"{percentiles([row['received'] - row['written'] for row in complete])}")


if __name__ == "__main__":
    main()
