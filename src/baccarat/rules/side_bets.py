"""EZ Baccarat's side bets, Dragon 7 and Panda 8, and its banker push: what decides them.

* **Dragon 7** wins when Banker wins with three cards totalling 7 (pays 40:1).
* **Panda 8** wins when Player wins with three cards totalling 8 (pays 25:1).
* EZ Baccarat takes no commission on Banker: a Banker win with three cards totalling 7 (a
  Dragon 7) pushes the Banker bet instead; every other Banker win pays 1:1.

A 7 or an 8 of two cards, or a tie on a three-card 7 or 8, wins neither side bet. Which
bets a table deals is its profile's ``side_bets`` (:class:`baccarat.rules.profiles.Profile`);
the payouts are ``payouts.dragon7`` and ``payouts.panda8``.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from baccarat.rules import tableau

SideBet = Literal["dragon7", "panda8"]
SIDE_BETS: Final[tuple[SideBet, ...]] = get_args(SideBet)

Outcome = Literal["banker", "player", "tie", "dragon7", "panda8"]
"""A round's winner, with the Banker and Player wins that win a side bet told apart:
``dragon7`` is a Banker win, ``panda8`` a Player win."""


def dragon7(banker_cards: int, player_total: int, banker_total: int) -> bool:
    """Banker wins with three cards totalling 7."""
    return banker_cards == 3 and banker_total == 7 and player_total < 7


def panda8(player_cards: int, player_total: int, banker_total: int) -> bool:
    """Player wins with three cards totalling 8."""
    return player_cards == 3 and player_total == 8 and banker_total < 8


def outcome(
    player_cards: int, banker_cards: int, player_total: int, banker_total: int
) -> Outcome:
    """The round's :data:`Outcome` from the finished hands' sizes and totals."""
    if dragon7(banker_cards, player_total, banker_total):
        return "dragon7"
    if panda8(player_cards, player_total, banker_total):
        return "panda8"
    return tableau.winner(player_total, banker_total)


def winner_of(result: Outcome) -> tableau.Winner:
    """The plain winner (Art. 11-12) of an :data:`Outcome`."""
    if result == "dragon7":
        return "banker"
    if result == "panda8":
        return "player"
    return result
