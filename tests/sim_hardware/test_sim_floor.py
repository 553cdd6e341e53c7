"""``baccarat sim floor``: N real daemons with virtual shoes, against a real mosquitto."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.mosquitto import Mosquitto, _die_with_parent

TABLES = ("T01", "T02", "T03")
WITHIN = 90.0
"""Seconds for three daemons to start and each to finish a round, on a loaded machine."""


def sim_floor(tmp_path: Path, *args: str, session: bool = False) -> subprocess.Popen[str]:
    """``baccarat sim floor``; with ``session``, in a process group of its own (a terminal's)."""
    return subprocess.Popen(
        [sys.executable, "-m", "baccarat.cli", "sim", "floor", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=tmp_path, start_new_session=session,
        preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
    )


def alive(pid: int) -> bool:
    """Whether a process ``pid`` still runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["SIGTERM", "Ctrl-C"])
async def test_three_tables_publish_and_stop_cleanly(
    tmp_path: Path, mosquitto: Mosquitto, stop: str
) -> None:
    """SIGTERM to the simulator, or Ctrl-C: SIGINT to its whole process group at once."""
    by_table: dict[str, list[dict[str, Any]]] = {}
    statuses: dict[str, str] = {}
    async with mosquitto.client() as pit:
        await pit.subscribe("baccarat/+/#", qos=1)
        sim = sim_floor(
            tmp_path, "--tables", "3", "--broker", f"127.0.0.1:{mosquitto.port}",
            "--folder", str(tmp_path / "floor"), "--decks", "1", "--pace", "0.02",
            "--no-fsync", session=True,
        )
        try:
            async with asyncio.timeout(WITHIN):
                async for message in pit.messages:
                    table, kind = str(message.topic).split("/")[1:3]
                    assert isinstance(message.payload, bytes)
                    if not message.payload:
                        continue  # a retained message cleared (a table's fault topic)
                    body = json.loads(message.payload)
                    if kind == "status":
                        statuses[table] = body["state"]
                        continue
                    if kind == "edge":  # the daemon's live edge: retained, with no seq
                        continue
                    by_table.setdefault(table, []).append(body)
                    if all(any(b.get("type") == "result" for b in by_table.get(t, []))
                           for t in TABLES):
                        break
            if stop == "SIGTERM":
                sim.send_signal(signal.SIGTERM)
            else:
                os.killpg(sim.pid, signal.SIGINT)
            output, _ = await asyncio.to_thread(sim.communicate, timeout=60)
        finally:
            if sim.poll() is None:  # the test failed: its daemons (same group) go with it
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(sim.pid, signal.SIGKILL)
                sim.wait()
    assert sim.returncode == 0, output
    assert sorted(by_table) == list(TABLES)
    for table in TABLES:
        seqs = [b["seq"] for b in by_table[table]]
        assert seqs == sorted(seqs), table
        assert any(b.get("type") == "card" for b in by_table[table])
    pids = [int(pid) for pid in re.findall(r"baccarat run pid (\d+)", output)]
    assert len(pids) == 3, output
    assert not [pid for pid in pids if alive(pid)], output
    assert "floor: stopped" in output
    for table in TABLES:
        assert "ready: table" in (tmp_path / "floor" / table / "daemon.log").read_text()
        assert not (tmp_path / "floor" / table / "shoe").exists()  # the pty is gone too


def test_a_table_that_cannot_start_stops_the_floor_with_its_log(tmp_path: Path) -> None:
    """A topic prefix with a wildcard: every daemon refuses its configuration."""
    sim = sim_floor(tmp_path, "--tables", "2", "--broker", "127.0.0.1:1", "--prefix", "bad/#",
                    "--folder", str(tmp_path / "floor"))
    output, _ = sim.communicate(timeout=120)
    assert sim.returncode == 1, output
    assert re.search(r"T0[12]: baccarat run exited with status 2 before it was ready", output)
    assert "topic_prefix" in output, output  # the daemon's own words, from its log


def test_bad_options_are_refused_plainly(tmp_path: Path) -> None:
    for args, words in (
        (["--tables", "0"], "--tables must be 1 or more"),
        (["--tables", "2", "--broker", "host:port"], "the port is not a number"),
        (["--tables", "2", "--password-file", str(tmp_path / "no")], "no such file"),
    ):
        sim = sim_floor(tmp_path, *args, "--folder", str(tmp_path / "floor"))
        output, _ = sim.communicate(timeout=60)
        assert sim.returncode == 2, output
        assert words in output
