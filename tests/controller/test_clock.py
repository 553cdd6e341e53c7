"""TableClock: input times never go backwards, and a step back is reported once.

The wall and monotonic clocks are passed in as plain functions over numbers the test
sets: the system clock itself cannot be stepped under a running test suite. The daemon
test with a journal from the future is in tests/controller/test_clock_daemon.py.
"""

from __future__ import annotations

from baccarat.controller.clock import STEP_TOLERANCE, TableClock


class Clocks:
    """A wall clock and a monotonic clock that the test moves."""

    def __init__(self, wall: float) -> None:
        self.wall_time = wall
        self.mono_time = 1000.0

    def wall(self) -> float:
        return self.wall_time

    def mono(self) -> float:
        return self.mono_time

    def tick(self, seconds: float) -> None:
        self.wall_time += seconds
        self.mono_time += seconds


def test_a_right_clock_is_taken_as_it_is() -> None:
    clocks = Clocks(1_800_000_000.0)
    clock = TableClock(1_799_999_990.0, wall=clocks.wall, monotonic=clocks.mono)
    assert clock.read() == (1_800_000_000.0, None)
    clocks.tick(0.25)
    assert clock.read() == (1_800_000_000.25, None)


def test_a_clock_before_the_journal_at_start_is_a_step_back() -> None:
    clocks = Clocks(1_000_000.0)  # an RTC-less board that booted in January 1970
    clock = TableClock(1_800_000_000.0, wall=clocks.wall, monotonic=clocks.mono)
    ts, step = clock.read()
    assert ts == 1_800_000_000.0
    assert step is not None
    assert "1970-01-12T13:46:40Z" in step
    assert "2027-01-15T08:00:00Z" in step
    clocks.tick(2.5)
    assert clock.read() == (1_800_000_002.5, None)  # on from the floor, reported once
    assert clock.behind


def test_a_step_back_while_running_keeps_the_order_until_the_clock_is_right() -> None:
    clocks = Clocks(1_800_000_000.0)
    clock = TableClock(wall=clocks.wall, monotonic=clocks.mono)
    clock.read()
    clocks.tick(10)
    clocks.wall_time -= 3600  # NTP, or an operator, steps the clock back an hour
    ts, step = clock.read()
    assert ts == 1_800_000_010.0
    assert step is not None
    assert "3600 s before" in step
    times = []
    for _ in range(5):
        clocks.tick(1)
        times.append(clock.read())
    assert times == [(1_800_000_010.0 + n, None) for n in range(1, 6)]
    clocks.wall_time += 3600 + 0.5  # stepped right again
    ts, step = clock.read()
    assert (ts, step) == (1_800_000_015.5, None)
    assert not clock.behind
    clocks.tick(1)
    clocks.wall_time -= 100
    assert clock.read()[1] is not None  # a second step back is a second report


def test_a_small_slew_is_not_a_step_but_never_goes_backwards() -> None:
    clocks = Clocks(1_800_000_000.0)
    clock = TableClock(wall=clocks.wall, monotonic=clocks.mono)
    clock.read()
    clocks.wall_time -= STEP_TOLERANCE / 2
    ts, step = clock.read()
    assert step is None
    assert ts == 1_800_000_000.0


def test_a_step_forward_is_taken() -> None:
    clocks = Clocks(1_000_000.0)
    clock = TableClock(wall=clocks.wall, monotonic=clocks.mono)
    clock.read()
    clocks.wall_time = 1_800_000_000.0  # NTP sets the clock at last
    assert clock.read() == (1_800_000_000.0, None)


def test_without_a_floor_the_first_reading_is_the_wall_clock() -> None:
    clocks = Clocks(1_800_000_000.1234567)
    clock = TableClock(wall=clocks.wall, monotonic=clocks.mono)
    assert clock.read() == (1_800_000_000.123457, None)
