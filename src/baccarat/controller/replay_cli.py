"""``baccarat replay FILE``: print every message of a recorded shoe as one JSON line."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from baccarat.controller.profiles import load_profile
from baccarat.controller.replay import replay_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat replay``."""
    parser.add_argument("file", help="inputs, one per line; '-' reads standard input")
    add_profile_arguments(parser)
    parser.add_argument(
        "--no-roads", action="store_true", help="leave out the roads messages"
    )


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


def run(args: argparse.Namespace) -> int:
    """Replay the file; exit 1 if any line was bad or refused, 2 if it cannot be read."""
    try:
        profile = load_profile(args.profile, decks=args.decks)
    except ValueError as exc:
        print(f"baccarat replay: {exc}", file=sys.stderr)
        return 2
    bad = 0

    def report(line: int, text: str) -> None:
        nonlocal bad
        bad += 1
        print(f"{args.file}:{line}: {text}", file=sys.stderr)

    try:
        source = open_input(args.file)
    except OSError as exc:
        print(f"baccarat replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    with source:
        out = sys.stdout
        for message in replay_lines(source, profile, on_error=report, roads=not args.no_roads):
            out.write(message.to_json())
            out.write("\n")
    return 1 if bad else 0
