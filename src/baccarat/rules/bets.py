"""Bets (Art. 13, 17-18): what each bet wins or loses on a result. A pure function.

Player pays 1:1, Banker 1:1 less 5% commission on the win, Tie 8:1, each pair 11:1 (the
payouts are profile settings). On a tie, Player and Banker bets push (Art. 12: the bettor
may withdraw, keep or change them; that choice is the betting system's, not ours).
EZ Baccarat (``payouts.banker_push_on_three_card_7``): a Banker win with three cards
totalling 7 pushes the Banker bet. Dragon 7 pays 40:1 and Panda 8 25:1
(:mod:`baccarat.rules.side_bets`); they lose on every other result, a tie included.
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
    dragon7: Fraction = Field(default=Fraction(0), ge=0)
    panda8: Fraction = Field(default=Fraction(0), ge=0)


class Winnings(BaseModel):
    """Net win (positive) or loss (negative) of each bet; a push is 0."""

    model_config = ConfigDict(frozen=True)

    player: Fraction
    banker: Fraction
    tie: Fraction
    player_pair: Fraction
    banker_pair: Fraction
    dragon7: Fraction = Fraction(0)
    panda8: Fraction = Fraction(0)

    @property
    def total(self) -> Fraction:
        """The net of all the bets together."""
        return (self.player + self.banker + self.tie + self.player_pair + self.banker_pair
                + self.dragon7 + self.panda8)


def winnings(
    stakes: Stakes,
    winner: Winner,
    *,
    player_pair: bool,
    banker_pair: bool,
    payouts: Payouts | None = None,
    dragon7: bool = False,
    panda8: bool = False,
) -> Winnings:
    """Net win or loss of each bet for this result. Exact: amounts are fractions.

    ``dragon7``: Banker won with three cards totalling 7; ``panda8``: Player won with three
    cards totalling 8 (:mod:`baccarat.rules.side_bets` decides them from the hands).
    """
    pay = payouts or Payouts()
    commission = Fraction(str(pay.banker_commission))
    if (dragon7 and winner != "banker") or (panda8 and winner != "player"):
        raise ValueError(f"a {winner} result cannot be a Dragon 7 or a Panda 8")
    banker = _even(stakes.banker, winner, "banker", Fraction(str(pay.banker)) * (1 - commission))
    if dragon7 and pay.banker_push_on_three_card_7:
        banker = Fraction(0)
    return Winnings(
        player=_even(stakes.player, winner, "player", Fraction(str(pay.player))),
        banker=banker,
        tie=_bet(stakes.tie, winner == "tie", Fraction(str(pay.tie))),
        player_pair=_bet(stakes.player_pair, player_pair, Fraction(str(pay.pair))),
        banker_pair=_bet(stakes.banker_pair, banker_pair, Fraction(str(pay.pair))),
        dragon7=_bet(stakes.dragon7, dragon7, Fraction(str(pay.dragon7))),
        panda8=_bet(stakes.panda8, panda8, Fraction(str(pay.panda8))),
    )


def _even(stake: Fraction, winner: Winner, side: str, pays: Fraction) -> Fraction:
    if winner == "tie":
        return Fraction(0)
    return _bet(stake, winner == side, pays)


def _bet(stake: Fraction, won: bool, pays: Fraction) -> Fraction:
    return stake * pays if won else -stake
