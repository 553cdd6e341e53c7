"""What the replaying commands (``replay``, ``roads``) share: profile options, a file of inputs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TextIO

from baccarat.controller.engine.replay import replay_lines
from baccarat.errors import BaccaratError
from baccarat.messages.bodies import Message
from baccarat.rules.profiles import load_profile


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """``--profile`` and ``--decks``, shared by the commands that run the engine."""
    parser.add_argument(
        "--profile", default="macau", help="macau (default), house6, csm, or a .toml file"
    )
    parser.add_argument("--decks", type=int, help="decks in the shoe (profile's by default)")


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
            self.profile = load_profile(args.profile, decks=args.decks)
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
