"""Exact probabilities and house edges of baccarat, by exhaustive enumeration.

Every ordered deal of up to six cards from a full shoe is weighed by how many ways it can
come out; which cards are drawn is decided by :func:`tableau.next_position`, the engine's
own tableau, so the odds check the engine rather than a second copy of the rules. The
arithmetic is in integers and exact; only the final division rounds. The side bets of EZ
Baccarat (Dragon 7, Panda 8: :mod:`baccarat.rules.side_bets`) are counted in the same pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from baccarat.rules import side_bets, tableau
from baccarat.rules.profiles import Payouts


@dataclass(frozen=True)
class Odds:
    """Probabilities of each outcome and the house edge of each bet (per unit staked)."""

    banker: float
    player: float
    tie: float
    player_pair: float
    banker_pair: float
    edge_banker: float
    edge_player: float
    edge_tie: float
    edge_pair: float
    dragon7: float = 0.0
    panda8: float = 0.0
    edge_dragon7: float = 0.0
    edge_panda8: float = 0.0


def outcome_weights(decks: int) -> tuple[int, int, int, int]:
    """Ways (ordered deals) for banker, player and tie to win, and the total of ways."""
    wins = _weights(decks)
    banker, player, tie = wins["banker"], wins["player"], wins["tie"]
    return banker, player, tie, banker + player + tie


def _weights(decks: int) -> dict[str, int]:
    """Ways for banker, player, tie to win, and for Dragon 7 and Panda 8 (among those)."""
    counts = [16 * decks] + [4 * decks] * 9  # by value: 0 (ten and pictures), 1..9
    wins = {"banker": 0, "player": 0, "tie": 0, "dragon7": 0, "panda8": 0}
    left = 52 * decks
    for p1 in range(10):
        w1 = counts[p1]
        counts[p1] -= 1
        for b1 in range(10):
            w2 = w1 * counts[b1]
            counts[b1] -= 1
            for p2 in range(10):
                w3 = w2 * counts[p2]
                counts[p2] -= 1
                for b2 in range(10):
                    w4 = w3 * counts[b2]
                    if w4:
                        counts[b2] -= 1
                        _after_four([p1, p2], [b1, b2], w4, counts, left - 4, wins)
                        counts[b2] += 1
                counts[p2] += 1
            counts[b1] += 1
        counts[p1] += 1
    return wins


def _after_four(  # noqa: PLR0917 - the enumeration's hot loop: no wrapping object
    player: list[int], banker: list[int], weight: int, counts: list[int], left: int,
    wins: dict[str, int],
) -> None:
    """Add the weight of every way the round can end from two cards each."""
    position = tableau.next_position(player, banker)
    if position is None:
        _score(player, banker, weight * _ways_rest(left, 2), wins)
        return
    if position == "B3":
        for b3 in range(10):
            if counts[b3]:
                _score(player, [*banker, b3], weight * counts[b3] * _ways_rest(left - 1, 1), wins)
        return
    for p3 in range(10):
        w = weight * counts[p3]
        if not w:
            continue
        counts[p3] -= 1
        with_third = [*player, p3]
        if tableau.next_position(with_third, banker) == "B3":
            for b3 in range(10):
                if counts[b3]:
                    _score(with_third, [*banker, b3], w * counts[b3], wins)
        else:
            _score(with_third, banker, w * (left - 1), wins)
        counts[p3] += 1


def _ways_rest(left: int, cards: int) -> int:
    """Weigh short deals like six-card ones: the unused draws can be any remaining card."""
    ways = 1
    for i in range(cards):
        ways *= left - i
    return ways


def _score(player: list[int], banker: list[int], weight: int, wins: dict[str, int]) -> None:
    player_total, banker_total = tableau.total(player), tableau.total(banker)
    result = side_bets.outcome(len(player), len(banker), player_total, banker_total)
    wins[side_bets.winner_of(result)] += weight
    if result != side_bets.winner_of(result):
        wins[result] += weight


def pair_probability(decks: int) -> Fraction:
    """Art. 13: the first two cards of a hand have the same rank, over all 13 ranks."""
    per_rank, cards = 4 * decks, 52 * decks
    return sum(
        (Fraction(per_rank, cards) * Fraction(per_rank - 1, cards - 1) for _ in range(13)),
        Fraction(0),
    )


def compute_odds(decks: int, payouts: Payouts | None = None) -> Odds:
    """Exact odds for a shoe of ``decks`` decks and the edges for these payouts."""
    pay = payouts or Payouts()
    wins = _weights(decks)
    total = wins["banker"] + wins["player"] + wins["tie"]
    b, p, t, d7, p8 = (
        Fraction(wins[k], total) for k in ("banker", "player", "tie", "dragon7", "panda8")
    )
    pair = pair_probability(decks)
    banker_pays = Fraction(pay.banker) * (1 - Fraction(pay.banker_commission).limit_denominator())
    banker_paid = b - d7 if pay.banker_push_on_three_card_7 else b
    return Odds(
        banker=float(b),
        player=float(p),
        tie=float(t),
        player_pair=float(pair),
        banker_pair=float(pair),
        edge_banker=float(p - banker_paid * banker_pays),
        edge_player=float(b - p * Fraction(pay.player)),
        edge_tie=float((1 - t) - t * Fraction(pay.tie)),
        edge_pair=float((1 - pair) - pair * Fraction(pay.pair)),
        dragon7=float(d7),
        panda8=float(p8),
        edge_dragon7=float((1 - d7) - d7 * Fraction(str(pay.dragon7))),
        edge_panda8=float((1 - p8) - p8 * Fraction(str(pay.panda8))),
    )
