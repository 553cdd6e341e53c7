"""``baccarat replay FILE``: print every message of a recorded shoe as one JSON line."""

from __future__ import annotations

import argparse
import sys

from baccarat.cli.common import ReplayError, ReplayRun, add_profile_arguments
from baccarat.controller.engine.engine import HANDLERS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat replay``."""
    parser.add_argument("file", help="inputs, one per line; '-' reads standard input")
    parser.epilog = "inputs (the engine's registry of handlers): " + ", ".join(
        handler.name for handler in HANDLERS.values()
    ) + "; a card is its code (e.g. AS, TD)"
    add_profile_arguments(parser)
    parser.add_argument(
        "--no-roads", action="store_true", help="leave out the roads messages"
    )


def run(args: argparse.Namespace) -> int:
    """Replay the file; exit 1 if any line was bad or refused, 2 if it cannot be read."""
    try:
        replay = ReplayRun("replay", args)
    except ReplayError as exc:
        print(exc, file=sys.stderr)
        return 2
    out = sys.stdout
    for message in replay.messages(roads=not args.no_roads):
        out.write(message.to_json())
        out.write("\n")
    return 1 if replay.bad else 0
