"""The live edge the plain way: deal the next round card by card from the cards left.

The reference that :func:`baccarat.rules.edge.live_odds` is tested against, and slower:
every deal is followed position by position as :func:`tableau.next_position` orders it,
each card weighed by how many cards of its value are left at that moment (integers, so the
result is exact), every finished round is told apart as :func:`side_bets.outcome` says
(a Dragon 7, a Panda 8, or a plain win or tie), and every bet is settled by
:func:`bets.winnings`. The first two cards of
each hand are taken as an unordered pair of values with the number of its orders.
Pairs are counted over the ranks of the first four cards, in the order they are dealt.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction
from itertools import combinations_with_replacement

from baccarat.rules import side_bets, tableau
from baccarat.rules.bets import Stakes, winnings
from baccarat.rules.edge import LiveOdds, check_left
from baccarat.rules.profiles import Profile

_ONE_OF_EACH = Stakes(
    player=Fraction(1), banker=Fraction(1), tie=Fraction(1), player_pair=Fraction(1),
    banker_pair=Fraction(1), dragon7=Fraction(1), panda8=Fraction(1),
)


def enumerate_live_odds(profile: Profile, left: Sequence[int]) -> LiveOdds:
    """The same figures as :func:`baccarat.rules.edge.live_odds`, by plain enumeration."""
    n = check_left(profile, left)
    by_value = [sum(left[9:]), *left[:9]]
    ways: dict[side_bets.Outcome, int] = dict.fromkeys(
        ("banker", "player", "tie", "dragon7", "panda8"), 0
    )
    for player, banker, weight in _first_four(by_value):
        hands: Hands = (2, 2, tableau.total(player), tableau.total(banker), None)
        _deal(hands, by_value, n - 4, weight, ways)
    deals = sum(ways.values())
    chance = {result: Fraction(w, deals) for result, w in ways.items()}
    player_pair, banker_pair = _pairs(list(left))
    return LiveOdds(
        cards_left=n,
        banker=chance["banker"] + chance["dragon7"],
        player=chance["player"] + chance["panda8"],
        tie=chance["tie"],
        player_pair=player_pair,
        banker_pair=banker_pair,
        dragon7=chance["dragon7"],
        panda8=chance["panda8"],
        **_edges(profile, chance, player_pair, banker_pair),
    )


def _first_four(counts: list[int]) -> Iterator[tuple[list[int], list[int], int]]:
    """Each hand's first two values, unordered, with the ordered deals that give them.

    The four cards are taken out of ``counts`` while the caller deals on from them.
    The tableau sees two cards only through their total, so P1, P2 = 3, 5 and 5, 3 lead to
    the same rounds: one of them is followed, weighed twice.
    """
    hands = list(combinations_with_replacement(range(len(counts)), 2))
    for player in hands:
        for banker in hands:
            weight = (1 if player[0] == player[1] else 2) * (1 if banker[0] == banker[1] else 2)
            four = [*player, *banker]
            for value in four:
                weight *= counts[value]
                counts[value] -= 1
            if weight > 0:
                yield list(player), list(banker), weight
            for value in four:
                counts[value] += 1


Hands = tuple[int, int, int, int, int | None]
"""Both hands as the tableau reads them (:func:`tableau.position_due`): the number of cards
of each, their totals, and Player's third card."""


def _deal(
    hands: Hands, counts: list[int], left: int, weight: int,
    ways: dict[side_bets.Outcome, int],
) -> None:
    """Add ``weight`` times every way the round can go on from these hands.

    Each card dealt is added to its hand's total; ``left`` is the number of cards in
    ``counts``.
    """
    player_cards, banker_cards, player_total, banker_total, player_third = hands
    position = tableau.position_due(*hands)
    if position is None:
        result = side_bets.outcome(player_cards, banker_cards, player_total, banker_total)
        ways[result] += weight * _unused_draws(left, 6 - player_cards - banker_cards)
        return
    to_player = position in ("P1", "P2", "P3")
    for value, count in enumerate(counts):
        if not count:
            continue
        counts[value] -= 1
        if to_player:
            third = value if position == "P3" else None
            after = (player_cards + 1, banker_cards, (player_total + value) % 10, banker_total,
                     third)  # fmt: skip
        else:
            after = (player_cards, banker_cards + 1, player_total, (banker_total + value) % 10,
                     player_third)  # fmt: skip
        _deal(after, counts, left - 1, weight * count, ways)
        counts[value] += 1


def _unused_draws(left: int, cards: int) -> int:
    """Weigh a short round as a six-card deal: the draws it leaves can be any card left."""
    ways = 1
    for i in range(cards):
        ways *= left - i
    return ways


def _pairs(left: list[int]) -> tuple[Fraction, Fraction]:
    """Art. 13: the chances that P1 and P2, and that B1 and B2, share a rank."""
    ways = {"player": 0, "banker": 0, "deals": 0}
    _deal_four([], left, 1, ways)
    return Fraction(ways["player"], ways["deals"]), Fraction(ways["banker"], ways["deals"])


def _deal_four(ranks: list[int], left: list[int], weight: int, ways: dict[str, int]) -> None:
    """Add the weight of every ordered deal of P1, B1, P2, B2 by rank, and of its pairs."""
    if len(ranks) == 4:
        p1, b1, p2, b2 = ranks
        ways["deals"] += weight
        ways["player"] += weight if p1 == p2 else 0
        ways["banker"] += weight if b1 == b2 else 0
        return
    for rank, count in enumerate(left):
        if count:
            left[rank] -= 1
            _deal_four([*ranks, rank], left, weight * count, ways)
            left[rank] += 1


def _edges(
    profile: Profile, chance: dict[side_bets.Outcome, Fraction], player_pair: Fraction,
    banker_pair: Fraction,
) -> dict[str, Fraction]:
    """Each bet's house edge: minus its expected winnings per unit, settled by the bets."""
    expected = dict.fromkeys(
        ("player", "banker", "tie", "player_pair", "banker_pair", "dragon7", "panda8"),
        Fraction(0),
    )
    for result, p_result in chance.items():
        for pp, p_pp in ((True, player_pair), (False, 1 - player_pair)):
            for bp, p_bp in ((True, banker_pair), (False, 1 - banker_pair)):
                won = winnings(
                    _ONE_OF_EACH, side_bets.winner_of(result), player_pair=pp,
                    banker_pair=bp, payouts=profile.payouts,
                    dragon7=result == "dragon7", panda8=result == "panda8",
                )
                # Each bet's winnings depend on one of the three only, so the product of
                # the marginals gives each expectation exactly.
                weight = p_result * p_pp * p_bp
                for bet in expected:
                    expected[bet] += weight * getattr(won, bet)
    return {f"edge_{bet}": -value for bet, value in expected.items()}
