"""A line that comes in a flood is written once a window, with how many came meanwhile."""

from __future__ import annotations

import errno
import logging

import pytest

from baccarat.logs import Repeated, expected_os_error


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_repeated_line_is_written_once_then_with_its_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="flood")
    clock = Clock()
    repeated = Repeated(logging.getLogger("flood"), window=10.0, clock=clock)
    for n in range(413):
        clock.now += 0.02
        repeated.log(logging.WARNING, "puback", "no PUBACK within %d s (message %d)", 10, n)
    assert [r.getMessage() for r in caplog.records] == ["no PUBACK within 10 s (message 0)"]
    clock.now += 10.0
    repeated.log(logging.WARNING, "other", "another line")
    assert [r.getMessage() for r in caplog.records][1:] == [
        "no PUBACK within 10 s (message 412) (412 more in the last 18 s)", "another line",
    ]
    clock.now += 20.0
    repeated.flush()
    assert len(caplog.records) == 3  # "another line" came once: nothing more to tell
    assert repeated.suppressed == 412


def test_keys_beyond_the_bound_are_told_and_forgotten(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="flood")
    clock = Clock()
    repeated = Repeated(logging.getLogger("flood"), keys=3, clock=clock)
    for key in range(10):
        repeated.log(logging.WARNING, key, "peer %d reset", key)
        repeated.log(logging.WARNING, key, "peer %d reset", key)
    assert len(repeated._windows) <= 3  # noqa: SLF001 - the bound itself
    assert "peer 0 reset (1 more in the last 1 s)" in [r.getMessage() for r in caplog.records]


def test_expected_os_errors_name_their_cause_and_limit() -> None:
    emfile = expected_os_error(OSError(errno.EMFILE, "Too many open files"))
    assert emfile is not None
    assert "LimitNOFILE" in emfile
    assert expected_os_error(ConnectionResetError(errno.ECONNRESET, "reset")) is not None
    assert expected_os_error(OSError(errno.ENOENT, "no file")) is None
    assert expected_os_error(ValueError("x")) is None


def test_a_lost_connections_many_identical_errors_are_one_with_a_count() -> None:
    """The publisher's 64 publishes in flight each failing: one line, not 64 on it."""
    from baccarat.controller.publisher import _describe
    from baccarat.mqtt import MqttError

    group = ExceptionGroup("lost", [MqttError("no PUBACK within 10 s")] * 64 + [OSError("x")])
    assert _describe(group) == "MqttError: no PUBACK within 10 s (64 times); OSError: x"
