"""Time the shuffle check per card on a floor's day (baccarat.rules.shuffle_match).

Run from the repository: ``.venv/bin/python bench/shuffle.py [--tables N] [--shoes S]``.
N tables deal S seeded 8-deck shoes each, all tables at once, card by card, into one
:class:`ShuffleIndex` that holds every shoe of the day (what the floor recorder does);
the last shoe of the first table repeats 20 cards of an earlier table's shoe, which must
be found. Prints the time of one card (mean, and p50/p99/max over the last round of
shoes, where the index is fullest), the index's memory and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import random
import resource
import time

from baccarat.rules.shuffle_match import RUN, ShuffleIndex, false_alarm_rate


def percentile(sorted_laps: list[int], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted laps, nearest rank."""
    return sorted_laps[min(len(sorted_laps) - 1, round(q * (len(sorted_laps) - 1)))]


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--shoes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    deck = [code for code in range(52) for _ in range(8)]
    start = time.perf_counter()
    index = ShuffleIndex(args.tables * args.shoes)
    print(f"index of {args.tables * args.shoes} shoes: {index.nbytes() / 2**20:.0f} MiB of"
          f" arrays, built in {time.perf_counter() - start:.2f} s")
    cards, found, laps = 0, [], []
    slug: list[int] = []
    clock = time.perf_counter_ns
    total_ns = 0
    for round_no in range(args.shoes):
        shoes = []
        for table in range(args.tables):
            shoe = deck[:]
            rng.shuffle(shoe)
            if round_no == args.shoes - 1 and table == 0:
                shoe[39:59] = slug  # a slug of table 1's shoe 1, cards 120-139
            shoes.append((index.open_shoe((f"T{table}", round_no + 1)), shoe))
            if round_no == 0 and table == 1:
                slug = shoe[119:139]
        last = round_no == args.shoes - 1
        for position in range(len(deck)):
            for slot, shoe in shoes:
                before = clock()
                repeat = index.add(slot, shoe[position])
                lap = clock() - before
                total_ns += lap
                if last:
                    laps.append(lap)
                if repeat is not None:
                    found.append((index.shoe(slot), position + 1, repeat))
        for slot, _ in shoes:
            index.close_shoe(slot)
        cards += len(deck) * args.tables
    laps.sort()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.tables} tables x {args.shoes} shoes = {cards:,} cards, run {RUN}: one card"
          f" mean {total_ns / cards / 1e3:.1f} us; in the last round (index full):"
          f" p50 {percentile(laps, 0.5) / 1e3:.1f} us, p99 {percentile(laps, 0.99) / 1e3:.1f}"
          f" us, max {laps[-1] / 1e3:.0f} us")
    print(f"memory: index arrays {index.nbytes() / 2**20:.0f} MiB, peak RSS {peak:.0f} MiB")
    print(f"found: {found}")
    shoes_held = args.tables * args.shoes
    print(f"model: a false alarm at most {false_alarm_rate(RUN, shoes_held):.1e} a shoe"
          f" against {shoes_held} shoes")


if __name__ == "__main__":
    main()
