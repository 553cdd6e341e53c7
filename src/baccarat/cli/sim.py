"""``baccarat sim DEVICE ...``: run a simulated device until stopped.

``baccarat sim shoe --link /tmp/shoe --protocol framed --decks 8 --seed 1 --pace 1``
deals shoe after shoe on a pty behind the symlink ``/tmp/shoe`` and prints where it is;
point ``baccarat listen --device /tmp/shoe`` (or the daemon) at the same path.
``--profile house6`` deals that rule profile's shoe (:meth:`Dealer.for_profile`); the
dealer stops while the host has an alarm open (``framed``), unless
``--dealer-ignores-alarms``; ``--record FILE`` appends a JSON line per step dealt.
``baccarat sim floor --tables 10 --broker 127.0.0.1:1883`` runs ten tables, each a real
daemon with a virtual shoe (:mod:`baccarat.sim_hardware.floor`).

Simulated devices are registered in :data:`SIM_DEVICES`, as the top-level subcommands are:
a module providing ``add_device_arguments(parser)`` and ``run_device(args) -> int``. Adding
``baccarat sim shuffler`` is one line there.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TextIO

from pydantic import ValidationError

from baccarat.drivers.codec import codec_names
from baccarat.drivers.events import CardDrawn, CutCard, DealerButton, DeviceEvent
from baccarat.rules.profiles import Profile, ProfileError, load_profile
from baccarat.sim_hardware.dealer import MISTAKES, Dealer, Mistake, Step
from baccarat.sim_hardware.faults import FaultPlan
from baccarat.sim_hardware.virtual_shoe import VirtualShoe

SIM_DEVICES: Final[dict[str, tuple[str, str]]] = {
    "shoe": ("baccarat.cli.sim", "a virtual electronic shoe on a pty"),
    "shuffler": (
        "baccarat.cli.sim_shuffler",
        "a virtual USB shuffler, dealt through the real USB driver",
    ),
    "floor": (
        "baccarat.cli.sim_floor",
        "N simulated tables: real daemons, each dealt by a virtual shoe",
    ),
}
"""Device name -> (module, help) for ``baccarat sim``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``baccarat sim``: one sub-subcommand per simulated device."""
    devices = parser.add_subparsers(dest="device", required=True, metavar="DEVICE")
    for name, (module_name, help_text) in SIM_DEVICES.items():
        device_parser = devices.add_parser(name, help=help_text, description=help_text)
        module = importlib.import_module(module_name)
        module.add_device_arguments(device_parser)
        device_parser.set_defaults(device_module=module)


def run(args: argparse.Namespace) -> int:
    """Run the chosen simulated device."""
    return int(args.device_module.run_device(args))


def add_device_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``baccarat sim shoe``."""
    parser.add_argument("--link", required=True, help="symlink to create for the pty")
    parser.add_argument("--protocol", choices=codec_names(), default="line",
                        help="the wire protocol the shoe speaks: line or framed (line)")
    parser.add_argument("--profile", help="deal this rule profile's shoe: macau, house6, csm, ez "
                        "or a profile TOML file (decks, burns, cut card, rounds after the cut)")
    parser.add_argument("--decks", type=int,
                        help="decks in the shoe (default: the profile's, else 8)")
    parser.add_argument("--seed", type=int, default=1, help="shoe n is shuffled with seed+n-1")
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between cards")
    parser.add_argument("--baud", type=int, default=9600, help="line speed, 8N1")
    parser.add_argument("--misdeal-rate", type=float, default=0.0, help="mistakes per round")
    parser.add_argument("--mistake", action="append", default=[], metavar="[ROUND:]KIND",
                        help="ROUND:KIND: make that mistake in that round of every shoe; KIND "
                        "alone: --misdeal-rate chooses among the KINDs given only (repeat; "
                        f"kinds: {', '.join(MISTAKES)})")
    parser.add_argument("--burn", help='"first_card" (the default) or a card count; '
                        "not with --profile")
    parser.add_argument("--dealer-ignores-alarms", action="store_true",
                        help="deal on while the controller has an alarm open (fault tests)")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="append one JSON line per step dealt (what the dealer did)")
    parser.add_argument("--shoes", type=int, default=0, help="stop after N shoes (0: never)")
    parser.add_argument("--garbage-rate", type=float, default=0.0, help="per frame, 0..1")
    parser.add_argument("--bit-flip-rate", type=float, default=0.0, help="per frame, 0..1")
    parser.add_argument("--drop-rate", type=float, default=0.0, help="per frame, 0..1")


def run_device(args: argparse.Namespace) -> int:
    """Deal shoes until stopped (or ``--shoes`` of them)."""
    return asyncio.run(serve(args))


def dealing_profile(args: argparse.Namespace) -> Profile | None:
    """The ``--profile`` to deal (with ``--decks``), or ``None``; ``ValueError`` if bad."""
    if args.profile is None:
        return None
    if args.burn is not None:
        raise ValueError("--burn: with --profile the profile's burn is dealt")
    try:
        return load_profile(args.profile, decks=args.decks)
    except (ProfileError, ValidationError, OSError, ValueError) as exc:
        raise ValueError(f"--profile {args.profile}: {exc}") from exc


