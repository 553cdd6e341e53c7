"""Bets (Art. 13, 17-18): what each bet wins or loses on a result. A pure function.

Player pays 1:1, Banker 1:1 less 5% commission on the win, Tie 8:1, each pair 11:1 (the
payouts are profile settings). On a tie, Player and Banker bets push (Art. 12: the bettor
may withdraw, keep or change them; that choice is the betting system's, not ours).
"""

from __future__ import annotations

from fractions import Fraction

from pydantic import BaseModel, ConfigDict, Field

from baccarat.rules.profiles import Payouts
from baccarat.rules.tableau import Winner


class Stakes(BaseModel):
    """Amounts staked on each bet, in the table's currency unit (non-negative)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    player: Fraction = Field(default=Fraction(0), ge=0)
    banker: Fraction = Field(default=Fraction(0), ge=0)
    tie: Fraction = Field(default=Fraction(0), ge=0)
    player_pair: Fraction = Field(default=Fraction(0), ge=0)
    banker_pair: Fraction = Field(default=Fraction(0), ge=0)


class Winnings(BaseModel):
    """Net win (positive) or loss (negative) of each bet; a push is 0."""

    model_config = ConfigDict(frozen=True)

    player: Fraction
    banker: Fraction
    tie: Fraction
    player_pair: Fraction
    banker_pair: Fraction

    @property
    def total(self) -> Fraction:
        """The net of all the bets together."""
        return self.player + self.banker + self.tie + self.player_pair + self.banker_pair


def winnings(
    stakes: Stakes,
    winner: Winner,
    *,
    player_pair: bool,
    banker_pair: bool,
    payouts: Payouts | None = None,
) -> Winnings:
    """Net win or loss of each bet for this result. Exact: amounts are fractions."""
    pay = payouts or Payouts()
    commission = Fraction(str(pay.banker_commission))
    return Winnings(
        player=_even(stakes.player, winner, "player", Fraction(str(pay.player))),
        banker=_even(
            stakes.banker, winner, "banker", Fraction(str(pay.banker)) * (1 - commission)
        ),
        tie=_bet(stakes.tie, winner == "tie", Fraction(str(pay.tie))),
        player_pair=_bet(stakes.player_pair, player_pair, Fraction(str(pay.pair))),
        banker_pair=_bet(stakes.banker_pair, banker_pair, Fraction(str(pay.pair))),
    )


def _even(stake: Fraction, winner: Winner, side: str, pays: Fraction) -> Fraction:
    if winner == "tie":
        return Fraction(0)
    return _bet(stake, winner == side, pays)


def _bet(stake: Fraction, won: bool, pays: Fraction) -> Fraction:
    return stake * pays if won else -stake
