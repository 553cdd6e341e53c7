"""Shuffle integrity: a shoe whose cards repeat a stretch of an earlier shoe's order.

Pure: no clock, no I/O. The table's daemon and the floor recorder both feed it the cards
as they come out (:class:`ShuffleIndex`), and it says, at the card that makes it certain,
that a run of this shoe's cards repeats, in the same order, a run of an earlier shoe's:
consecutive cards, or the same order with one gap (one card of this shoe that the earlier
one does not have there, one card of the earlier one missing here, or one card of each
that differ in the same place: an unreadable card, a card swapped).

**The chance of it in honest shuffles.** Cards are compared by their full code with suit
(the device reports it). A shoe of ``d`` decks holds each of the 52 codes ``d`` times.
For two independently shuffled shoes, the chance that the cards at ``k`` given positions
of one are the cards at ``k`` given positions of the other, in order, is exactly
:func:`window_chance` (about ``52**-k``: a little more, because the first cards of a
window leave the others slightly likelier). A pair of shoes of ``C`` cards each has
:func:`windows` ways to hold such a match (consecutive, or with a gap of any of the three
kinds at any of the ``k - 1`` places inside it), so the chance that a shoe raises a false alarm
against ``S`` earlier shoes is at most ``S * windows(C, k) * window_chance(k)`` (a union
bound: :func:`false_alarm_rate`). :data:`RUN` is the shortest ``k`` for which that is
below :data:`TARGET_RATE` for a whole floor's day (:data:`FLOOR_SHOES` shoes of 8 decks):
10 cards, 6.5e-7 a shoe. A table compares with its own last shoes only, far fewer.

**The index.** Every ``GRAM`` consecutive cards of every shoe held are a key into one
hash table (chains through fixed arrays sized by the capacity: their size for a floor's
day is in docs/benchmarks.md), and each card looks up the key its last ``GRAM`` cards make:
the matches it finds are the candidate alignments, which are then checked card by card,
backwards from the card just out. A run of :data:`RUN` cards with at most one gap has a
stretch of at least ``ceil(RUN / 2) >= GRAM`` consecutive cards, so no such run escapes the
keys. Each card costs a constant amount of work, whatever the number of shoes held.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Final, Literal

SUITED_CODES: Final = 52
GRAM: Final = 5
"""Cards in one key of the index."""
TARGET_RATE: Final = 1e-6
"""False alarms a shoe may raise at most, compared with a whole floor's day of shoes."""
FLOOR_SHOES: Final = 20_000
"""A floor's day: 1,000 tables, 20 shoes each."""
RUN: Final = 10
"""Cards of an earlier shoe, in order, that make a repeat certain (one gap allowed);
the shortest run that meets :data:`TARGET_RATE` against :data:`FLOOR_SHOES` 8-deck shoes
(tests/rules/test_shuffle_match.py recomputes it)."""
MAX_CARDS: Final = 12 * SUITED_CODES
"""Cards of one shoe the index holds (12 decks, the most a shoe may hold)."""
NONE: Final = 255
"""A position with no readable card: it matches nothing."""
_HASH: Final = 0x9E3779B97F4A7C15
"""Fibonacci hashing of a key into the buckets."""

GapKind = Literal["extra", "missing", "different"]


@dataclass(frozen=True, slots=True)
class Gap:
    """The one gap in a run.

    ``extra``: card ``position`` of this shoe is not in the earlier one; ``missing``: card
    ``position`` of the earlier shoe is not in this one; ``different``: card ``position``
    of this shoe is not the earlier one's in that place (1-based).
    """

    kind: GapKind
    position: int


@dataclass(frozen=True, slots=True)
class Repeat:
    """A run of this shoe's cards that repeats one of an earlier shoe.

    Cards ``first``-``last`` of this shoe repeat ``earlier_first``-``earlier_last`` of shoe
    ``earlier`` (positions 1-based, in the order the cards came out, burns included);
    ``cards`` of them matched, with at most one ``gap``.
    """

    earlier: Hashable
    earlier_first: int
    earlier_last: int
    first: int
    last: int
    cards: int
    gap: Gap | None = None


