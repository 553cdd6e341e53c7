"""The one reconnection delay of the package: jittered, capped, doubling, reset on success.

Every link that reconnects (the shoe's port, the USB shuffler, the table's broker, a board's
feed, the recorder's floor broker and database) waits ``backoff.next_delay()`` seconds
between attempts and calls ``backoff.reset()`` once
an attempt has worked, so the next outage starts again from the shortest delay.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Backoff:
    """Delays of ``first * 2**n`` seconds, capped at ``cap``, each scaled by [1 - jitter, 1].

    The jitter spreads the reconnections of many tables after a broker restart. ``rng``
    makes the delays reproducible in tests.
    """

    first: float = 0.5
    cap: float = 10.0
    jitter: float = 0.5
    rng: random.Random = field(default_factory=random.Random)
    failures: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.cap:
            raise ValueError(f"backoff needs 0 < first <= cap, not {self.first}, {self.cap}")
        if not 0 <= self.jitter < 1:
            raise ValueError(f"backoff jitter must be in [0, 1), not {self.jitter}")

    def next_delay(self) -> float:
        """Count one more failure; the seconds to wait before the next attempt."""
        base = min(self.cap, self.first * 2.0 ** min(self.failures, 64))
        self.failures += 1
        return base * (1.0 - self.rng.uniform(0.0, self.jitter))

    def reset(self) -> None:
        """An attempt worked: the next failure waits the shortest delay again."""
        self.failures = 0
