"""The shuffle matcher: the chance model, the matcher against its definition, honest shoes."""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction
from itertools import product

import pytest

from baccarat.rules.shuffle_match import (
    FLOOR_SHOES,
    RUN,
    TARGET_RATE,
    Gap,
    Repeat,
    ShuffleIndex,
    false_alarm_rate,
    run_for,
    window_chance,
    windows,
)


def honest(decks: int, seed: int) -> list[int]:
    """A shoe shuffled by random.shuffle: codes 0..51, each ``decks`` times."""
    cards = [code for code in range(52) for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def deal(index: ShuffleIndex, name: object, cards: list[int | None]) -> list[tuple[int, Repeat]]:
    """Every repeat raised while the shoe's cards come out, with the card (1-based)."""
    slot = index.open_shoe(name)
    found = [(n, r) for n, c in enumerate(cards, 1) if (r := index.add(slot, c)) is not None]
    index.close_shoe(slot)
    return found


# ---------------------------------------------------------------- the chance model


def brute_chance(decks: int, k: int) -> Fraction:
    """Sum over every sequence of k codes of P(x)^2, by enumeration (small shoes only)."""
    total, cards = Fraction(0), 52 * decks
    for x in product(range(52), repeat=k):
        p = Fraction(1)
        for t, code in enumerate(x):
            p *= Fraction(decks - x[:t].count(code), cards - t)
        total += p * p
    return total


@pytest.mark.parametrize(("decks", "k"), [(1, 2), (2, 2), (8, 2), (2, 3)])
def test_window_chance_is_the_sum_over_sequences(decks: int, k: int) -> None:
    assert window_chance(decks, decks, k) == brute_chance(decks, k)


def test_a_window_is_a_little_likelier_than_52_to_the_k() -> None:
    for k in (2, 5, 10):
        ratio = window_chance(8, 8, k) * 52**k
        assert 1 < ratio < 1.02  # the first cards of a window leave the others likelier


def test_the_run_is_the_shortest_that_meets_the_target_on_a_floors_day() -> None:
    assert run_for(TARGET_RATE, FLOOR_SHOES, 8) == RUN == 10
    assert false_alarm_rate(RUN, FLOOR_SHOES) < TARGET_RATE
    assert false_alarm_rate(RUN - 1, FLOOR_SHOES) > TARGET_RATE
    # the stated figures (docs/surveillance.md, "Shuffle integrity")
    assert f"{false_alarm_rate(RUN, FLOOR_SHOES):.1e}" == "6.5e-07"
    assert false_alarm_rate(RUN, 24) < 1e-9  # a table against its own last 24 shoes
    assert false_alarm_rate(RUN, FLOOR_SHOES, decks=6) < TARGET_RATE


def exact_windows(a: list[int], b: list[int], k: int) -> int:
    """Pairs of k consecutive cards of a and of b that are alike, in order."""
    grams = Counter(tuple(a[i : i + k]) for i in range(len(a) - k + 1))
    return sum(grams[tuple(b[j : j + k])] for j in range(len(b) - k + 1))


def gapped_windows(a: list[int], b: list[int], k: int) -> int:
    """The same with one gap.

    k cards of one against k + 1 of the other, one skipped; or k + 1 against k + 1 with
    the same place skipped in both.
    """
    total = 0
    for first, second in ((a, b), (b, a)):
        grams = Counter(tuple(first[i : i + k]) for i in range(len(first) - k + 1))
        for j in range(len(second) - k):
            span = second[j : j + k + 1]
            total += sum(grams[tuple(span[:g] + span[g + 1 :])] for g in range(1, k))
    for g in range(1, k):  # one card of each differs: both spans of k + 1, place g skipped
        skipped = Counter(tuple(a[i : i + g] + a[i + g + 1 : i + k + 1])
                          for i in range(len(a) - k))
        total += sum(skipped[tuple(b[j : j + g] + b[j + g + 1 : j + k + 1])]
                     for j in range(len(b) - k))
    return total


def test_the_model_counts_what_honest_shoes_show() -> None:
    """Short runs, often enough to count, in 400 honest pairs of shoes.

    The expected number of matching windows is exactly windows x window_chance (by
    linearity), and honest shoes show it: 25,400 pairs of 2 against 25,485; 479 of 3
    against 488; 2,878 of 3 with a gap against 2,919.
    """
    pairs = 400
    shoes = [honest(8, seed) for seed in range(pairs + 1)]
    for k in (2, 3):
        seen_exact = sum(exact_windows(shoes[i], shoes[i + 1], k) for i in range(pairs))
        expected_exact = pairs * windows(416, k, gaps=False) * window_chance(8, 8, k)
        assert abs(seen_exact / float(expected_exact) - 1) < (0.03 if k == 2 else 0.12)
    k = 3
    seen = sum(gapped_windows(shoes[i], shoes[i + 1], k) for i in range(pairs))
    expected = pairs * (windows(416, k) - windows(416, k, gaps=False)) * window_chance(8, 8, k)
    assert abs(seen / float(expected) - 1) < 0.12


def test_runs_of_four_come_as_often_as_the_model_says() -> None:
    """The matcher itself at a shorter run (4, keys of 2) on 600 honest pairs of shoes.

    The model: a pair holds ``lam = windows x window_chance`` matching windows on average
    (0.233 for runs of 4), so it alarms with chance about ``1 - exp(-lam)``: 125 of 600;
    117 are seen (with these seeds).
    """
    index = ShuffleIndex(2, run=4, gram=2)
    deal(index, 0, honest(8, 10_000))
    pairs = 600
    alarms = sum(len(deal(index, seed, honest(8, seed))) for seed in range(10_001, 10_001 + pairs))
    lam = windows(416, 4) * float(window_chance(8, 8, 4))
    expected = pairs * (1 - math.exp(-lam))
    assert abs(alarms / expected - 1) < 0.25, (alarms, expected)
    assert alarms <= pairs * lam  # never more than the union bound


# ---------------------------------------------------------------- the matcher


def best_run(cur: list[int | None], old: list[int], i: int, j: int) -> int:
    """The longest run with at most one gap ending with cur[i] against old[j], exhaustively."""

    def same(a: int, b: int) -> int:
        n = 0
        while a - n >= 0 and b - n >= 0 and cur[a - n] is not None and cur[a - n] == old[b - n]:
            n += 1
        return n

    first = same(i, j)
    best = first
    for tail in range(1, first + 1):  # a gap after `tail` cards alike, counted from the end
        best = max(
            best,
            tail + same(i - tail - 1, j - tail),  # our card before them is extra
            tail + same(i - tail, j - tail - 1),  # their card before them is missing here
            tail + same(i - tail - 1, j - tail - 1),  # one card of each differs
        )
    return best


def first_alarm(cur: list[int | None], old: list[int], run: int) -> int | None:
    """The first card (1-based) that ends a run of ``run`` against ``old``."""
    for i in range(len(cur)):
        if any(best_run(cur, old, i, j) >= run for j in range(len(old))):
            return i + 1
    return None


def planted(rng: random.Random, old: list[int]) -> list[int | None]:
    """A 1-deck shoe with a stretch of ``old`` in it, perhaps with a gap, or none."""
    cur: list[int | None] = list(old)
    rng.shuffle(cur)
    length = rng.randint(2, 9)
    start, at = rng.randrange(0, 52 - length), rng.randrange(0, 52 - length - 1)
    stretch: list[int | None] = list(old[start : start + length])
    what = rng.choice(["exact", "extra", "missing", "none", "unreadable", "swapped"])
    if what == "extra":
        stretch.insert(rng.randint(1, length - 1), rng.randrange(52))
    elif what == "missing" and length > 2:
        del stretch[rng.randint(1, length - 2)]
    elif what == "unreadable":
        stretch[rng.randrange(length)] = None
    elif what == "swapped":
        stretch[rng.randrange(length)] = rng.randrange(52)
    if what != "none":
        cur[at : at + len(stretch)] = stretch
    return cur


def test_the_matcher_raises_at_the_first_card_that_ends_a_run() -> None:
    """Against the definition by brute force: 1-deck shoes, runs of 4, keys of 2."""
    rng = random.Random(7)
    raised = 0
    for trial in range(600):
        old = honest(1, trial)
        cur = planted(rng, old)
        index = ShuffleIndex(2, run=4, gram=2, max_cards=52)
        deal(index, "old", list(old))
        found = deal(index, "cur", cur)
        expected = first_alarm(cur, old, 4)
        assert (found[0][0] if found else None) == expected, (trial, cur, old, found)
        if found:
            raised += 1
            card, repeat = found[0]
            assert repeat.last == card
            assert repeat.cards >= 4
            span = old[repeat.earlier_first - 1 : repeat.earlier_last]
            mine = cur[repeat.first - 1 : repeat.last]
            if repeat.gap is None:
                assert mine == span
            elif repeat.gap.kind == "extra":
                del mine[repeat.gap.position - repeat.first]
                assert mine == span
            elif repeat.gap.kind == "different":
                at = repeat.gap.position - repeat.first
                assert mine[at] != span[at]
                assert mine[:at] + mine[at + 1 :] == span[:at] + span[at + 1 :]
            else:
                del span[repeat.gap.position - repeat.earlier_first]
                assert mine == span
    assert raised > 300  # the planted runs are found, not only the absent ones


def test_cards_40_to_59_repeating_120_to_139_are_found_at_card_49() -> None:
    before, after = honest(8, 1), honest(8, 2)
    after[39:59] = before[119:139]
    index = ShuffleIndex(24)
    assert deal(index, ("T1", 1), list(before)) == []
    found = deal(index, ("T1", 2), list(after))
    assert found == [(49, Repeat(("T1", 1), 120, 129, 40, 49, 10, None))]


@pytest.mark.parametrize(
    ("change", "card", "gap"),
    [
        ("extra", 50, Gap("extra", 44)),  # a card slipped in at 44: 10 alike by card 50
        ("missing", 49, Gap("missing", 124)),  # card 124 of the earlier shoe left out
        ("different", 50, Gap("different", 45)),  # card 45 unreadable or another card
    ],
)
def test_a_repeat_with_one_gap_is_found(change: str, card: int, gap: Gap) -> None:
    before, after = honest(8, 3), honest(8, 4)
    stretch = before[119:139]
    if change == "extra":
        stretch.insert(4, (before[123] + 1) % 52)
    elif change == "missing":
        del stretch[4]
    else:
        stretch[5] = (stretch[5] + 1) % 52
    after[39 : 39 + len(stretch)] = stretch
    index = ShuffleIndex(24)
    deal(index, "before", list(before))
    found = deal(index, "after", list(after))
    assert [(n, r.gap, r.first, r.earlier_first, r.cards) for n, r in found] == [
        (card, gap, 40, 120, 10)
    ]


def test_two_gaps_are_not_a_repeat() -> None:
    before, after = honest(8, 5), honest(8, 6)
    stretch = before[119:131]  # 12 cards, two of them changed
    stretch[4] = stretch[8] = 60  # no such code: unreadable-like, matches nothing
    after[39:51] = [c if c < 52 else None for c in stretch]
    index = ShuffleIndex(4)
    deal(index, "before", list(before))
    assert deal(index, "after", list(after)) == []


def test_thousands_of_honest_shoes_raise_nothing() -> None:
    """2,000 shoes (100 tables x 20), each against every one before it on the floor.

    The model's rate for that many: 2,000 x 1,000 pairs x 3.7e-11 a pair, about 7e-5.
    """
    index = ShuffleIndex(2000)
    raised = []
    for seed in range(2000):
        raised += deal(index, seed, list(honest(8, 50_000 + seed)))
    assert raised == []
    assert index.cards_held() == 2000 * 416


def test_the_oldest_shoe_is_forgotten_when_the_slots_are_full() -> None:
    shoes = [honest(8, 100 + n) for n in range(4)]
    index = ShuffleIndex(3)
    for n, shoe in enumerate(shoes[:3]):
        deal(index, n, list(shoe))
    slot = index.open_shoe(3)  # takes shoe 0's slot
    assert index.shoe(slot) == 3
    copy = shoes[0][:20] + shoes[1][:20]
    found = [r for c in copy if (r := index.add(slot, c)) is not None]
    assert [r.earlier for r in found] == [1]  # shoe 0 is gone; shoe 1 is still held


def test_a_forgotten_shoe_matches_nothing_and_others_still_do() -> None:
    a, b, c = honest(8, 200), honest(8, 201), honest(8, 202)
    index = ShuffleIndex(8)
    deal(index, "a", list(a))
    slot_b = index.open_shoe("b")
    for card in b:
        index.add(slot_b, card)
    index.forget(slot_b)
    found = deal(index, "c", a[100:120] + b[100:120] + c)
    assert [r.earlier for _, r in found] == ["a"]


def test_shoes_dealt_at_once_are_checked_against_each_other() -> None:
    """Two tables dealing the same stacked order at the same time (the floor's case)."""
    stacked = honest(8, 300)
    index = ShuffleIndex(8)
    one, two = index.open_shoe("T1"), index.open_shoe("T2")
    found = []
    for card in stacked[:30]:
        assert index.add(one, card) is None
        if (r := index.add(two, card)) is not None:
            found.append(r)
    assert [(r.earlier, r.first, r.last) for r in found] == [("T1", 1, 10)]


def test_bad_codes_are_unreadable_and_a_bad_index_is_refused() -> None:
    index = ShuffleIndex(2)
    slot = index.open_shoe("x")
    for code in (-1, 52, 255, None):
        assert index.add(slot, code) is None
    with pytest.raises(ValueError, match="keys must be at most half a run"):
        ShuffleIndex(2, run=8, gram=5)
    with pytest.raises(ValueError):
        ShuffleIndex(0)
