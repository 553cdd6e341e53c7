"""The largest body each topic carries, made by the engine from seeded shoes, and its limit.

Replays seeded shoes (macau profile) of 8 and 12 decks and prints, per message type, the
largest body and the limit the catalogue sets (``max_bytes``, docs/limits.md); for the
roads, which grow with the rounds, also the bytes per round and the size at the most rounds
a page can hold. And the mean body, which the brokers' ``max_queued_bytes`` is made of.

    python bench/body_sizes.py [--shoes 50]
"""

from __future__ import annotations

import argparse

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.messages import catalog
from baccarat.rules.profiles import MAX_ROADS_ROUNDS, load_profile


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=50)
    args = parser.parse_args()
    limits = {cls.__dataclass_fields__["type"].default: cls.max_bytes
              for cls in catalog.MESSAGE_TYPES}
    for decks in (8, 12):
        largest: dict[str, int] = {}
        roads_per_round = 0.0
        count = total = 0
        for seed in range(args.shoes):
            engine = Engine(load_profile("macau"))
            results = 0
            for inp in shoe_inputs(decks, seed):
                for message in engine.feed(inp).messages:
                    size = len(message.to_bytes())
                    count += 1
                    total += size
                    results += message.type == "result"
                    largest[message.type] = max(largest.get(message.type, 0), size)
                    if message.type == "roads" and results >= 40:  # past the fixed part
                        roads_per_round = max(roads_per_round, size / results)
        print(f"{args.shoes} seeded {decks}-deck shoes: mean body {total / count:,.0f} bytes")
        for name, size in sorted(largest.items()):
            print(f"  {name:8} largest {size:8,} bytes   limit {limits[name]:8,}"
                  f"   ({limits[name] / size:.1f}x)")
        print(f"  roads: at most {roads_per_round:,.0f} bytes a round; {MAX_ROADS_ROUNDS} rounds"
              f" (a page's most): {roads_per_round * MAX_ROADS_ROUNDS:,.0f} bytes")
    print(f"brokers: max_packet_size {catalog.BROKER_MAX_PACKET:,}")


if __name__ == "__main__":
    main()
