"""``baccarat sim shuffler``: a virtual USB shuffler dealt through the real USB driver.

It deals one shoe from a :class:`~baccarat.sim_hardware.virtual_shuffler.VirtualShuffler`
to :class:`~baccarat.drivers.usb_source.UsbSource` over the emulated bus, printing each
event, optionally pulling the cable every N cards; exit status 0 when the driver received
exactly the shuffled shoe.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable

from baccarat.cards import Card
from baccarat.drivers.events import CardDrawn, DeviceEvent
from baccarat.drivers.usb_source import UsbSource
from baccarat.sim_hardware.virtual_shuffler import VirtualShuffler


def add_device_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``baccarat sim shuffler``."""
    parser.add_argument("--decks", type=int, default=8, help="decks in the shoe (default 8)")
    parser.add_argument("--seed", type=int, default=None, help="shuffle seed (default random)")
    parser.add_argument(
        "--pace", type=float, default=0.0, help="seconds between cards (default 0: at once)"
    )
    parser.add_argument(
        "--unplug-every", type=int, default=None, metavar="N", help="pull the cable every N cards"
    )
    parser.add_argument(
        "--unplug-for", type=float, default=0.5, metavar="SECONDS", help="(default 0.5)"
    )


def run_device(args: argparse.Namespace) -> int:
    """Run ``baccarat sim shuffler``: 0 if the driver received the exact shoe, else 1."""
    return asyncio.run(
        demonstrate(
            args.decks,
            args.seed,
            pace=args.pace,
            unplug_every=args.unplug_every,
            unplug_for=args.unplug_for,
        )
    )


async def demonstrate(
    decks: int = 8,
    seed: int | None = None,
    *,
    pace: float = 0.0,
    unplug_every: int | None = None,
    unplug_for: float = 0.5,
    out: Callable[[str], None] = print,
) -> int:
    """Deal a shoe from a virtual shuffler to the real USB driver, printing each event.

    Pulls the cable every ``unplug_every`` cards for ``unplug_for`` seconds. Returns 0 if the
    driver received exactly the shuffled shoe, 1 otherwise.
    """
    shuffler = VirtualShuffler(decks, seed, pace=pace)
    received: list[Card] = []
    out(f"virtual shuffler 1209:0001, {decks} decks, {len(shuffler.shoe)} cards, seed {seed}")
    async with UsbSource(backend=shuffler.backend) as link:
        async for event in link:
            received += [event.card] if isinstance(event, CardDrawn) else []
            out(f"{len(received):4d}/{len(shuffler.shoe)}  {_describe(event)}")
            if unplug_every and isinstance(event, CardDrawn) and len(received) % unplug_every == 0:
                shuffler.detach()
                asyncio.get_running_loop().call_later(unplug_for, shuffler.attach)
            if len(received) == len(shuffler.shoe):
                break
        out("counters: " + ", ".join(f"{k}={v}" for k, v in link.counters.items()))
    exact = received == shuffler.shoe
    out("shoe received exactly" if exact else "shoe NOT received exactly")
    return 0 if exact else 1


def _describe(event: DeviceEvent) -> str:
    if isinstance(event, CardDrawn):
        return f"card {event.card}"
    return repr(event)