@cache
def window_chance(decks: int = 8, other_decks: int | None = None, k: int = RUN) -> Fraction:
    """The exact chance that ``k`` given cards of one honest shoe are ``k`` of another's.

    In order, at given positions of each; ``decks`` and ``other_decks`` decks, both
    shuffled at random. The sum over every sequence ``x`` of ``k`` codes of
    ``P_a(x) P_b(x)``, where ``P(x)`` is the product, card by card, of the copies of that
    code still in the shoe over the cards still in it. It depends on ``x`` only through
    how often each code repeats in it, so the sum runs over those patterns: a few dozen
    states for ``k = 10``.
    """
    da, db = decks, other_decks or decks
    na, nb, copies = SUITED_CODES * da, SUITED_CODES * db, min(da, db)
    states: dict[tuple[int, ...], Fraction] = {(0,) * (copies + 1): Fraction(1)}
    for t in range(k):
        after: dict[tuple[int, ...], Fraction] = {}
        for used, weight in states.items():
            fresh = SUITED_CODES - sum(used[1:])
            for times in range(copies):  # a code seen `times` times so far (0: a new one)
                ways = fresh if times == 0 else used[times]
                if ways == 0:
                    continue
                moved = list(used)
                if times:
                    moved[times] -= 1
                moved[times + 1] += 1
                step = Fraction(da - times, na - t) * Fraction(db - times, nb - t)
                key = tuple(moved)
                after[key] = after.get(key, Fraction(0)) + weight * ways * step
        states = after
    return sum(states.values(), Fraction(0))


def windows(cards: int, k: int = RUN, *, gaps: bool = True) -> int:
    """The places a match of ``k`` cards can take between two shoes of ``cards`` cards.

    Consecutive: ``(C - k + 1)**2``. With a gap (``gaps``): a span of ``k + 1`` cards in
    one shoe against ``k`` in the other (a card extra, or missing), or ``k + 1`` against
    ``k + 1`` (a card different), the gap at one of the ``k - 1`` places inside.
    """
    if cards < k:
        return 0
    exact = (cards - k + 1) ** 2
    if not gaps or cards == k:
        return exact
    shifted = 2 * (k - 1) * (cards - k) * (cards - k + 1)
    different = (k - 1) * (cards - k) ** 2
    return exact + shifted + different


def false_alarm_rate(k: int = RUN, shoes: int = FLOOR_SHOES, decks: int = 8) -> float:
    """At most the chance that one honest shoe matches any of ``shoes`` earlier ones."""
    cards = SUITED_CODES * decks
    return float(shoes * windows(cards, k) * window_chance(decks, decks, k))


def run_for(target: float = TARGET_RATE, shoes: int = FLOOR_SHOES, decks: int = 8) -> int:
    """The shortest run whose :func:`false_alarm_rate` is below ``target``."""
    k = GRAM
    while false_alarm_rate(k, shoes, decks) >= target:
        k += 1
    return k


@dataclass(slots=True)
class _Dealing:
    """A shoe whose cards are still coming: its key and its candidate alignments."""

    key: int = 0
    readable: int = 0
    """Readable cards in a row at the end: a key needs a key's length of them."""
    candidates: dict[tuple[int, int], int] = field(default_factory=dict)
    """(earlier slot, offset of its positions from ours) -> our position that last matched."""
    named: set[int] = field(default_factory=set)
    """Earlier slots already reported: one repeat per earlier shoe."""


