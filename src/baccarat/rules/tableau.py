"""The drawing rules (Art. 7, 9, 11, 13): the one copy of the tableau in the project.

Everything that needs to know whether a hand draws (the engine, the exact odds, the dealer
model of the simulators) calls these functions; nothing else writes the tableau out again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

Position = Literal["P1", "B1", "P2", "B2", "P3", "B3"]
Winner = Literal["banker", "player", "tie"]

DEAL_ORDER: Final[tuple[Position, ...]] = ("P1", "B1", "P2", "B2")
"""Art. 7.1: one card at a time, alternately, starting with Player."""


def total(values: Sequence[int]) -> int:
    """Hand total (Art. 5): the sum of the card values, modulo 10."""
    return sum(values) % 10


def is_natural(two_card_total: int) -> bool:
    """A two-card total of 8 or 9 (Art. 9): nobody draws."""
    return two_card_total >= 8


def player_draws(player_total: int) -> bool:
    """Art. 9: Player draws on 0-5 and stands on 6-9 (naturals are checked before)."""
    return player_total <= 5


_BANKER_DRAWS_ON: Final[dict[int, frozenset[int]]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset(v for v in range(10) if v != 8),
    4: frozenset(range(2, 8)),
    5: frozenset(range(4, 8)),
    6: frozenset((6, 7)),
    7: frozenset(),
    8: frozenset(),
    9: frozenset(),
}
"""Art. 9, Banker's total -> the values of Player's third card on which Banker draws."""


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Art. 9: does Banker draw, given its two-card total and Player's third card value?

    ``player_third`` is ``None`` when Player stood: Banker then draws on 0-5.
    """
    if player_third is None:
        return banker_total <= 5
    return player_third in _BANKER_DRAWS_ON[banker_total]


def next_position(player: Sequence[int], banker: Sequence[int]) -> Position | None:
    """The position the next card must go to, or ``None`` when the round is complete.

    ``player`` and ``banker`` are the values of the cards each hand holds so far, dealt in
    the order of Art. 7 (so only the shapes 0/0, 1/0, 1/1, 2/1, 2/2, 3/2, 2/3, 3/3 occur).
    """
    player_third = player[2] if len(player) == 3 else None
    return position_due(len(player), len(banker), total(player), total(banker), player_third)


def position_due(
    player_cards: int, banker_cards: int, player_total: int, banker_total: int,
    player_third: int | None,
) -> Position | None:
    """:func:`next_position` from the hands' sizes and totals and Player's third card."""
    dealt = player_cards + banker_cards
    if dealt < 4:
        return DEAL_ORDER[dealt]
    if dealt == 4:
        return third_card_due(player_total, banker_total)
    if player_cards == 3 and banker_cards == 2 and player_third is not None:
        return after_player_third(banker_total, player_third)
    return None


def third_card_due(player_two: int, banker_two: int) -> Position | None:
    """After the first four cards: ``P3``, ``B3`` or ``None`` (Art. 9).

    ``player_two`` and ``banker_two`` are the two-card totals. Naturals stop the round;
    Player draws first; if Player stands, Banker draws on 0-5.
    """
    if is_natural(player_two) or is_natural(banker_two):
        return None
    if player_draws(player_two):
        return "P3"
    return "B3" if banker_draws(banker_two, None) else None


def after_player_third(banker_two: int, player_third: int) -> Position | None:
    """After Player's third card: ``B3`` or ``None``, by Banker's total and that card (Art. 9)."""
    return "B3" if banker_draws(banker_two, player_third) else None


def winner(player_total: int, banker_total: int) -> Winner:
    """Art. 11-12: the higher total wins; equal totals are a tie."""
    if player_total > banker_total:
        return "player"
    if banker_total > player_total:
        return "banker"
    return "tie"
