"""``baccarat pit``: the console's server as a user runs it, and its arguments."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from baccarat.floor.store import open_store

START_WAIT = 20.0  # seconds for the process to say where it serves, on a loaded machine


def baccarat_pit(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "baccarat.cli", "pit", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def address(process: subprocess.Popen[str]) -> str:
    """The console's URL, from the line the process prints when it serves."""
    assert process.stdout is not None
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("pit console: "):
            return line.split()[2]
    raise AssertionError("baccarat pit never said where it serves")


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_console_the_board_and_mqtt_js_are_served(tmp_path: Path) -> None:
    password = tmp_path / "screen-password"
    password.write_text("screen-secret\n")
    process = baccarat_pit(
        "--web", "0", "--broker", "broker.floor.example", "--ws-port", "9443",
        "--prefix", "casino", "--board-username", "board-pit",
        "--board-password-file", str(password),
    )
    try:
        url = address(process)
        status, page = get(url)
        assert status == 200
        assert b"Pit console" in page
        assert json.loads(get(url + "config.json")[1]) == {
            "table": None, "prefix": "casino", "ws_host": "broker.floor.example",
            "ws_port": 9443, "ws_path": "/mqtt",
        }  # no credentials: the operator types them
        board = json.loads(get(url + "board/config.json")[1])
        assert (board["username"], board["password"]) == ("board-pit", "screen-secret")
        for path in ("pit.js", "console.js", "vendor/mqtt.esm.js", "board/", "board/state.js"):
            assert get(url + path)[0] == 200, path
        assert get(url + "board/../../etc/passwd")[0] == 404
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--web", "70000"], "bad port for --web: 70000"),
        (["--web", "0", "--ws-port", "-1"], "bad port for --ws-port: -1"),
        (["--web", "0", "--broker", "host:port"], "baccarat pit: "),
        (["--web", "0", "--board-username", "b", "--board-password-file", "/nonexistent"],
         "cannot read the board's password"),
        (["--web", "0", "--db", "/nonexistent/floor.db"],
         "history database: cannot open /nonexistent/floor.db: no such database file"),
    ],
)
def test_bad_arguments_are_said_plainly(args: list[str], said: str) -> None:
    process = baccarat_pit(*args)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert said in err


def test_a_taken_port_is_said_plainly() -> None:
    first = baccarat_pit("--web", "0")
    try:
        port = address(first).rsplit(":", 1)[1].strip("/")
        second = baccarat_pit("--web", port)
        _out, err = second.communicate(timeout=30)
        assert second.returncode == 2
        assert f"cannot serve on 127.0.0.1:{port}" in err
    finally:
        first.terminate()
        first.wait(timeout=10)


def test_with_db_the_history_is_served_from_the_recorders_database(tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    open_store(str(db)).close()  # as the recorder makes it
    process = baccarat_pit("--web", "0", "--db", str(db))
    try:
        url = address(process)
        status, body = get(url + "history.json?table=T07&limit=0")
        assert status == 200
        assert json.loads(body)["shoes"] == []  # the recorder has stored nothing yet
        assert get(url + "history.json?table=T07&shoe=x")[0] == 400
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_without_db_the_history_is_not_configured() -> None:
    process = baccarat_pit("--web", "0")
    try:
        url = address(process)
        status, body = get(url + "history.json?table=T07")
        assert status == 404
        assert json.loads(body)["error"].startswith("history not configured")
    finally:
        process.terminate()
        process.wait(timeout=10)
