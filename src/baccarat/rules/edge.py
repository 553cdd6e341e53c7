"""The live edge: exact odds of the next round and every bet's edge on the cards left.

A round is decided by at most six cards, drawn without replacement. Pad every round to six
cards (the draws it does not use can be any card left: that changes no probability) and
the chance of one ordered sequence of six values is ``prod(c[v] falling m[v]) / (n falling
6)``, where ``m`` is how often each value occurs in it, ``c`` the cards of each value left
and ``n`` all the cards left. It depends on the sequence only through its multiset. So the
part that does not depend on the shoe, how many orderings of each of the 5,005 multisets
of six values make Banker, Player or a tie win (and of those, how many are a Banker win
with three cards totalling 7, Dragon 7, or a Player win with three totalling 8, Panda 8:
:mod:`baccarat.rules.side_bets`), is counted once from the engine's own
tableau (:func:`tableau.position_due`, what :func:`tableau.next_position` reads from the
hands); an update is then one sum of integer products over those multisets, exact, and
takes a few milliseconds (``bench/edge.py``).

Totals depend on values (ten and pictures are 0), pairs on ranks (Art. 13): the cards left
are counted by rank, ``left[0]`` aces to ``left[12]`` kings. A pair is the first two cards
of a hand having one rank, whose chance is the same for both hands.

:mod:`baccarat.rules.edge_enumeration` computes the same figures by dealing card by card;
the tests hold one against the other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement
from math import factorial, prod
from typing import Final, Literal, get_args

from baccarat.cards import RANKS, Card
from baccarat.errors import BaccaratError
from baccarat.rules import side_bets, tableau
from baccarat.rules.profiles import Payouts, Profile
from baccarat.rules.side_bets import SideBet

ROUND_CARDS: Final = 6
"""The most cards one round can take (Art. 9): fewer left and a round may not finish."""

_VALUES: Final = 10

Bet = Literal["banker", "player", "tie", "player_pair", "banker_pair"]
"""The bets of Art. 13, by the names of :class:`LiveOdds`'s fields."""
BETS: Final[tuple[Bet, ...]] = get_args(Bet)


class EdgeError(BaccaratError, ValueError):
    """Counts of cards left that no shoe of the profile can hold; the text says why."""


class ShoeTooShortError(EdgeError):
    """Fewer than six cards left: the next round may need more cards than the shoe has."""


@dataclass(frozen=True)
class LiveOdds:
    """The next round's exact chances, and each bet's house edge per unit staked.

    An edge is what the bettor loses on average per unit staked (a push counts as 0):
    positive when the house has the advantage, negative when the cards left favour the
    bettor. Banker's commission is included; a tie pushes Banker and Player bets; under
    EZ Baccarat's rule a Dragon 7 pushes the Banker bet. ``dragon7`` and ``panda8`` are
    the side bets' chances (counted whether or not the profile deals them; their edges
    are at the profile's payouts).
    """

    cards_left: int
    banker: Fraction
    player: Fraction
    tie: Fraction
    player_pair: Fraction
    banker_pair: Fraction
    edge_banker: Fraction
    edge_player: Fraction
    edge_tie: Fraction
    edge_player_pair: Fraction
    edge_banker_pair: Fraction
    dragon7: Fraction
    panda8: Fraction
    edge_dragon7: Fraction
    edge_panda8: Fraction

    def chance(self, bet: Bet | SideBet) -> Fraction:
        """The chance that ``bet`` wins the next round."""
        chance: Fraction = getattr(self, bet)
        return chance

    def house_edge(self, bet: Bet | SideBet) -> Fraction:
        """The house's edge on ``bet``; the bettor's, the player edge, is its negative."""
        edge: Fraction = getattr(self, f"edge_{bet}")
        return edge

    def as_floats(self) -> dict[str, float]:
        """Every chance and edge as a float, by field name (``cards_left`` left out)."""
        return {
            name: float(value)
            for name, value in vars(self).items()
            if isinstance(value, Fraction)
        }


