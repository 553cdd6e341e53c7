"""Dealer pace: rounds per hour and seconds per round over a shoe.

One definition for the table's metrics and the floor's history: a round *ends* with its
result or its void (the first of them: a published round voided later ended once), and a
shoe's pace is the mean time from one round's end to the next one's, over the shoe: a
whole cycle of bets and dealing, breaks inside the shoe included (an alarm the pit took
long to settle, a dealer's change). A shoe needs two round ends to have a pace.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pace:
    """A shoe's pace: ``rounds`` ended, ``seconds`` from the first end to the last."""

    rounds: int
    seconds: float

    @property
    def seconds_per_round(self) -> float:
        """The mean time from one round's end to the next's."""
        return self.seconds / (self.rounds - 1)

    @property
    def rounds_per_hour(self) -> float:
        """How many rounds an hour at that pace (0 when no time passed: no pace)."""
        per_round = self.seconds_per_round
        return 3600.0 / per_round if per_round > 0 else 0.0


def pace(round_ends: list[float]) -> Pace | None:
    """The pace of a shoe whose rounds ended at these times (Unix seconds, any order)."""
    if len(round_ends) < 2:
        return None
    return Pace(len(round_ends), max(round_ends) - min(round_ends))
