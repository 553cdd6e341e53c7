"""Cards per second through the engine, messages included.

Replays seeded 8-deck shoes (macau profile, implicit opening: the engine deals every card
by the tableau itself) and prints the rate for four ways of running it: message objects
only, and serialised to JSON as the daemon publishes them, each with and without the roads
messages. Inputs are built before the clock starts and cut at the input that closes each
shoe (found by an untimed pass): the cards after it would only be refused.

    python bench/engine.py [--shoes 1000] [--decks 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import timeit

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import DrawCard, Input
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.rules.profiles import Profile, load_profile


def played(inputs: list[Input], profile: Profile) -> list[Input]:
    """The inputs up to the one that closes the shoe (the cards after it are never dealt)."""
    engine = Engine(profile, roads=False)
    for n, inp in enumerate(inputs, 1):
        engine.feed(inp)
        if engine.shoe is not None and engine.shoe.phase == "closed":
            return inputs[:n]
    return inputs


def run(shoes: list[list[Input]], *, roads: bool, serialise: bool) -> tuple[int, int, float]:
    """Feed every shoe to a fresh engine; return cards, messages and seconds."""
    profile = load_profile("macau")
    cards = sum(type(inp) is DrawCard for inputs in shoes for inp in inputs)
    messages = 0
    start = time.perf_counter()
    for inputs in shoes:
        feed = Engine(profile, roads=roads).feed
        for inp in inputs:
            out = feed(inp).messages
            messages += len(out)
            if serialise:
                for message in out:
                    message.to_bytes()
    return cards, messages, time.perf_counter() - start


def main() -> None:
    """Print the rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1000)
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the fastest counts")
    args = parser.parse_args()
    profile = load_profile("macau")
    shoes = [played(list(shoe_inputs(args.decks, seed)), profile) for seed in range(args.shoes)]
    print(f"{args.shoes} seeded {args.decks}-deck shoes, macau profile")
    calibration = min(timeit.repeat("sum(range(100))", number=100_000, repeat=5)) / 100_000
    print(
        f"  (this machine, now: sum(range(100)) takes {calibration * 1e6:.2f} us; "
        "the figures scale with it)"
    )
    for roads in (False, True):
        for serialise in (False, True):
            runs = [run(shoes, roads=roads, serialise=serialise) for _ in range(args.repeat)]
            cards, messages, seconds = min(runs, key=lambda r: r[2])
            label = ("with roads" if roads else "no roads") + (
                ", JSON" if serialise else ", objects"
            )
            print(
                f"  {label:<22} {cards / seconds:>10,.0f} cards/s  "
                f"({cards:,} cards, {messages:,} messages, {seconds:.2f} s)"
            )
    print(f"  (each the fastest of {args.repeat} runs, as timeit reports)")


if __name__ == "__main__":
    main()
