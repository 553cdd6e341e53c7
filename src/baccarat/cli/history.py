"""``baccarat history --db URL [--table T] [--shoe N] [--since ...] [--until ...] [--csv]``.

Rounds with every card, the result and the alarms with who settled them, from the floor
recorder's database (:mod:`baccarat.floor.history`), or from a file of message JSON lines
(``--messages FILE``: what ``baccarat replay`` or ``journal show --messages`` print).

``--rebuild TOPIC --table T [--at-seq N]``: a derived view (``roads``, ``round``,
``recall``) as the table published it at ``seq`` N (the newest at or before N; without it
the newest of all), on one line: made again from the stored facts byte for byte where the
recorder kept only its place, as stored where it kept it whole (:mod:`baccarat.floor.derived`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from baccarat.boards.feed import parse_broker
from baccarat.floor.bodies import DERIVED_TOPICS
from baccarat.floor.derived import rebuild_at
from baccarat.floor.history import (
    Skipped,
    gaps,
    pace_csv,
    paces,
    parse_time,
    rounds,
    to_csv,
)
from baccarat.floor.retained import BrokerReadError, RetainedSeq, missing_tails, read_retained
from baccarat.floor.store import Store, StoreError, TableTail, open_store


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
    parser.add_argument("--pace", action="store_true",
                        help="each shoe's dealer pace (rounds an hour, seconds a round)"
                        " instead of its rounds")
    parser.add_argument("--check", action="store_true",
                        help="also report seq gaps per table, bodies history could not use,"
                        " and (with --broker) a table whose tail is missing: the broker"
                        " retains a newer seq than the database holds (exit 1 if any)")
    parser.add_argument("--broker", metavar="HOST[:PORT]",
                        help="with --check: the floor broker, whose retained state is compared"
                        " with the database's newest messages")
    parser.add_argument("--grace", type=float, default=3.0, metavar="SECONDS",
                        help="with --check --broker: a missing tail is looked at again after"
                        " this long; a database that moved meanwhile is behind (the recorder"
                        " catching up), not missing (3; 0: no second look)")
    parser.add_argument("--rebuild", choices=sorted(DERIVED_TOPICS), metavar="TOPIC",
                        help="with --db and --table: print the derived view TOPIC"
                        f" ({', '.join(sorted(DERIVED_TOPICS))}) as the table published it,"
                        " made again from the stored facts")
    parser.add_argument("--at-seq", type=int, metavar="N",
                        help="with --rebuild: the view current at seq N (default: the newest)")
    parser.add_argument("--prefix", default="baccarat", help="the tables' topic prefix")
    parser.add_argument("--username", help="the check's broker account (it only reads)")
    parser.add_argument("--password-file", type=Path, help="a file holding its password")


def _time(text: str) -> float:
    try:
        return parse_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """Print or export the rounds."""
    if args.rebuild is not None or args.at_seq is not None:
        return _rebuild(args)
    skipped = Skipped()
    if args.broker is not None and (args.db is None or not args.check):
        print("baccarat history: --broker goes with --db and --check", file=sys.stderr)
        return 2
    try:
        messages = list(_messages(args, skipped))
        tails = _tails(args) if args.check else []
        sequence = _sequence(args, messages) if args.check else []
        unlike = _unlike_latest(args) if args.check and args.db is not None else []
        retained = _retained(args) if args.check and args.broker is not None else None
    except (StoreError, OSError, ValueError, BrokerReadError) as exc:
        print(f"baccarat history: {exc}", file=sys.stderr)
        return 2
    history = list(rounds(messages, skipped))
    if args.pace:
        shoes = paces(messages)
        sys.stdout.write(pace_csv(shoes) if args.csv else "".join(f"{s.line()}\n" for s in shoes))
    elif args.csv:
        sys.stdout.write(to_csv(history))
    else:
        for rnd in history:
            print(rnd.line())
    if skipped.count:
        print(f"baccarat history: {skipped.count} message(s) skipped, not usable:",
              file=sys.stderr)
        for example in skipped.examples:
            print(f"  {example}", file=sys.stderr)
    if not args.check:
        return 0
    missing = gaps(sequence)
    for table, runs in missing.items():
        text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
        print(f"{table}: seq missing: {text}", file=sys.stderr)
    behind = [] if retained is None else missing_tails(tails, retained)
    if behind and args.grace > 0:
        behind, catching_up = _second_look(args, tails, behind)
        for line in catching_up:
            print(line, file=sys.stderr)
    for line in behind:
        print(line, file=sys.stderr)
    if retained is None and args.db is not None:
        print("baccarat history: tails not checked (--broker HOST compares the broker's"
              " retained state with the database)", file=sys.stderr)
    for line in unlike:
        print(line, file=sys.stderr)
    return 1 if missing or behind or unlike or skipped.count else 0


def _second_look(
    args: argparse.Namespace, tails: list[TableTail], missing: list[str]
) -> tuple[list[str], list[str]]:
    """The missing tails after ``--grace`` seconds: still missing, and behind (moving).

    A table whose newest stored seq moved meanwhile has a recorder catching up: its tail
    is behind, not (yet) missing. One that did not move is missing: lost, or no recorder.
    """
    tables = ", ".join(line.partition(":")[0] for line in missing)
    print(f"baccarat history: {tables}: the broker holds a newer seq than the database;"
          f" looking again in {args.grace:.0f} s", file=sys.stderr, flush=True)
    time.sleep(args.grace)
    try:
        later = {t.table: t.last_seq for t in _tails(args)}
    except (StoreError, OSError) as exc:
        print(f"baccarat history: second look not made: {exc}", file=sys.stderr)
        return missing, []
    before = {t.table: t.last_seq for t in tails}
    still, moving = [], []
    for line in missing:
        table = line.partition(":")[0]
        old, new = before.get(table), later.get(table)
        if new is not None and (old is None or new > old):
            moving.append(
                f"{table}: behind, not missing: the database went from seq {old or 0} to seq"
                f" {new} in {args.grace:.0f} s: the recorder is catching up (check again later)"
            )
        else:
            still.append(f"{line}; the database did not move in {args.grace:.0f} s")
    return still, moving


def _rebuild(args: argparse.Namespace) -> int:
    if args.rebuild is None or args.db is None or args.table is None:
        print("baccarat history: --rebuild TOPIC goes with --db and --table (and --at-seq N)",
              file=sys.stderr)
        return 2
    try:
        store = open_store(args.db, create=False)
        try:
            found = _rebuilt(store, args.table, args.rebuild, args.at_seq)
        finally:
            store.close()
    except StoreError as exc:
        print(f"baccarat history: {exc}", file=sys.stderr)
        return 2
    at = "" if args.at_seq is None else f" at or before seq {args.at_seq}"
    if found is None:
        print(f"baccarat history: {args.table} published no {args.rebuild}{at} that the"
              " database knows of", file=sys.stderr)
        return 1
    if found[1] is None:
        print(f"baccarat history: {args.table}'s {args.rebuild} at seq {found[0]} cannot be"
              " made again: the stored messages do not reach back to its shoe's start, or one"
              " is missing", file=sys.stderr)
        return 1
    print(found[1])
    return 0


def _rebuilt(
    store: Store, table: str, topic: str, at_seq: int | None
) -> tuple[int, str | None] | None:
    """The view current at ``at_seq`` (the newest without it); its body None: not made."""
    stored, places = store.stored(table, at_seq), store.derived(table, at_seq)
    if at_seq is None:
        newest = [places[-1].seq] if places else []
        if stored:
            newest.append(stored[-1][0]["seq"])
        at_seq = max(newest, default=0)
    return rebuild_at(stored, places, topic, at_seq)


def _sequence(
    args: argparse.Namespace, messages: list[tuple[str, dict[str, Any]]]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every seq a table published that the source knows of: facts, and derived views."""
    if args.db is None:
        return iter(messages)
    store = open_store(args.db, create=False)
    try:
        found = list(store.seqs(args.table))
    finally:
        store.close()
    return ((table, {"seq": seq}) for table, seq in found)


