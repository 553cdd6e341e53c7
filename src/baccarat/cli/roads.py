"""``baccarat roads FILE``: replay a recorded shoe and print its roads.

The roads printed are those of the last roads message of the replay: exactly what the
daemon would have left retained on ``{prefix}/{table}/roads`` after the same inputs.
``--json`` prints that body instead of the grids.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from baccarat.cli.common import ReplayError, ReplayRun, add_profile_arguments
from baccarat.controller.engine.roads import Roads
from baccarat.messages.bodies import Message, ShoeMessage
from baccarat.messages.roads import RoadsMessage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat roads``."""
    parser.add_argument("file", help="inputs, one per line; '-' reads standard input")
    add_profile_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the roads message body")


def last_roads(messages: Iterable[Message]) -> RoadsMessage | None:
    """The roads of the current shoe at the end of ``messages``.

    The last roads message, or empty roads when the last shoe has had no result yet;
    ``None`` when no shoe was ever started.
    """
    roads: RoadsMessage | None = None
    shoe: ShoeMessage | None = None
    last_seq = 0
    for message in messages:
        last_seq = message.seq
        if isinstance(message, RoadsMessage):
            roads = message
        elif isinstance(message, ShoeMessage):
            shoe = message
    if shoe is not None and (roads is None or roads.shoe != shoe.shoe):
        return Roads().message(seq=last_seq, shoe=shoe.shoe, cards_left=shoe.cards_left)
    return roads


def print_roads(message: RoadsMessage) -> None:
    """Draw the roads on standard output, in colour when it is a terminal."""
    from rich.console import Console

    from baccarat.boards.roads_view import roads_report

    console = Console(soft_wrap=True, highlight=False)
    console.print(roads_report(message, coloured=console.color_system is not None))


def run(args: argparse.Namespace) -> int:
    """Replay the file and print its roads; 1 if a line was bad, 2 if nothing to show."""
    try:
        replay = ReplayRun("roads", args)
    except ReplayError as exc:
        print(exc, file=sys.stderr)
        return 2
    message = last_roads(replay.messages())
    if message is None:
        print(f"baccarat roads: no shoe in {args.file}", file=sys.stderr)
        return 2
    if args.json:
        print(message.to_json())
    else:
        print_roads(message)
    return 1 if replay.bad else 0
