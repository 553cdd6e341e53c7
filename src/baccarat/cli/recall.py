"""``baccarat recall [PATH] [--json]``: game recall from the journal.

The last rounds of the shoe in play (at most 10), every card in dealing order, rebuilt by
replaying the journal exactly as the daemon does on start. PATH is the journal folder (the
newest shoe file is read) or one ``shoe-NNNNNN.journal`` file; it is only read, never
changed. The same body is published, retained, on ``{prefix}/{table}/recall``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from baccarat.controller.config import DEFAULT_JOURNAL
from baccarat.controller.engine.engine import Engine
from baccarat.controller.journal.reader import (
    JournalError,
    header_profile,
    newest_file,
    read_journal_file,
)
from baccarat.messages.bodies import RecallMessage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat recall``."""
    parser.add_argument(
        "path", nargs="?", type=Path, default=DEFAULT_JOURNAL,
        help=f"journal folder or file (default {DEFAULT_JOURNAL})",
    )
    parser.add_argument("--json", action="store_true", help="the recall message's body")


def recall(path: Path) -> RecallMessage | None:
    """The last recall message the journal's newest shoe produced (None: no round yet)."""
    found = read_journal_file(newest_file(path))
    if found.header is None:
        raise JournalError(f"{found.path}: no header")
    engine = Engine.resume(header_profile(found.header), found.header.counters)
    last: RecallMessage | None = None
    for _, inp in found.records:
        for message in engine.feed(inp).messages:
            if isinstance(message, RecallMessage):
                last = message
    return last


def run(args: argparse.Namespace) -> int:
    """Print the recall; 2 if the journal cannot be read."""
    try:
        message = recall(args.path)
    except (OSError, JournalError, ValueError) as exc:
        print(f"baccarat recall: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(message.to_json() if message else '{"rounds": []}')
        return 0
    if message is None or not message.rounds:
        print("no finished round in the shoe in play")
        return 0
    for rnd in message.rounds:
        outcome = "VOID" if rnd.status == "void" else str(rnd.winner).upper()
        cards = "  ".join(f"{c.position}:{c.card or '??'}" for c in rnd.cards)
        tags = " demo" if rnd.demo else ""
        tags += f" exposed {','.join(rnd.exposed)}" if rnd.exposed else ""
        tags += f" voided by {rnd.voided_by}" if rnd.status == "void" and rnd.voided_by else ""
        print(
            f"shoe {rnd.shoe} round {rnd.round:>3}  {outcome:<6} "
            f"P {rnd.player_total} B {rnd.banker_total}{tags}   {cards}"
        )
        for alarm in rnd.settled:
            who = f" ({alarm.origin})" if alarm.origin else ""
            print(f"    {alarm.kind} #{alarm.id} settled by {alarm.by}{who}")
    return 0
