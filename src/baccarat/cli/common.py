"""What commands share: log and profile options, a file of inputs, a journal's replay."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, TextIO

from baccarat import logs
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.replay import replay_lines
from baccarat.controller.journal.reader import JournalFile
from baccarat.controller.journal.records import FILE_NAME, HEADER_TAG
from baccarat.errors import BaccaratError
from baccarat.messages.bodies import Message
from baccarat.rules.profiles import Profile, load_profile


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """``--profile`` and ``--decks``, shared by the commands that run the engine."""
    parser.add_argument(
        "--profile", default="macau", help="macau (default), house6, csm, ez, or a .toml file"
    )
    parser.add_argument("--decks", type=int, help="decks in the shoe (profile's by default)")


LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
"""The levels ``--log-level`` takes (in any case)."""


def add_log_arguments(parser: argparse.ArgumentParser, *, of_daemons: bool = False) -> None:
    """``--log-level`` and ``--log-format``, shared by the commands that log.

    ``of_daemons``: the command starts table daemons and hands them its level (``sim
    floor``); their format is their own, so it has no ``--log-format``.
    """
    whose = "the daemons' log level" if of_daemons else "the lowest level logged"
    parser.add_argument(
        "--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS, metavar="LEVEL",
        help=f"{whose}: {', '.join(LOG_LEVELS)} (default: INFO)",
    )
    if of_daemons:
        return
    parser.add_argument(
        "--log-format",
        choices=logs.FORMATS,
        default=os.environ.get("BACCARAT_LOG_FORMAT", "text"),
        help="text (timestamped; for journald, with syslog levels) or json, one object a"
        " line (default: $BACCARAT_LOG_FORMAT, else text)",
    )


def open_input(path: str) -> TextIO:
    """The named file, or standard input for '-'."""
    if path == "-":
        return sys.stdin
    return open(path, encoding="utf-8", errors="replace")


class ReplayError(BaccaratError):
    """The replay cannot start (bad profile, unreadable file); the text says why."""


class ReplayRun:
    """One replay of a file for a command: its profile, its input and its bad lines."""

    def __init__(self, command: str, args: argparse.Namespace) -> None:
        """Load the profile and open the file, or raise :class:`ReplayError`."""
        self.command, self.file, self.bad = command, args.file, 0
        try:
            self.profile = load_profile(args.profile or "macau", decks=args.decks)
        except ValueError as exc:
            raise ReplayError(f"baccarat {command}: {exc}") from None
        try:
            self.source = open_input(args.file)
        except OSError as exc:
            raise ReplayError(
                f"baccarat {command}: cannot read {args.file}: {exc.strerror}"
            ) from None

    def report(self, line: int, text: str) -> None:
        """A bad or refused line: on standard error, counted."""
        self.bad += 1
        print(f"{self.file}:{line}: {text}", file=sys.stderr)

    def messages(self, *, roads: bool = True) -> Iterator[Message]:
        """Every message of the replay, in order; closes the file at the end."""
        with self.source:
            yield from replay_lines(self.source, self.profile, on_error=self.report, roads=roads)


def is_journal(path: str) -> bool:
    """Whether ``path`` is a journal: a folder, a ``shoe-NNNNNN.journal``, a journal header."""
    if path == "-":
        return False
    if Path(path).is_dir() or FILE_NAME.fullmatch(Path(path).name):
        return True
    try:
        with open(path, "rb") as file:
            return file.read(len(HEADER_TAG)) == HEADER_TAG
    except OSError:
        return False


def journal_messages(
    found: JournalFile, profile: Profile, on_refused: Callable[[int, str], None]
) -> Iterator[Message]:
    """The messages the engine produces for a journal file's records.

    They are numbered on from the header's counters, as the daemon published them; a
    refused record goes to ``on_refused`` with its record number.
    """
    if found.header is None:
        return
    engine = Engine.resume(profile, found.header.counters)
    for number, inp in found.records:
        outcome = engine.feed(inp)
        if outcome.refused is not None:
            on_refused(number, outcome.refused)
        yield from outcome.messages
