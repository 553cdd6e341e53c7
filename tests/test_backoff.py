"""The one reconnection backoff: doubling, capped, jittered, reset on success."""

from __future__ import annotations

import random

import pytest

from baccarat.backoff import Backoff


def test_delays_double_up_to_the_cap_without_jitter() -> None:
    backoff = Backoff(first=0.5, cap=4.0, jitter=0.0)
    assert [backoff.next_delay() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_reset_starts_again_from_the_first_delay() -> None:
    backoff = Backoff(first=1.0, cap=8.0, jitter=0.0)
    backoff.next_delay()
    backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() == 1.0


def test_jitter_only_shortens_and_stays_within_its_fraction() -> None:
    backoff = Backoff(first=2.0, cap=2.0, jitter=0.5, rng=random.Random(7))
    delays = [backoff.next_delay() for _ in range(200)]
    assert all(1.0 <= d <= 2.0 for d in delays)
    assert len(set(delays)) > 100  # really random, not one fixed value


def test_a_long_outage_does_not_overflow() -> None:
    backoff = Backoff(first=0.5, cap=10.0, jitter=0.0, failures=10_000)
    assert backoff.next_delay() == 10.0


@pytest.mark.parametrize(("first", "cap", "jitter"), [(0, 1, 0), (2, 1, 0), (1, 1, 1.0)])
def test_nonsense_settings_are_refused(first: float, cap: float, jitter: float) -> None:
    with pytest.raises(ValueError, match="backoff"):
        Backoff(first=first, cap=cap, jitter=jitter)
