"""``baccarat sim floor --tables N``: see :mod:`baccarat.sim_hardware.floor`."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from baccarat.cli.common import add_log_arguments
from baccarat.sim_hardware.floor import FloorPlan, run_floor


def add_device_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``baccarat sim floor``."""
    parser.add_argument("--tables", type=int, required=True, help="how many tables")
    parser.add_argument("--broker", default="127.0.0.1:1883", help="HOST[:PORT] of the broker")
    parser.add_argument(
        "--username", help='the tables\' broker account, "{table}" for the name: baccarat-{table}'
    )
    parser.add_argument("--password-file", type=Path, help="a file holding their password")
    parser.add_argument("--prefix", default="baccarat", help="the topic prefix")
    parser.add_argument("--pace", type=float, default=0.2,
                        help="seconds between cards at each table (0.2: ten times a real table)")
    parser.add_argument("--profile", default="macau",
                        help="every table's rule profile, which its dealer deals: macau, "
                             "house6, csm, ez or a profile TOML file (default: macau)")
    parser.add_argument("--decks", type=int, help="decks in each shoe (default: the profile's)")
    parser.add_argument("--seed", type=int, default=1,
                        help="the shuffles' seed: table n's shoes follow from it (1)")
    parser.add_argument("--misdeal-rate", type=float, default=0.0,
                        help="the dealers' mistakes per round (0..1)")
    parser.add_argument("--dealer-ignores-alarms", action="store_true",
                        help="dealers deal on while their table has an alarm open (without "
                             "it a mistake holds the table until the pit settles it)")
    parser.add_argument("--folder", type=Path,
                        help="where each table's config, journal and log go (default: a new "
                             "folder under /tmp)")
    parser.add_argument("--no-fsync", action="store_true",
                        help="journals without fdatasync (many tables on one disk)")
    add_log_arguments(parser, of_daemons=True)


def run_device(args: argparse.Namespace) -> int:
    """Run the floor until SIGTERM or Ctrl-C."""
    host, _, port = args.broker.rpartition(":") if ":" in args.broker else (args.broker, "", "")
    if port and not port.isdigit():
        print(f"baccarat sim floor: --broker {args.broker}: the port is not a number",
              file=sys.stderr)
        return 2
    if args.password_file is not None and not args.password_file.is_file():
        print(f"baccarat sim floor: --password-file {args.password_file}: no such file",
              file=sys.stderr)
        return 2
    folder = args.folder or Path(tempfile.mkdtemp(prefix="baccarat-floor-"))
    profile = args.profile
    if profile.endswith(".toml") or Path(profile).is_file():
        profile = str(Path(profile).resolve())  # the daemons read it from their own folder
    plan = FloorPlan(
        tables=args.tables, folder=folder.resolve(), broker_host=host or args.broker,
        broker_port=int(port or 1883), username=args.username,
        password_file=args.password_file, topic_prefix=args.prefix, pace=args.pace,
        decks=args.decks, seed=args.seed, fsync=not args.no_fsync, log_level=args.log_level,
        profile=profile, misdeal_rate=args.misdeal_rate,
        dealer_ignores_alarms=args.dealer_ignores_alarms,
    )
    return asyncio.run(run_floor(plan))
