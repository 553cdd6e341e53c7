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
from pit.history_support import EXAMPLE_ACL, USERS, basic
from support.mosquitto import Mosquitto

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


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}),
                                    timeout=10) as response:
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
        (["--web", "0", "--db", "{db}"], "--db needs --history-acl FILE: who may read the history"),
        (["--web", "0", "--db", "{db}", "--history-acl", "/nonexistent/acl"],
         "cannot read the history ACL /nonexistent/acl"),
    ],
)
def test_bad_arguments_are_said_plainly(args: list[str], said: str, tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    open_store(str(db)).close()
    process = baccarat_pit(*(arg.replace("{db}", str(db)) for arg in args))
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


def test_with_db_the_history_is_served_to_a_logged_in_reader_and_logged(
    tmp_path: Path, broker: Mosquitto
) -> None:
    db = tmp_path / "floor.db"
    open_store(str(db)).close()  # as the recorder makes it
    audit = tmp_path / "history.log"
    process = baccarat_pit(
        "--web", "0", "--db", str(db), "--history-acl", str(EXAMPLE_ACL),
        "--broker", broker.host, "--ws-port", str(broker.websockets_port),
        "--history-log", str(audit),
    )
    try:
        url = address(process)
        assert get(url + "history.json?table=T07&limit=0")[0] == 401
        login = urllib.request.Request(
            url + "history/login", method="POST", headers=basic("pit-ana", USERS["pit-ana"])
        )
        with urllib.request.urlopen(login, timeout=10) as response:
            token = json.loads(response.read())["token"]
        bearer = {"Authorization": f"Bearer {token}"}
        status, body = get(url + "history.json?table=T07&limit=0", bearer)
        assert status == 200
        assert json.loads(body)["shoes"] == []  # the recorder has stored nothing yet
        assert get(url + "history.json?table=T07&shoe=x", bearer)[0] == 400
    finally:
        process.terminate()
        process.wait(timeout=10)
    logged = audit.read_text()
    assert "history login: operator=pit-ana client=127.0.0.1 status=200" in logged
    assert "history read: operator=pit-ana client=127.0.0.1 table=T07 shoe=- since=- until=-" \
        " format=json limit=0 rounds=0 status=200" in logged
    assert USERS["pit-ana"] not in logged


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


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by openssl."""
    cert, key = folder / "console.crt", folder / "console.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


def test_the_console_serves_https_with_a_certificate_and_says_when_it_is_plain(
    tmp_path: Path,
) -> None:
    import ssl

    cert, key = self_signed(tmp_path)
    process = baccarat_pit("--web", "0", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        url = address(process)
        assert url.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(url, timeout=10, context=context) as response:
            assert response.status == 200
            assert b"Pit console" in response.read()
        with pytest.raises((urllib.error.URLError, ConnectionError)):  # no plain HTTP there
            urllib.request.urlopen(url.replace("https:", "http:"), timeout=10)
    finally:
        process.terminate()
        process.wait(timeout=10)
    alone = baccarat_pit("--web", "0", "--tls-cert", str(cert))
    assert alone.wait(timeout=30) == 2
    assert alone.stderr is not None
    assert "--tls-cert and --tls-key go together" in alone.stderr.read()
    plain = baccarat_pit("--web", "0", "--web-host", "0.0.0.0")
    try:
        address(plain)
    finally:
        plain.terminate()
        plain.wait(timeout=10)
    assert plain.stderr is not None
    assert "passwords cross the network in clear" in plain.stderr.read()
