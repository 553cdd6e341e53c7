"""sd_notify against real AF_UNIX datagram sockets: one bound to a path, one abstract."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from baccarat.controller import sdnotify


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No systemd variables from the environment the tests run in; error flag reset."""
    for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sdnotify, "_error_logged", False)


@pytest.fixture
def path_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A datagram socket bound to a path, named in $NOTIFY_SOCKET."""
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(2.0)
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        yield sock


@pytest.fixture
def abstract_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A datagram socket in the abstract namespace, named in $NOTIFY_SOCKET with '@'."""
    name = f"baccarat-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(b"\0" + name.encode())
        sock.settimeout(2.0)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        yield sock


def received(sock: socket.socket) -> str:
    """The next datagram, as text."""
    return sock.recv(4096).decode()


def test_ready_to_a_path_socket(path_socket: socket.socket) -> None:
    assert sdnotify.ready() is True
    assert received(path_socket) == "READY=1"


def test_ready_with_status(path_socket: socket.socket) -> None:
    assert sdnotify.ready("serving T07")
    assert received(path_socket) == "READY=1\nSTATUS=serving T07"


def test_every_message_to_an_abstract_socket(abstract_socket: socket.socket) -> None:
    assert sdnotify.ready()
    assert sdnotify.watchdog_ping()
    assert sdnotify.status("broker away, 3 results queued")
    assert sdnotify.stopping()
    assert sdnotify.extend_timeout(2.5)
    assert [received(abstract_socket) for _ in range(5)] == [
        "READY=1",
        "WATCHDOG=1",
        "STATUS=broker away, 3 results queued",
        "STOPPING=1",
        "EXTEND_TIMEOUT_USEC=2500000",
    ]


def test_notify_sends_fields_in_order(path_socket: socket.socket) -> None:
    assert sdnotify.notify(STATUS="replaying journal", MAINPID=os.getpid())
    assert received(path_socket) == f"STATUS=replaying journal\nMAINPID={os.getpid()}"


def test_a_newline_in_a_value_cannot_start_a_new_assignment(path_socket: socket.socket) -> None:
    assert sdnotify.status("line one\nREADY=1")
    assert received(path_socket) == "STATUS=line one READY=1"


def test_without_notify_socket_everything_is_a_no_op() -> None:
    assert sdnotify.ready() is False
    assert sdnotify.watchdog_ping() is False
    assert sdnotify.status("x") is False
    assert sdnotify.stopping() is False
    assert sdnotify.notify(READY=1) is False
    assert sdnotify.watchdog_interval() is None


def test_nothing_to_send_sends_nothing(path_socket: socket.socket) -> None:
    assert sdnotify.notify() is False


def test_socket_errors_are_logged_once_and_never_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
    with caplog.at_level(logging.DEBUG, logger=sdnotify.__name__):
        assert sdnotify.ready() is False
        assert sdnotify.watchdog_ping() is False
        assert sdnotify.watchdog_ping() is False
    levels = [r.levelno for r in caplog.records]
    assert levels == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert "nobody-listens" in caplog.records[0].getMessage()


def test_a_full_socket_does_not_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        results = [sdnotify.watchdog_ping() for _ in range(10_000)]
    assert results[0] is True
    assert results[-1] is False  # the receive queue filled up: refused, not waited for


@pytest.mark.usefixtures("path_socket")
def test_watchdog_interval_is_half_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    assert sdnotify.watchdog_interval() == 5.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert sdnotify.watchdog_interval() == 5.0


@pytest.mark.usefixtures("path_socket")
@pytest.mark.parametrize("usec", ["", "0", "-5", "ten", "1.5"])
def test_no_watchdog_without_a_usable_timeout(monkeypatch: pytest.MonkeyPatch, usec: str) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", usec)
    assert sdnotify.watchdog_interval() is None


@pytest.mark.usefixtures("path_socket")
def test_no_watchdog_for_another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))
    assert sdnotify.watchdog_interval() is None


def test_no_watchdog_without_notify_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    assert sdnotify.watchdog_interval() is None
