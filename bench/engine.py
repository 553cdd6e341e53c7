"""Cards per second through the engine, messages included.

Replays seeded 8-deck shoes (macau profile, implicit opening: the engine deals every card
by the tableau itself) and prints the rate for four ways of running it: message objects
only, and serialised to JSON as the daemon publishes them, each with and without the roads
messages. Inputs are built before the clock starts.

    python bench/engine.py [--shoes 1000] [--decks 8]
"""

from __future__ import annotations

import argparse
import time

from baccarat.controller.engine import Engine
from baccarat.controller.inputs import DrawCard, Input
from baccarat.controller.profiles import load_profile
from baccarat.sim_hardware.shoe_inputs import shoe_inputs


def run(shoes: list[list[Input]], *, roads: bool, serialise: bool) -> tuple[int, int, float]:
    """Feed every shoe to a fresh engine; return cards, messages and seconds."""
    profile = load_profile("macau")
    cards = messages = 0
    start = time.perf_counter()
    for inputs in shoes:
        engine = Engine(profile, roads=roads)
        for inp in inputs:
            out = engine.feed(inp).messages
            messages += len(out)
            if serialise:
                for message in out:
                    message.to_json()
            if type(inp) is DrawCard:
                cards += 1
            if engine.shoe is not None and engine.shoe.phase == "closed":
                break
    return cards, messages, time.perf_counter() - start


def main() -> None:
    """Print the rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1000)
    parser.add_argument("--decks", type=int, default=8)
    args = parser.parse_args()
    shoes = [list(shoe_inputs(args.decks, seed)) for seed in range(args.shoes)]
    print(f"{args.shoes} seeded {args.decks}-deck shoes, macau profile")
    for roads in (False, True):
        for serialise in (False, True):
            cards, messages, seconds = run(shoes, roads=roads, serialise=serialise)
            label = ("with roads" if roads else "no roads") + (
                ", JSON" if serialise else ", objects"
            )
            print(
                f"  {label:<22} {cards / seconds:>10,.0f} cards/s  "
                f"({cards:,} cards, {messages:,} messages, {seconds:.2f} s)"
            )


if __name__ == "__main__":
    main()