def live_odds(profile: Profile, left: Sequence[int]) -> LiveOdds:
    """Exact odds of the next round dealt from ``left``, 13 counts by rank (ace .. king).

    Raise :class:`ShoeTooShortError` with fewer than six cards left, :class:`EdgeError`
    for counts that the profile's shoe cannot hold.
    """
    n = check_left(profile, left)
    by_value = [sum(left[9:]), *left[:9]]
    banker_ways, player_ways, dragon_ways, panda_ways = _outcome_ways(by_value)
    all_ways = _falling(n, ROUND_CARDS)
    banker = Fraction(banker_ways, all_ways)
    player = Fraction(player_ways, all_ways)
    pair = Fraction(sum(c * (c - 1) for c in left), n * (n - 1))
    return priced(
        profile.payouts, n, banker, player, 1 - banker - player, pair,
        dragon7=Fraction(dragon_ways, all_ways), panda8=Fraction(panda_ways, all_ways),
    )


def check_left(profile: Profile, left: Sequence[int]) -> int:
    """The number of cards in ``left`` once it is known to fit the profile's shoe."""
    if len(left) != len(RANKS):
        raise EdgeError(f"cards left are counted by rank: 13 counts, not {len(left)}")
    most = 4 * profile.decks
    for rank, count in zip(RANKS, left, strict=True):
        if not 0 <= count <= most:
            raise EdgeError(
                f"{count} cards of rank {rank} left: {profile.decks} decks hold 0 to {most}"
            )
    n = sum(left)
    if n < ROUND_CARDS:
        raise ShoeTooShortError(
            f"{n} cards left: a round may need {ROUND_CARDS}, so the next one has no odds"
        )
    return n


def priced(  # noqa: PLR0917 - the chances of a round, named as the fields they fill
    payouts: Payouts, n: int, banker: Fraction, player: Fraction, tie: Fraction,
    pair: Fraction, *, dragon7: Fraction, panda8: Fraction,
) -> LiveOdds:
    """The odds with each bet's house edge for these payouts (Art. 17-18).

    ``dragon7`` is part of ``banker``, ``panda8`` of ``player``.
    """
    pays_banker = _exact(payouts.banker) * (1 - _exact(payouts.banker_commission))
    banker_paid = banker - dragon7 if payouts.banker_push_on_three_card_7 else banker
    edge_pair = (1 - pair) - pair * _exact(payouts.pair)
    return LiveOdds(
        cards_left=n,
        banker=banker,
        player=player,
        tie=tie,
        player_pair=pair,
        banker_pair=pair,
        edge_banker=player - banker_paid * pays_banker,
        edge_player=banker - player * _exact(payouts.player),
        edge_tie=(1 - tie) - tie * _exact(payouts.tie),
        edge_player_pair=edge_pair,
        edge_banker_pair=edge_pair,
        dragon7=dragon7,
        panda8=panda8,
        edge_dragon7=(1 - dragon7) - dragon7 * _exact(payouts.dragon7),
        edge_panda8=(1 - panda8) - panda8 * _exact(payouts.panda8),
    )


def cards_left(profile: Profile, out: Iterable[Card]) -> tuple[int, ...]:
    """Counts by rank of the cards left in a full shoe of the profile once ``out`` is out.

    Raise :class:`EdgeError` naming a card that is out more often than the shoe holds it.
    """
    seen = Counter(out)
    for card, times in seen.items():
        if times > profile.decks:
            raise EdgeError(
                f"{card} is out {times} times, but a {profile.decks}-deck shoe holds only "
                f"{profile.decks}"
            )
    by_rank = Counter(card.rank for card in seen.elements())
    return tuple(4 * profile.decks - by_rank[rank] for rank in range(1, len(RANKS) + 1))


def _exact(payout: float) -> Fraction:
    """A payout as the decimal it was written as (0.05 is 1/20), as settlement reads it."""
    return Fraction(str(payout))


def _falling(n: int, k: int) -> int:
    return prod(range(n - k + 1, n + 1)) if n >= k else 0


# ------------------------------------------------------------------ the update


