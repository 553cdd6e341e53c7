"""The terminal board's CPU and terminal output while nothing happens on its table.

``baccarat board`` runs in a real terminal (a pty, 160x45) against a loopback mosquitto
on which a table's retained state is published once (a shoe under way, its roads, the
status online); then nothing more comes. After a settling time, the board's CPU time
(user + system, from /proc) and the bytes it writes to its terminal are measured over
``--seconds``. Target: under 2 % of a core, and no bytes (it redraws on change only).

    python bench/board_idle.py [--seconds 20] [--settle 5]

Printed: CPU % of one core while idle, bytes written a second, and the same while the
table deals one card a second (to show that changes are still drawn).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import os
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt import publish

from latency import cpu_seconds, free_port, start_mosquitto

TABLE = "T1"


def retained_state(port: int) -> None:
    """A table seen mid-shoe: its status, shoe and round, retained."""
    base = f"baccarat/{TABLE}"
    messages = [
        (f"{base}/status", json.dumps({"schema": 1, "type": "status", "state": "online",
                                        "table": TABLE}), 1, True),
        (f"{base}/shoe", json.dumps({"schema": 1, "type": "shoe", "seq": 1, "ts": 1.0,
                                      "shoe": 1, "phase": "dealing", "decks": 8,
                                      "cards_dealt": 0, "cards_burned": 0}), 1, True),
    ]
    publish.multiple(messages, hostname="127.0.0.1", port=port)


def card(client: mqtt.Client, seq: int) -> None:
    body = {"schema": 1, "type": "card", "seq": seq, "ts": float(seq), "shoe": 1,
            "round": seq, "position": "P1", "card": "9S"}
    client.publish(f"baccarat/{TABLE}/card", json.dumps(body), qos=1).wait_for_publish(5)


def drain(master: int, seconds: float) -> int:
    """Bytes the board writes to its terminal in ``seconds``."""
    total = 0
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                total += len(os.read(master, 65536))
            except OSError:
                break
    return total


def measure(
    pid: int, master: int, seconds: float, during: mqtt.Client | None = None
) -> tuple[float, float]:
    """CPU % of one core and terminal bytes a second over ``seconds``.

    ``during``: a card a second is published by this client meanwhile.
    """
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    written = 0
    if during is None:
        written = drain(master, seconds)
    else:
        seq = 100
        while time.monotonic() - t0 < seconds:
            seq += 1
            card(during, seq)
            written += drain(master, 1.0)
    elapsed = time.monotonic() - t0
    return 100 * (cpu_seconds(pid) - cpu0) / elapsed, written / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time (20)")
    parser.add_argument("--settle", type=float, default=5.0, help="time to settle (5)")
    args = parser.parse_args()
    logging.disable(logging.ERROR)  # paho's note of its closed helper connection
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        broker = start_mosquitto(Path(tmp), port)
        try:
            retained_state(port)
            master, slave = os.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
            env = {**os.environ, "TERM": "xterm-256color"}
            board = subprocess.Popen(
                [sys.executable, "-m", "baccarat.cli", "board", "--broker",
                 f"127.0.0.1:{port}", "--table", TABLE],
                stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
            )
            os.close(slave)
            try:
                settled = drain(master, args.settle)
                if board.poll() is not None or not settled:
                    print(f"the board did not draw (exit status {board.poll()})", file=sys.stderr)
                    return 1
                idle_cpu, idle_bytes = measure(board.pid, master, args.seconds)
                client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
                client.connect("127.0.0.1", port)
                client.loop_start()
                try:
                    busy_cpu, busy_bytes = measure(board.pid, master,
                                                   min(args.seconds, 10.0), during=client)
                finally:
                    client.disconnect()
                    client.loop_stop()
                if board.poll() is not None:
                    print(f"the board ended (exit status {board.returncode}): no figures",
                          file=sys.stderr)
                    return 1
            finally:
                board.terminate()
                board.wait(10)
                os.close(master)
        finally:
            broker.terminate()
            broker.wait(10)
    verdict = "OK" if idle_cpu < 2.0 and idle_bytes == 0 else "ABOVE TARGET"
    print(f"terminal board idle: {idle_cpu:.2f} % of a core, {idle_bytes:.0f} bytes/s to the"
          f" terminal over {args.seconds:.0f} s (target < 2 %, 0 bytes/s): {verdict}")
    print(f"terminal board, one card a second: {busy_cpu:.2f} % of a core,"
          f" {busy_bytes:.0f} bytes/s to the terminal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