def _unlike_latest(args: argparse.Namespace) -> list[str]:
    """Each table's derived views whose rebuilt latest is not the one kept whole."""
    store = open_store(args.db, create=False)
    out = []
    try:
        for view in store.latest(args.table):
            found = _rebuilt(store, view.table, view.topic, view.seq)
            if found is None or found != (view.seq, view.body):
                out.append(f"{view.table}: {view.topic} at seq {view.seq} cannot be made again"
                           " from the stored facts (do they reach back to its shoe's start?)")
    finally:
        store.close()
    return out


def _retained(args: argparse.Namespace) -> dict[str, RetainedSeq]:
    host, port = parse_broker(args.broker)
    password = None
    if args.password_file is not None:
        password = args.password_file.read_text(encoding="utf-8").strip()
    found = read_retained(host, port, prefix=args.prefix, username=args.username,
                          password=password)
    return {t: seq for t, seq in found.items() if args.table is None or t == args.table}


def _tails(args: argparse.Namespace) -> list[TableTail]:
    if args.db is None:
        return []
    store = open_store(args.db, create=False)
    try:
        return [t for t in store.tails() if args.table is None or t.table == args.table]
    finally:
        store.close()


def unknown_table(table: str, known: list[str], where: str) -> str:
    """The error for a table the database has no message of, naming those it has."""
    if not known:
        return f"table {table!r} is unknown: {where} holds no table's messages yet"
    return (f"table {table!r} is unknown to {where}; it knows {len(known)} table(s): "
            f"{', '.join(known)}")


def _messages(args: argparse.Namespace, skipped: Skipped) -> Iterator[tuple[str, dict[str, Any]]]:
    if args.db is not None:
        store = open_store(args.db, create=False)  # only the recorder makes a database
        try:
            if args.table is not None:
                known = sorted({t.table for t in store.tails()})
                if args.table not in known:
                    raise ValueError(unknown_table(args.table, known, args.db))
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
            except (ValueError, RecursionError) as exc:
                raise ValueError(f"{args.messages}:{number}: not JSON: {exc}") from None
            if not isinstance(body, dict):
                skipped.add(table, body, f"line {number}: not a JSON object")
                continue
            if args.shoe is not None and body.get("shoe") != args.shoe:
                continue
            ts = body.get("ts")
            if not isinstance(ts, int | float) or isinstance(ts, bool):
                ts = None
            if args.since is not None and (ts is None or ts < args.since):
                continue
            if args.until is not None and (ts is None or ts >= args.until):
                continue
            yield table, body