def _outcome_ways(by_value: Sequence[int]) -> tuple[int, int, int, int]:
    """Six-card deals from these counts by value won by Banker, Player, Dragon 7, Panda 8."""
    ways = [_falling(count, m) for count in by_value for m in range(ROUND_CARDS + 1)]
    banker = player = dragon = panda = 0
    for factors, banker_orders, player_orders, dragon_orders, panda_orders in _six_card_table():
        w = prod(map(ways.__getitem__, factors))
        banker += banker_orders * w
        player += player_orders * w
        if dragon_orders:
            dragon += dragon_orders * w
        if panda_orders:
            panda += panda_orders * w
    return banker, player, dragon, panda


# ------------------------------------------------------------- counted once

_Table = tuple[tuple[tuple[int, ...], int, int, int, int], ...]


@cache
def _six_card_table() -> _Table:
    """Per multiset of six values, how many orderings Banker, Player win, Dragon 7, Panda 8.

    The multiset is given as where its falling factorials sit in the update's list
    (value * 7 + multiplicity).
    """
    orders: dict[tuple[int, ...], Counter[side_bets.Outcome]] = {}
    for (prefix, result), count in _deciding_prefixes().items():
        for tail, tail_orders in _tails(ROUND_CARDS - len(prefix)):
            full = tuple(sorted(prefix + tail))
            orders.setdefault(full, Counter())[result] += count * tail_orders
    table = []
    for full, won in sorted(orders.items()):
        factors = tuple(v * (ROUND_CARDS + 1) + full.count(v) for v in sorted(set(full)))
        table.append((
            factors, won["banker"] + won["dragon7"], won["player"] + won["panda8"],
            won["dragon7"], won["panda8"],
        ))
    return tuple(table)


def _deciding_prefixes() -> Counter[tuple[tuple[int, ...], side_bets.Outcome]]:
    """Ordered deals that complete a round, counted by their values (sorted) and outcome.

    The first two cards of a hand count only through their total, so each hand's two
    values are taken unordered (two orders when they differ); the third cards follow
    where the tableau says, one value at a time.
    """
    firsts: dict[tuple[int, int], Counter[tuple[int, ...]]] = {}
    two_card_hands = list(combinations_with_replacement(range(_VALUES), 2))
    for player in two_card_hands:
        for banker in two_card_hands:
            totals = (tableau.total(player), tableau.total(banker))
            ways = (1 if player[0] == player[1] else 2) * (1 if banker[0] == banker[1] else 2)
            firsts.setdefault(totals, Counter())[tuple(sorted(player + banker))] += ways
    prefixes: Counter[tuple[tuple[int, ...], side_bets.Outcome]] = Counter()
    for (player_total, banker_total), hands in firsts.items():
        for drawn, winner in _endings(2, 2, player_total, banker_total, None):
            for four, ways in hands.items():
                prefixes[tuple(sorted(four + drawn)), winner] += ways
    return prefixes


def _endings(
    player_cards: int, banker_cards: int, player_total: int, banker_total: int,
    player_third: int | None,
) -> Iterator[tuple[tuple[int, ...], side_bets.Outcome]]:
    """The third cards (in draw order) that can follow these hands, with the outcome.

    The hands are given as the tableau reads them: sizes, totals, Player's third card.
    """
    position = tableau.position_due(
        player_cards, banker_cards, player_total, banker_total, player_third
    )
    if position is None:
        yield (), side_bets.outcome(player_cards, banker_cards, player_total, banker_total)
        return
    for value in range(_VALUES):
        if position == "P3":
            endings = _endings(
                player_cards + 1, banker_cards, (player_total + value) % 10, banker_total,
                value,
            )
        else:
            endings = _endings(
                player_cards, banker_cards + 1, player_total, (banker_total + value) % 10,
                player_third,
            )
        for drawn, winner in endings:
            yield (value, *drawn), winner


@cache
def _tails(size: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Every multiset of ``size`` values (sorted) with its number of orderings.

    These are the draws a round leaves unused, which make every round six cards long.
    """
    return tuple(
        (values, factorial(size) // prod(factorial(values.count(v)) for v in set(values)))
        for values in combinations_with_replacement(range(_VALUES), size)
    )
