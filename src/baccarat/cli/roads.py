"""``baccarat roads PATH``: replay a recorded shoe and print its roads.

PATH is a file of inputs in the replay notation (``-``: standard input), or a journal: a
``shoe-NNNNNN.journal`` file or the journal folder (its newest file), replayed with the
profile its header recorded, numbered as the daemon published. The roads printed are
those of the last roads message of the replay: exactly what the daemon would have left
retained on ``{prefix}/{table}/roads`` after the same inputs. ``--shoe N`` chooses
another shoe than the last (in a file that holds several, or the journal folder's file
of that shoe). ``--json`` prints that body instead of the grids.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from baccarat.cli.common import (
    ReplayError,
    ReplayRun,
    add_profile_arguments,
    is_journal,
    journal_messages,
)
from baccarat.controller.engine.roads import Roads
from baccarat.controller.journal.reader import (
    JournalError,
    JournalFile,
    header_profile,
    journal_files,
    newest_file,
    read_journal_file,
)
from baccarat.controller.journal.records import file_name
from baccarat.messages.bodies import Message, ShoeMessage
from baccarat.messages.roads import RoadsMessage
from baccarat.rules.profiles import Profile


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat roads``."""
    parser.add_argument(
        "file",
        metavar="PATH",
        help="inputs, one per line ('-': standard input), or a journal folder or file",
    )
    add_profile_arguments(parser)
    parser.set_defaults(profile=None)  # a journal's header names its own; inputs: macau
    parser.add_argument("--shoe", type=int, help="the shoe to draw (default: the last)")
    parser.add_argument("--json", action="store_true", help="print the roads message body")


def last_roads(messages: Iterable[Message], number: int | None = None) -> RoadsMessage | None:
    """The roads of the last shoe (or of shoe ``number``) at the end of ``messages``.

    The last roads message, or empty roads when that shoe has had no result yet; ``None``
    when no such shoe was ever started.
    """
    roads: RoadsMessage | None = None
    shoe: ShoeMessage | None = None
    last_seq = 0
    for message in messages:
        last_seq = message.seq
        if isinstance(message, RoadsMessage) and number in (None, message.shoe):
            roads = message
        elif isinstance(message, ShoeMessage) and number in (None, message.shoe):
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
    """Replay the path and print its roads; 1 if a line was bad, 2 if nothing to show."""
    if is_journal(args.file):
        return run_journal(args)
    try:
        replay = ReplayRun("roads", args)
    except ReplayError as exc:
        print(exc, file=sys.stderr)
        return 2
    message = last_roads(replay.messages(), args.shoe)
    if not show(message, args):
        return 2
    return 1 if replay.bad else 0


def run_journal(args: argparse.Namespace) -> int:
    """The roads of a journal's shoe; 1 if the file has a problem, 2 if it cannot be read."""
    try:
        found = read_journal_file(shoe_file(Path(args.file), args.shoe))
        profile = journal_profile(found, args.profile, args.decks)
    except (OSError, JournalError, ValueError) as exc:
        print(f"baccarat roads: {exc}", file=sys.stderr)
        return 2

    def refused(record: int, reason: str) -> None:
        print(f"{found.path}: record {record}: refused: {reason}", file=sys.stderr)

    message = last_roads(journal_messages(found, profile, refused), args.shoe)
    if found.problem is not None:
        print(f"baccarat roads: {found.problem}", file=sys.stderr)
    if not show(message, args, found):
        return 2
    return 1 if found.problem else 0


def journal_profile(found: JournalFile, name: str | None, decks: int | None) -> Profile:
    """The profile to replay ``found`` with: the one named, else its header's."""
    if found.header is None:
        raise JournalError(f"{found.path}: no journal header")
    return header_profile(found.header, name, decks)


def shoe_file(path: Path, shoe: int | None) -> Path:
    """The journal file to read: ``path`` itself, or in a folder the file of ``shoe``.

    Without ``shoe``, the folder's newest file; with it, the newest file whose header
    starts before that shoe (each file opens with its shoe's ``shoe`` input).
    """
    if shoe is None or not path.is_dir():
        return newest_file(path)
    for number in sorted(journal_files(path), reverse=True):
        found = read_journal_file(path / file_name(number))
        if found.header is not None and found.header.counters.get("shoe", 0) < shoe:
            return found.path
    raise FileNotFoundError(f"no journal file of shoe {shoe} in {path}")


def show(
    message: RoadsMessage | None, args: argparse.Namespace, found: JournalFile | None = None
) -> bool:
    """Print the roads (``--json``: the body); False, with a message, if there are none."""
    if message is None:
        where = found.path if found is not None else args.file
        which = "no shoe" if args.shoe is None else f"no shoe {args.shoe}"
        print(f"baccarat roads: {which} in {where}", file=sys.stderr)
        return False
    if args.json:
        print(message.to_json())
    else:
        print_roads(message)
    return True
