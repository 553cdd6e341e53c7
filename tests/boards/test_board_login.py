"""``baccarat board`` logs in to a broker with accounts (``--username``, ``--password-file``).

The real command on a real pty, a real mosquitto without anonymous access whose ACL lets
the board's account read its table and nothing else. The password comes from a file,
never from the command line.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from support.mosquitto import Mosquitto, _die_with_parent

BOARD, CONTROLLER = "board-T1", "baccarat-T1"
USERS = {BOARD: "board-secret", CONTROLLER: "controller-secret"}
ACL = f"""
user {CONTROLLER}
topic readwrite baccarat/T1/#

user {BOARD}
topic read baccarat/T1/#
"""
WITHIN = 15.0
"""Seconds for the board to show what it should."""
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]")


def screen_until(master: int, process: subprocess.Popen[bytes], *texts: str) -> str:
    """What the board drew (escape sequences taken out), once it shows every one of ``texts``."""
    seen = b""
    deadline = time.monotonic() + WITHIN
    while time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
        shown = ANSI.sub(b"", seen).decode(errors="replace")
        if all(text in shown for text in texts):
            return shown
    shown = ANSI.sub(b"", seen).decode(errors="replace")
    raise AssertionError(f"the board never showed {texts}; exit {process.poll()}:\n{shown}")


def board(broker: Mosquitto, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    """``baccarat board`` for table T1 on a pty of 100 x 30; the process and the pty."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "baccarat.cli", "board", "--broker",
         f"{broker.host}:{broker.port}", "--table", "T1", *args],
        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
        env={**os.environ, "TERM": "xterm-256color"},
        preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
    )
    os.close(slave)
    return process, master


def stop(process: subprocess.Popen[bytes], master: int) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    os.close(master)


@pytest.fixture
def broker(tmp_path: Path) -> Mosquitto:
    return Mosquitto(tmp_path / "broker", anonymous=False, users=USERS, acl=ACL)


async def test_the_board_logs_in_with_its_account(tmp_path: Path, broker: Mosquitto) -> None:
    password_file = tmp_path / "board-password"
    password_file.write_text(USERS[BOARD] + "\n")
    with broker:
        async with broker.client(username=CONTROLLER, password=USERS[CONTROLLER]) as table:
            status = b'{"schema": 1, "type": "status", "state": "online", "table": "T1"}'
            await table.publish("baccarat/T1/status", status, qos=1, retain=True)
        process, master = board(
            broker, "--username", BOARD, "--password-file", str(password_file)
        )
        try:
            shown = await asyncio.to_thread(
                screen_until, master, process, "broker connected", "controller online"
            )
        finally:
            stop(process, master)
        assert not any(USERS[BOARD] in str(arg) for arg in process.args)  # type: ignore[union-attr]
        assert "not authorised" not in shown.lower()


async def test_without_the_account_the_board_says_it_is_refused(broker: Mosquitto) -> None:
    with broker:
        process, master = board(broker)
        try:
            await asyncio.to_thread(screen_until, master, process, "broker lost")
        finally:
            stop(process, master)
