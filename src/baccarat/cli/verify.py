"""``baccarat verify``: a table's journal, or the floor's database, checked against its chain.

``--journal DIR``: the journal replayed file by file, each signed chain head (every file's
header, the ``chain`` file) checked against the head the replay reaches
(:mod:`baccarat.controller.journal_check`). ``--db URL``: every event of every table (or
``--table``) in the recorder's database, each signature and link checked
(:mod:`baccarat.floor.verify`). The public keys come from the floor's keys file
(``--keys``) or are given with ``--key`` (docs/record.md, "The chain and the signatures").

Exit status: 0 intact (the counts printed), 1 broken (the first broken table and seq, and
why), 2 nothing could be checked (no such journal or database, no key, another table's).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from baccarat.chain import ChainError, Keys, keys_from, read_keys
from baccarat.controller.journal.reader import journal_files, read_journal_file
from baccarat.controller.journal.records import file_name
from baccarat.controller.journal_check import JournalCheckError, JournalReport, verify_journal
from baccarat.floor.store import StoreError, open_store
from baccarat.floor.verify import StoreReport, verify_store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat verify``."""
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--journal", type=Path, metavar="DIR", help="a table's journal folder")
    what.add_argument("--db", metavar="URL",
                      help="the recorder's database: postgresql://..., sqlite:///path or a path")
    parser.add_argument("--table", help="only this table (--db); the table the journal must be")
    parser.add_argument("--keys", type=Path, metavar="FILE",
                        help="the floor's keys file: [tables] T07 = [\"ed25519:...\"]")
    parser.add_argument("--key", action="append", default=[], metavar="ed25519:BASE64",
                        help="a public key of the table (with --table, or the journal's own)")
    parser.epilog = "exit status: 0 intact, 1 broken (the first break named), 2 not checked"


def run(args: argparse.Namespace) -> int:
    """Check, print the counts or the first break; 0 intact, 1 broken, 2 not checked."""
    started = time.perf_counter()
    try:
        code = _journal(args) if args.journal is not None else _database(args)
    except (ChainError, JournalCheckError, StoreError) as exc:
        print(f"baccarat verify: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # hostile bytes in a file or a row: said, never a traceback
        what = args.journal if args.journal is not None else args.db
        print(f"baccarat verify: {what} cannot be checked: it holds what no table or "
              f"recorder writes ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2
    print(f"checked in {time.perf_counter() - started:.2f} s")
    return code


def _keys(args: argparse.Namespace, table: str | None) -> Keys:
    """The keys file's keys and those given with ``--key`` (for ``table``)."""
    by_id = {} if args.keys is None else dict(read_keys(args.keys).by_id)
    if args.key:
        if table is None:
            raise ChainError("--key needs --table (which table the key is)")
        by_id.update(keys_from({table: args.key}).by_id)
    if not by_id:
        raise ChainError("no public key: give the floor's keys file (--keys) or --key")
    return Keys(by_id)


def _journal(args: argparse.Namespace) -> int:
    folder: Path = args.journal
    if not folder.is_dir():
        raise JournalCheckError(f"{folder} is not a folder")
    own = _journal_table(folder)
    if args.table is not None and own is not None and own != args.table:
        raise JournalCheckError(f"{folder} is table {own}'s journal, not {args.table}'s")
    table = args.table or own
    keys = _keys(args, table)
    if table is not None and table not in keys.tables():
        raise ChainError(f"no key of table {table} is known: the journal cannot be checked "
                         "(add the table's public key to the keys file)")
    report = verify_journal(folder, keys, args.table)
    return _print_journal(report)


def _journal_table(folder: Path) -> str | None:
    numbers = sorted(journal_files(folder))
    if not numbers:
        return None
    header = read_journal_file(folder / file_name(numbers[-1])).header
    return None if header is None else header.table


def _print_journal(report: JournalReport) -> int:
    counts = (f"table {report.table}: {report.files} file(s), {report.inputs} input(s), "
              f"{report.events} event(s) to seq {report.last_seq}, {report.heads} signed "
              "head(s) checked")
    for note in report.notes:
        print(f"note: {note}")
    if report.broken is not None:
        print(f"BROKEN: {counts}\n  {report.broken}")
        return 1
    print(f"intact: {counts}")
    if report.unsigned_after is not None:
        print(f"  events after seq {report.unsigned_after} are covered by no signed head yet "
              "(the chain file is written every 2 s and at stop)")
    return 0


def _database(args: argparse.Namespace) -> int:
    keys = _keys(args, args.table)
    store = open_store(args.db, create=False)
    try:
        try:
            tables = store.tables()
        except StoreError as exc:
            if "chain" in str(exc):
                raise StoreError(f"{args.db} has no chain table: its recorder is older than "
                                 f"the chain and the signatures, nothing to check ({exc})"
                                 ) from None
            raise
        if args.table is not None and args.table not in tables:
            raise ChainError(f"the database holds nothing of table {args.table} "
                             f"(it holds {', '.join(tables) or 'nothing'})")
        unknown = sorted(set(tables if args.table is None else [args.table]) - keys.tables())
        if unknown:
            raise ChainError(f"no key is known for table(s) {', '.join(unknown)}: add them to "
                             "the keys file, or check one table with --table")
        report = verify_store(store, keys, args.table)
    finally:
        store.close()
    return _print_store(report)


def _print_store(report: StoreReport) -> int:
    for table in report.tables:
        if table.broken is None:
            print(f"intact: table {table.table}: {table.events} event(s), seq {table.first} "
                  f"to {table.last}")
        else:
            print(f"BROKEN: {table.broken}")
    if not report.intact:
        first = next(t.broken for t in report.tables if t.broken is not None)
        print(f"first break: {first}")
        return 1
    return 0
