"""How often a card's path leaves the engine and comes back: calls counted, not timed.

Follows, with ``sys.setprofile``, every Python call made while the engine takes one card
and its messages are written as JSON (``Engine.feed`` then ``to_json``), for three cards
of a seeded macau shoe: a plain card, the card that completes a round (its result, roads,
recall and shoe messages), and a card held aside (a foreign card). It counts the calls
from the engine's code to code outside it (*leaves*), and within it, for two bounds of
"the engine": its class (the rooms and the core: ``engine``, ``core``, ``dealing``,
``rounds``, ``corrections``, ``shoe_room``) and its whole package
(``controller/engine/``, with the state, alarm texts and roads).

    python bench/card_path.py [--ref-src DIR]   # DIR: another tree's src/, to compare

The daemon's part of the path (device, journal, outbox) is not traced here.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

CLASS_MODULES = frozenset(
    {"engine.py", "core.py", "dealing.py", "rounds.py", "corrections.py", "shoe_room.py"}
)


def inside(code: CodeType, *, package: bool) -> bool:
    """Whether the code is the engine's (its class, or its whole package)."""
    path = code.co_filename.replace(os.sep, "/")
    if "/controller/engine/" not in path:
        return False
    return package or path.rsplit("/", 1)[1] in CLASS_MODULES


def traced(action: Callable[[], Any], *, package: bool) -> tuple[int, int, int]:
    """(leaves, calls inside, entries from outside) while ``action`` runs."""
    counts = [0, 0, 0]

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or frame.f_back is None:
            return
        if inside(frame.f_back.f_code, package=package):
            counts[0 if not inside(frame.f_code, package=package) else 1] += 1
        elif inside(frame.f_code, package=package):
            counts[2] += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return counts[0], counts[1], counts[2]


def measure() -> None:
    from baccarat.controller.engine.engine import Engine
    from baccarat.controller.engine.inputs import DrawCard, Input, NewShoe
    from baccarat.controller.engine.shoe_inputs import shoe_inputs
    from baccarat.rules.profiles import load_profile

    shoe = [NewShoe(decks=1), *list(shoe_inputs(1, 7))[1:]]  # one deck: a repeat is foreign

    def index_of(wanted: Callable[[list[str]], bool]) -> int:
        """The first input whose messages' types are what is wanted (a dry run)."""
        engine = Engine(load_profile("macau"))
        for n, inp in enumerate(shoe):
            types = [type(m).__name__ for m in engine.feed(inp).messages]
            if isinstance(inp, DrawCard) and wanted(types):
                return n
        raise LookupError("no such card in the shoe")

    def one(name: str, at: int, card: Input | None = None) -> None:
        for package in (False, True):
            engine = Engine(load_profile("macau"))
            for inp in shoe[:at]:
                engine.feed(inp)
            fed = card or shoe[at]

            def step(engine: Engine = engine, fed: Input = fed) -> None:
                for message in engine.feed(fed).messages:
                    message.to_json()

            leaves, within, _entries = traced(step, package=package)
            bound = "package" if package else "class"
            print(f"  {name:<22} engine's {bound:<7}: leaves {leaves:3d}, inside {within:3d}")

    print(Path(sys.modules["baccarat"].__file__ or "").parents[1])
    dealt = index_of(lambda types: types == ["CardMessage", "RoundMessage"])
    last = index_of(lambda types: "ResultMessage" in types)
    one("a card of a round", dealt)
    one("the round's last card", last)
    first = next(inp for inp in shoe[1:] if isinstance(inp, DrawCard))
    one("a foreign card", last + 1, first)
    daemon(shoe, last)


def daemon(shoe: list[Any], last: int) -> None:
    """The whole path in the daemon: the device's event to the message in the outbox.

    ``Table.on_device_event`` (the input made, journaled, fed, its messages serialised and
    queued, the device told, the edge and the shuffle checks) for the round's last card;
    *entries* count the calls from outside into the engine.
    """
    import tempfile

    from baccarat.controller.config import Config, JournalConfig
    from baccarat.controller.engine.inputs import DrawCard
    from baccarat.controller.table import Table
    from baccarat.drivers.events import CardDrawn

    for package in (False, True):
        with tempfile.TemporaryDirectory() as folder:
            config = Config(
                table="T1", profile="macau",
                journal=JournalConfig(folder=folder, fsync=False),  # the calls, not the disk
            )
            table = Table(config)
            table.recover()
            for inp in shoe[:last]:
                table.handle(inp)
            card = shoe[last]
            assert isinstance(card, DrawCard)
            assert card.card is not None
            event = CardDrawn(card.card)
            leaves, within, entries = traced(
                lambda: table.on_device_event(event), package=package  # noqa: B023
            )
        bound = "package" if package else "class"
        print(f"  {'daemon: last card':<22} engine's {bound:<7}: leaves {leaves:3d}, "
              f"inside {within:3d}, entries {entries:3d}, out and back {leaves + entries:3d}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref-src", type=Path, help="also measure this src/ directory")
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.here:
        measure()
        return 0
    trees = [Path(__file__).resolve().parents[1] / "src"]
    if args.ref_src:
        trees.append(args.ref_src)
    for src in trees:
        env = {**os.environ, "PYTHONPATH": str(src)}
        subprocess.run([sys.executable, __file__, "--here"], env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
