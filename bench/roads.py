"""Time Roads.add + Roads.message over full 80-round shoes.

Run from the repository: ``.venv/bin/python bench/roads.py [--shoes N]``. Prints the mean
and worst microseconds per add+message and the time of a whole shoe (80 results, one
message after each, as the engine publishes).
"""

from __future__ import annotations

import argparse
import random
import time

from baccarat.controller.engine.roads import Roads
from baccarat.rules.tableau import Winner

ROUNDS_PER_SHOE = 80
WINNERS: tuple[Winner, ...] = ("banker", "player", "tie")
WEIGHTS = (0.4586, 0.4462, 0.0952)


def random_shoe(rng: random.Random) -> list[tuple[Winner, bool, bool, bool]]:
    """80 results drawn with the 8-deck probabilities (pairs ~7.5%, naturals ~34%)."""
    return [
        (
            rng.choices(WINNERS, WEIGHTS)[0],
            rng.random() < 0.075,
            rng.random() < 0.075,
            rng.random() < 0.34,
        )
        for _ in range(ROUNDS_PER_SHOE)
    ]


def time_shoe(shoe: list[tuple[Winner, bool, bool, bool]]) -> list[float]:
    """Seconds for each add+message of one shoe."""
    roads = Roads()
    laps: list[float] = []
    for number, (winner, player_pair, banker_pair, natural) in enumerate(shoe, start=1):
        start = time.perf_counter()
        roads.add(number, winner, player_pair, banker_pair, natural)
        roads.message(seq=number, shoe=1, cards_left=416 - 5 * number)
        laps.append(time.perf_counter() - start)
    return laps


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    shoes = [random_shoe(rng) for _ in range(args.shoes)]
    time_shoe(shoes[0])  # warm up imports and caches
    laps = [time_shoe(shoe) for shoe in shoes]
    flat = [lap for shoe in laps for lap in shoe]
    per_shoe = sorted(sum(shoe) for shoe in laps)
    print(f"shoes: {args.shoes} x {ROUNDS_PER_SHOE} results")
    print(
        f"add+message: mean {1e6 * sum(flat) / len(flat):.1f} us, "
        f"p99 {1e6 * sorted(flat)[int(0.99 * len(flat))]:.1f} us, max {1e6 * max(flat):.1f} us"
    )
    print(f"full shoe (80 add+message): median {1e3 * per_shoe[len(per_shoe) // 2]:.2f} ms")
    roads = Roads()
    for number, (winner, pp, bp, nat) in enumerate(shoes[0], start=1):
        roads.add(number, winner, pp, bp, nat)
    message = roads.message(seq=80, shoe=1, cards_left=16)
    body = message.to_json()  # the first call builds the serialiser (deferred at import)
    start = time.perf_counter()
    for _ in range(20):
        body = message.to_json()
    elapsed = (time.perf_counter() - start) / 20
    print(f"to_json of a full shoe: {1e6 * elapsed:.0f} us, {len(body)} bytes")


if __name__ == "__main__":
    main()
