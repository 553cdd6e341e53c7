"""The daemon's log lines: timestamped text, journald's syslog levels, or JSON.

The real daemon process with each format, its standard error read back as a file (the
way a log file or a shipper reads it).
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

from baccarat import logs
from support.daemon import Daemon
from support.mosquitto import Mosquitto

TIMESTAMPED = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) "
)


def run_once(tmp_path: Path, broker: Mosquitto, env: dict[str, str]) -> list[str]:
    daemon = Daemon(tmp_path, broker, env=env)
    try:
        daemon.start()
    finally:
        assert daemon.stop() == 0
    lines = daemon.log().splitlines()
    assert any("ready: table T1" in line for line in lines)
    return lines


def test_text_lines_carry_a_utc_time_and_a_level(tmp_path: Path, mosquitto: Mosquitto) -> None:
    lines = run_once(tmp_path, mosquitto, {})
    assert lines
    assert all(TIMESTAMPED.match(line) for line in lines), lines


def test_json_lines_parse_and_say_when_what_and_where(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    lines = run_once(tmp_path, mosquitto, {"BACCARAT_LOG_FORMAT": "json"})
    records = [json.loads(line) for line in lines]
    assert {"ts", "level", "logger", "message"} <= set(records[0])
    ready = next(r for r in records if r["message"] == "ready: table T1")
    assert ready["level"] == "INFO"
    assert ready["logger"] == "baccarat.daemon"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", ready["ts"])


def test_under_journald_lines_carry_the_syslog_priority(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Systemd names the stream it connected in JOURNAL_STREAM; here, the log file."""
    log_file = tmp_path / "daemon.log"
    log_file.touch()
    status = os.stat(log_file)
    lines = run_once(tmp_path, mosquitto, {"JOURNAL_STREAM": f"{status.st_dev}:{status.st_ino}"})
    assert all(re.match(r"^<[2-7]>[A-Z]+ ", line) for line in lines), lines
    assert "<6>INFO baccarat.daemon: ready: table T1" in lines


def test_a_journald_traceback_keeps_its_level_on_every_line() -> None:
    formatter = logs.JournaldFormatter()
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), None)
    try:
        int("boom")
    except ValueError:
        record.exc_info = sys.exc_info()
    text = formatter.format(record)
    assert len(text.splitlines()) > 2
    assert all(line.startswith("<3>") for line in text.splitlines())


def test_a_bad_format_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "run", "--config", str(tmp_path / "x.toml"),
         "--log-format", "xml"],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 2
    assert "invalid choice: 'xml'" in done.stderr