async def serve(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """The ``sim shoe`` loop: one dealer per shoe, on one virtual shoe."""
    try:
        profile = dealing_profile(args)
        parse_mistakes(args.mistake)
    except ValueError as exc:
        print(f"baccarat sim shoe: {exc}", file=sys.stderr)
        return 2
    plan = FaultPlan(
        seed=args.seed,
        garbage_rate=args.garbage_rate,
        bit_flip_rate=args.bit_flip_rate,
        drop_rate=args.drop_rate,
    )
    shoe = VirtualShoe(
        args.link, args.protocol, baud=args.baud, faults=plan,
        dealer_ignores_alarms=args.dealer_ignores_alarms,
    )
    record = None if args.record is None else args.record.open("a", encoding="utf-8")
    try:
        async with shoe:
            decks = profile.decks if profile is not None else args.decks or 8
            dealt = f"profile {profile.name}, " if profile is not None else ""
            say(
                out,
                f"virtual shoe {args.link} -> {shoe.device_name} ({args.protocol}, "
                f"{args.baud} baud 8N1, {dealt}{decks} decks); Ctrl-C to stop",
            )
            shoe_no = 0
            while not args.shoes or shoe_no < args.shoes:
                shoe_no += 1
                dealer = make_dealer(args, shoe_no, profile)
                await deal_shoe(shoe, dealer, shoe_no, args.pace, out, record=record)
    finally:
        if record is not None:
            record.close()
    return 0


def parse_mistakes(words: Sequence[str]) -> tuple[dict[int, Mistake], list[Mistake]]:
    """``--mistake`` words: (round -> mistake, kinds for the rate); ``ValueError`` if bad."""
    at: dict[int, Mistake] = {}
    kinds: list[Mistake] = []
    for word in words:
        round_text, _, kind = word.rpartition(":")
        if kind not in MISTAKES:
            known = ", ".join(MISTAKES)
            raise ValueError(f"--mistake {word}: no mistake {kind!r} (one of {known})")
        mistake: Mistake = kind  # narrowed by the membership test
        if not round_text:
            kinds.append(mistake)
        elif round_text.isdigit() and int(round_text) >= 1:
            at[int(round_text)] = mistake
        else:
            raise ValueError(f"--mistake {word}: the round must be a number from 1")
    return at, kinds


def make_dealer(args: argparse.Namespace, shoe_no: int, profile: Profile | None = None) -> Dealer:
    """The dealer of shoe number ``shoe_no`` (1, 2, ...), of ``profile`` if given."""
    seed = args.seed + shoe_no - 1
    buttons = args.protocol != "line"
    at, kinds = parse_mistakes(getattr(args, "mistake", []))
    if profile is not None:
        return Dealer.for_profile(
            profile, seed=seed, mistake_rate=args.misdeal_rate, buttons=buttons,
            mistakes_at=at, mistake_kinds=kinds,
        )
    burn = str(args.burn or "first_card")
    return Dealer(
        decks=args.decks or 8,
        seed=seed,
        burn=int(burn) if burn.isdigit() else "first_card",
        buttons=buttons,
        mistake_rate=args.misdeal_rate,
        mistakes_at=at,
        mistake_kinds=kinds,
    )


async def deal_shoe(
    shoe: VirtualShoe,
    dealer: Dealer,
    shoe_no: int,
    pace: float,
    out: TextIO,
    *,
    record: TextIO | None = None,
) -> None:
    """Send one shoe, ``pace`` seconds after each card, printing where it is.

    Before each step the dealer waits while the controller has an alarm open
    (:meth:`VirtualShoe.dealer_ready`); each step sent is a line in ``record``, flushed.
    """
    total = len(dealer.cards)
    device_name = shoe.device_name
    for step in dealer.steps():
        await shoe.dealer_ready(step.event)
        if not shoe.send(step.event):
            continue
        if record is not None:
            record.write(json.dumps(step.record(shoe_no)) + "\n")
            record.flush()
        if shoe.device_name != device_name:
            device_name = shoe.device_name
            say(out, f"plugged in again as {device_name}")
        line = where(step, shoe_no, total - dealer.remaining, total)
        if line:
            say(out, line)
        if pace and isinstance(step.event, CardDrawn):
            await asyncio.sleep(pace)
    await shoe.drain()
    mistakes = ", ".join(f"round {r}: {m}" for r, m in dealer.mistakes_made) or "none"
    say(out, f"shoe {shoe_no} done: {total - dealer.remaining} cards dealt; mistakes: {mistakes}")


def where(step: Step, shoe_no: int, dealt: int, total: int) -> str:
    """A line saying where the shoe is, or '' for steps not worth a line."""
    event: DeviceEvent = step.event
    mistake = f"  <- {step.mistake}" if step.mistake else ""
    place = f"shoe {shoe_no} round {step.round_no:>2}"
    if isinstance(event, CardDrawn):
        return f"{place} {step.role:<5} {event.card.code}  ({dealt}/{total} cards){mistake}"
    if isinstance(event, CutCard):
        return f"{place} CUT CARD ({dealt}/{total} cards)"
    if isinstance(event, DealerButton):
        return f"{place} button {event.button}{mistake}"
    return f"{place} {event}"


def say(out: TextIO, text: str) -> None:
    """Print a line now."""
    print(text, file=out, flush=True)