class ShuffleIndex:
    """The last ``capacity`` shoes' cards, and the shoes being dealt checked against them.

    Each shoe takes a slot (:meth:`open_shoe`); the oldest is reused when all are taken.
    :meth:`add` takes the shoe's next card and returns a :class:`Repeat` at the card that
    completes a run of :data:`RUN` against another shoe held (once per other shoe).
    Entries of one key are a doubly linked chain, newest first, so that a shoe forgotten
    leaves the index in as many steps as it has cards.
    """

    def __init__(
        self, capacity: int, *, run: int = RUN, max_cards: int = MAX_CARDS, gram: int = GRAM
    ) -> None:
        if capacity < 1 or not 1 <= gram <= (run + 1) // 2 or max_cards < run:
            raise ValueError(
                f"an index of {capacity} shoes, runs of {run} cards, keys of {gram}"
                f" and {max_cards} cards a shoe: keys must be at most half a run"
            )
        self.capacity, self.run, self.max_cards, self.gram = capacity, run, max_cards, gram
        self._key_mask = (1 << (8 * gram)) - 1
        self._live_for = gram + 2
        """Cards a candidate alignment stays checked after its key last matched: enough
        for the gap and a stretch shorter than a key after it."""
        entries = capacity * max_cards
        self._bits = max(4, math.ceil(math.log2(capacity * min(max_cards, 416))))
        self._heads = array("i", [-1]) * (1 << self._bits)
        self._older = array("i", [-1]) * entries
        self._newer = array("i", [-1]) * entries
        self._cards = bytearray([NONE]) * entries
        self._lengths = [0] * capacity
        self._shoes: list[Hashable | None] = [None] * capacity
        self._dealing: dict[int, _Dealing] = {}
        self._next_slot = 0

    # ------------------------------------------------------------------ shoes

    def open_shoe(self, shoe: Hashable) -> int:
        """A new shoe; its slot. The oldest shoe held is forgotten if every slot is taken."""
        slot = self._next_slot
        self._next_slot = (slot + 1) % self.capacity
        self.forget(slot)
        self._shoes[slot] = shoe
        self._dealing[slot] = _Dealing()
        return slot

    def close_shoe(self, slot: int) -> None:
        """No more cards come for this shoe; later shoes are still checked against it."""
        self._dealing.pop(slot, None)

    def forget(self, slot: int) -> None:
        """No shoe is checked against this one any more (it is older than a day, say)."""
        self.close_shoe(slot)
        base = slot * self.max_cards
        for entry in range(base + self.gram - 1, base + self._lengths[slot]):
            if self._older[entry] >= 0 or self._newer[entry] >= 0 or self._is_head(entry):
                self._unlink(entry)
        self._cards[base : base + self.max_cards] = bytes([NONE]) * self.max_cards
        self._lengths[slot] = 0
        self._shoes[slot] = None
        for dealing in self._dealing.values():  # no alignment with it any more
            dealing.named.discard(slot)
            for candidate in [c for c in dealing.candidates if c[0] == slot]:
                del dealing.candidates[candidate]

    def shoe(self, slot: int) -> Hashable | None:
        """What :meth:`open_shoe` was given for the shoe in ``slot`` (``None``: forgotten)."""
        return self._shoes[slot]

    def cards_held(self) -> int:
        """Cards of every shoe held."""
        return sum(self._lengths)

    def nbytes(self) -> int:
        """The memory of the index's arrays."""
        arrays = (self._heads, self._older, self._newer)
        return sum(a.itemsize * len(a) for a in arrays) + len(self._cards)

    # ------------------------------------------------------------------ cards

    def add(self, slot: int, code: int | None) -> Repeat | None:
        """The shoe's next card (0..51, ``None``: unreadable); a repeat it completes, if any."""
        dealing = self._dealing.get(slot)
        position = self._lengths[slot]
        if dealing is None or position >= self.max_cards:
            return None
        symbol = NONE if code is None or not 0 <= code < SUITED_CODES else code
        entry = slot * self.max_cards + position
        self._cards[entry] = symbol
        self._lengths[slot] = position + 1
        if symbol == NONE:
            dealing.readable = 0
        else:
            dealing.readable += 1
            dealing.key = ((dealing.key << 8) | symbol) & self._key_mask
        if dealing.readable >= self.gram:
            self._seed(slot, dealing, position, entry)
        return self._check(slot, dealing, position)

    def _bucket(self, key: int) -> int:
        return ((key * _HASH) & 0xFFFFFFFFFFFFFFFF) >> (64 - self._bits)

    def _key_at(self, entry: int) -> int:
        return int.from_bytes(self._cards[entry - self.gram + 1 : entry + 1], "big")

    def _is_head(self, entry: int) -> bool:
        return self._heads[self._bucket(self._key_at(entry))] == entry

    def _unlink(self, entry: int) -> None:
        older, newer = self._older[entry], self._newer[entry]
        if newer >= 0:
            self._older[newer] = older
        else:
            self._heads[self._bucket(self._key_at(entry))] = older
        if older >= 0:
            self._newer[older] = newer
        self._older[entry] = self._newer[entry] = -1

    def _seed(self, slot: int, dealing: _Dealing, position: int, entry: int) -> None:
        """Look up the key the last :attr:`gram` cards make, then add this card's entry."""
        key, bucket = dealing.key, self._bucket(dealing.key)
        cards_per, older = self.max_cards, self._older
        other = self._heads[bucket]
        while other >= 0:
            if self._key_at(other) == key:
                other_slot = other // cards_per
                if other_slot != slot:
                    offset = other - other_slot * cards_per - position
                    dealing.candidates[(other_slot, offset)] = position
            other = older[other]
        head = self._heads[bucket]
        older[entry] = head
        if head >= 0:
            self._newer[head] = entry
        self._heads[bucket] = entry

    def _check(self, slot: int, dealing: _Dealing, position: int) -> Repeat | None:
        """Check the live candidate alignments at this card; drop those gone cold."""
        tried: set[tuple[int, int]] = set()
        for (other_slot, offset), seen in list(dealing.candidates.items()):
            if position - seen > self._live_for or other_slot in dealing.named:
                del dealing.candidates[(other_slot, offset)]
                continue
            for shift in (offset, offset - 1, offset + 1):
                where = (other_slot, position + shift)
                if where in tried:
                    continue
                tried.add(where)
                found = self._repeat(slot, position, *where)
                if found is not None:
                    dealing.named.add(other_slot)
                    return found
        return None

    def _repeat(self, slot: int, position: int, other_slot: int, other: int) -> Repeat | None:
        """A run of :attr:`run` cards ending with ours at ``position`` and theirs at ``other``."""
        if not 0 <= other < self._lengths[other_slot]:
            return None
        ours, theirs = slot * self.max_cards, other_slot * self.max_cards
        need = self.run
        same = self._same(ours, position, theirs, other, need)
        if same == 0:
            return None
        gap: Gap | None = None
        before = 0
        if same < need:
            mine, yours = position - same, other - same  # the first pair that differs
            left = need - same
            options = [
                (self._same(ours, mine - 1, theirs, yours, left), Gap("extra", mine + 1)),
                (self._same(ours, mine, theirs, yours - 1, left), Gap("missing", yours + 1)),
                (self._same(ours, mine - 1, theirs, yours - 1, left), Gap("different", mine + 1)),
            ]
            before, gap = max(options, key=lambda option: option[0])  # the first of the best
            if before + same < need:
                return None
        ours_span = same + before + (1 if gap is not None and gap.kind != "missing" else 0)
        theirs_span = same + before + (1 if gap is not None and gap.kind != "extra" else 0)
        return Repeat(
            earlier=self._shoes[other_slot],
            earlier_first=other - theirs_span + 2,
            earlier_last=other + 1,
            first=position - ours_span + 2,
            last=position + 1,
            cards=same + before,
            gap=gap,
        )

    def _same(self, ours: int, mine: int, theirs: int, yours: int, limit: int) -> int:
        """Cards alike going back from our ``mine`` and their ``yours``, at most ``limit``."""
        cards = self._cards
        n = 0
        while n < limit and mine - n >= 0 and yours - n >= 0:
            symbol = cards[ours + mine - n]
            if symbol == NONE or symbol != cards[theirs + yours - n]:
                break
            n += 1
        return n
