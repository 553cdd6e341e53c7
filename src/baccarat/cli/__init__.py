"""The ``baccarat`` command. Each subcommand lives in a module of its own.

A module named in :data:`SUBCOMMANDS` provides ``add_arguments(parser)`` and
``run(args) -> int``; it is imported only when its subcommand runs, so that a slow import
for one subcommand never slows the others.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Sequence

from baccarat import DISTRIBUTION, __version__

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("baccarat.cli.replay", "replay a file of inputs through the engine"),
    "odds": ("baccarat.cli.odds", "exact probabilities and house edges"),
    "schemas": ("baccarat.cli.schemas", "export the JSON Schemas of the messages"),
    "run": ("baccarat.cli.run", "run the table's daemon (device -> engine -> MQTT)"),
    "demo": ("baccarat.cli.demo", "play a simulated shoe with a live board (no hardware)"),
    "listen": ("baccarat.cli.listen", "print the decoded events of a shoe or shuffler"),
    "sim": ("baccarat.cli.sim", "run simulated hardware: a shoe (pty), a USB shuffler, a floor"),
    "recall": ("baccarat.cli.recall", "game recall: the last rounds, card by card"),
    "roads": ("baccarat.cli.roads", "replay a recorded shoe and print its roads"),
    "journal": ("baccarat.cli.journal", "verify or show a journal file"),
    "board": ("baccarat.cli.board", "a table's result board: in the terminal, or --web"),
    "pit": ("baccarat.cli.pit", "the pit console: every table's alarms and commands (web)"),
    "identity": ("baccarat.cli.identity", "the version and SHA-256 of the installed files"),
    "record": ("baccarat.cli.record", "the floor recorder: every table's messages into a database"),
    "history": ("baccarat.cli.history", "rounds from the floor recorder's database, or CSV"),
    "verify": ("baccarat.cli.verify", "check a journal or the floor's record: signed chains"),
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the ``selected`` subcommand's module is imported."""
    parser = argparse.ArgumentParser(
        prog="baccarat",
        description="The baccarat table controller: the table's daemon, its simulators,"
        " boards, pit console and floor recorder. One line a command below.",
        epilog="baccarat COMMAND --help: a command's options. New here? baccarat demo"
        " plays a simulated shoe with a live board, no hardware needed.",
    )
    parser.add_argument("--version", action="version", version=f"{DISTRIBUTION} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            module = importlib.import_module(module_name)
            module.add_arguments(sub_parser)
            sub_parser.set_defaults(command_module=module)
    return parser


def unknown_command(name: str) -> str:
    """The error for a mistyped command: the nearest commands, then all of them."""
    near = difflib.get_close_matches(name, SUBCOMMANDS, n=3, cutoff=0.6)
    text = f"baccarat: unknown command {name!r}"
    if near:
        text += f": did you mean {' or '.join(repr(n) for n in near)}?"
    return text + f"\nthe commands: {', '.join(SUBCOMMANDS)} (baccarat --help: a line each)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``baccarat`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    selected = next((a for a in argv if not a.startswith("-")), None)
    if selected is not None and selected not in SUBCOMMANDS:
        print(unknown_command(selected), file=sys.stderr)
        return 2
    args = build_parser(selected).parse_args(argv)
    try:
        return int(args.command_module.run(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0

