"""The terminal board as its user runs it: ``baccarat board`` in a real terminal (a pty).

A board for a table nothing is heard from says, within seconds, what it waits for; an
idle board writes nothing to its terminal (it redraws on a change only). A real mosquitto.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager

from support.mosquitto import Mosquitto


@contextmanager
def board_in_a_terminal(broker: Mosquitto, table: str) -> Iterator[int]:
    """``baccarat board`` on a 120x40 pty; yields the pty's master, to read the screen."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1"}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "baccarat.cli", "board", "--broker",
         f"{broker.host}:{broker.port}", "--table", table],
        stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
    )
    os.close(slave)
    try:
        yield master
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(master)


def read_for(master: int, seconds: float) -> bytes:
    """What the board writes to its terminal in ``seconds``."""
    out = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                out += os.read(master, 65536)
            except OSError:
                break
    return out


def test_a_board_for_a_table_nothing_is_heard_from_says_what_it_waits_for(
    mosquitto: Mosquitto,
) -> None:
    with board_in_a_terminal(mosquitto, "T999") as master:
        screen = read_for(master, 8.0).decode(errors="replace")
    flat = "".join(screen.split())  # the text is wrapped and drawn between escapes
    assert "nothingheardfromtableT999in3s" in flat
    assert "baccarat/T999/" in flat


def test_an_idle_board_writes_nothing_to_its_terminal(mosquitto: Mosquitto) -> None:
    with board_in_a_terminal(mosquitto, "T1") as master:
        read_for(master, 6.0)  # the first screen, connected, the nothing-heard notice
        idle = read_for(master, 3.0)
    assert len(idle) == 0, f"{len(idle)} bytes written in 3 s of idle"
