"""``baccarat history --db URL [--table T] [--shoe N] [--since ...] [--until ...] [--csv]``.

Rounds with every card, the result and the alarms with who settled them, from the floor
recorder's database (:mod:`baccarat.floor.history`), or from a file of message JSON lines
(``--messages FILE``: what ``baccarat replay`` or ``journal show --messages`` print).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from baccarat.floor.history import gaps, parse_time, rounds, to_csv
from baccarat.floor.store import StoreError, open_store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat history``."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", help="the recorder's database: PATH or postgresql://...")
    source.add_argument("--messages", help="message JSON lines (- for standard input)")
    parser.add_argument("--table", help="only this table ('T1' with --messages)")
    parser.add_argument("--shoe", type=int, help="only this shoe")
    parser.add_argument("--since", type=_time, help="ISO time or Unix seconds")
    parser.add_argument("--until", type=_time, help="ISO time or Unix seconds (excluded)")
    parser.add_argument("--csv", action="store_true", help="CSV with a header row")
    parser.add_argument("--check", action="store_true",
                        help="also report seq gaps per table (exit 1 if any)")


def _time(text: str) -> float:
    try:
        return parse_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """Print or export the rounds."""
    try:
        messages = list(_messages(args))
    except (StoreError, OSError, ValueError) as exc:
        print(f"baccarat history: {exc}", file=sys.stderr)
        return 2
    history = list(rounds(messages))
    if args.csv:
        sys.stdout.write(to_csv(history))
    else:
        for rnd in history:
            print(rnd.line())
    if args.check:
        missing = gaps(messages)
        for table, runs in missing.items():
            text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
            print(f"{table}: seq missing: {text}", file=sys.stderr)
        return 1 if missing else 0
    return 0


def _messages(args: argparse.Namespace) -> Iterator[tuple[str, dict[str, Any]]]:
    if args.db is not None:
        store = open_store(args.db)
        try:
            yield from store.messages(args.table, args.shoe, args.since, args.until)
        finally:
            store.close()
        return
    table = args.table or "T1"
    source = sys.stdin if args.messages == "-" else open(args.messages, encoding="utf-8")  # noqa: SIM115
    with source:
        for number, line in enumerate(source, start=1):
            if not line.strip():
                continue
            try:
                body = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{args.messages}:{number}: not JSON: {exc}") from None
            if args.shoe is not None and body.get("shoe") != args.shoe:
                continue
            ts = body.get("ts")
            if args.since is not None and (ts is None or ts < args.since):
                continue
            if args.until is not None and (ts is None or ts >= args.until):
                continue
            yield table, body
