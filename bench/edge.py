"""Time one update of the live edge (baccarat.rules.edge.live_odds) on depleted shoes.

Run from the repository: ``.venv/bin/python bench/edge.py [--shoes N] [--decks D]
[--profile ez]`` (every update counts Dragon 7 and Panda 8 too, whatever the profile). Each
shoe is a seeded shuffled shoe dealt down to a random depth (6 cards to full); prints the
one-time cost of the shoe-free table, then p50, p99 and max milliseconds of one update,
and, with ``--enumeration K``, the plain enumeration's time on the first K shoes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from baccarat.cards import shuffled_shoe
from baccarat.rules.edge import cards_left, live_odds
from baccarat.rules.edge_enumeration import enumerate_live_odds
from baccarat.rules.profiles import Profile, load_profile


def depleted_shoes(profile: Profile, shoes: int, seed: int) -> list[tuple[int, ...]]:
    """Counts by rank of ``shoes`` seeded shoes, each dealt down to 6..full cards."""
    rng = random.Random(seed)
    full = 52 * profile.decks
    out = []
    for _ in range(shoes):
        shoe = shuffled_shoe(profile.decks, rng.randrange(2**32))
        out.append(cards_left(profile, shoe[: full - rng.randint(6, full)]))
    return out


def percentile(sorted_laps: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted laps, nearest rank."""
    return sorted_laps[min(len(sorted_laps) - 1, round(q * (len(sorted_laps) - 1)))]


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=200)
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--enumeration", type=int, default=0, metavar="K")
    parser.add_argument("--profile", default="macau")
    args = parser.parse_args()
    profile = load_profile(args.profile, decks=args.decks)
    shoes = depleted_shoes(profile, args.shoes, args.seed)
    start = time.perf_counter()
    live_odds(profile, shoes[0])  # builds the shoe-free table once
    print(f"first update (builds the six-card table): {(time.perf_counter() - start) * 1e3:.0f} ms")
    laps = []
    for left in shoes:
        start = time.perf_counter()
        live_odds(profile, left)
        laps.append(time.perf_counter() - start)
    laps.sort()
    print(
        f"{args.shoes} depleted {args.decks}-deck shoes, one update: "
        f"p50 {percentile(laps, 0.5) * 1e3:.2f} ms, p99 {percentile(laps, 0.99) * 1e3:.2f} ms, "
        f"max {laps[-1] * 1e3:.2f} ms, mean {statistics.fmean(laps) * 1e3:.2f} ms"
    )
    if args.enumeration:
        slow = []
        for left in shoes[: args.enumeration]:
            start = time.perf_counter()
            enumerate_live_odds(profile, left)
            slow.append(time.perf_counter() - start)
        slow.sort()
        print(
            f"plain enumeration, first {len(slow)} shoes: p50 {percentile(slow, 0.5) * 1e3:.0f} ms,"
            f" max {slow[-1] * 1e3:.0f} ms"
        )


if __name__ == "__main__":
    main()
