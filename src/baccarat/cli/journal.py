"""``baccarat journal verify|show PATH``: check or print journal files, never changing them.

PATH is a ``shoe-NNNNNN.journal`` file or the journal folder: ``verify`` checks every
file of a folder, ``show`` prints the newest (as ``baccarat recall`` reads it).
``verify`` prints each file's header, its records and its first problem (with the byte
offset where recovery would cut it); it exits 0 when every file is clean, 1 when one has
a problem, 2 when one cannot be read (or the folder holds none). ``show`` prints the
records (number, time in ISO 8601 UTC, input), or as JSON lines (``--json``), or in the
replay notation with times (``--replay``, for ``baccarat replay``), or the messages the
engine produces for them (``--messages``), numbered on from the header's counters; it
exits like ``verify``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import notation
from baccarat.controller.journal.reader import (
    JournalError,
    JournalFile,
    Problem,
    header_profile,
    journal_files,
    newest_file,
    read_journal_file,
)
from baccarat.controller.journal.records import Header, file_name, format_ts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat journal``."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="check journal files (exit 1 on a problem)")
    verify.add_argument(
        "file", metavar="PATH", type=Path,
        help="a shoe-NNNNNN.journal file, or the journal folder (every file in it)",
    )  # fmt: skip
    show = actions.add_parser("show", help="print a journal file's records")
    show.add_argument(
        "file", metavar="PATH", type=Path,
        help="a shoe-NNNNNN.journal file, or the journal folder (its newest file)",
    )  # fmt: skip
    form = show.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="one JSON object per record")
    form.add_argument("--replay", action="store_true", help="the replay notation, with @times")
    form.add_argument(
        "--messages", action="store_true", help="replay through the engine, print messages"
    )
    show.add_argument("--profile", help="profile for --messages (default: the header's)")
    show.add_argument("--decks", type=int, help="decks for --messages with --profile")


def run(args: argparse.Namespace) -> int:
    """Verify or show the path; 0 clean, 1 a problem in it, 2 unreadable or bad arguments."""
    if args.action == "verify" and args.file.is_dir():
        return verify_folder(args.file)
    try:
        found = read_journal_file(newest_file(args.file) if args.file.is_dir() else args.file)
    except (JournalError, FileNotFoundError) as exc:
        print(f"baccarat journal: {exc}", file=sys.stderr)
        return 2
    if args.action == "verify":
        return verify(found)
    if args.messages:
        status = print_messages(found, args.profile, args.decks)
    elif args.json:
        print_json(found)
        status = 0
    else:
        print_records(found, replay=args.replay)
        status = 0
    if found.problem is not None:
        print(f"{found.path}: {problem_text(found.problem)}", file=sys.stderr)
    return status or (1 if found.problem else 0)


# ---------------------------------------------------------------------- verify


def verify_folder(folder: Path) -> int:
    """Verify every journal file of ``folder``, oldest first; the worst exit status."""
    numbers = sorted(journal_files(folder))
    if not numbers:
        print(f"baccarat journal: no shoe-*.journal file in {folder}", file=sys.stderr)
        return 2
    status = 0
    for number in numbers:
        try:
            found = read_journal_file(folder / file_name(number))
        except JournalError as exc:
            print(f"baccarat journal: {exc}", file=sys.stderr)
            status = 2
            continue
        status = max(status, verify(found))
    damaged = "every file clean" if status == 0 else "not clean"
    print(f"{folder}: {len(numbers)} file(s), {damaged}")
    return status


def verify(found: JournalFile) -> int:
    """Print the verdict on one file; 0 when it is clean, 1 when it has a problem."""
    print(f"{found.path}: {found.size} bytes")
    if found.header is not None:
        print(f"  header: {header_text(found.header)}")
        print(f"  records: {records_text(found)}")
    if found.problem is None:
        print("  clean")
        return 0
    print(f"  problem: {problem_text(found.problem)}")
    return 1


def header_text(header: Header) -> str:
    """The header in one line: file number, counters, profile."""
    counters = " ".join(f"{k}={v}" for k, v in header.counters.items()) or "none (fresh)"
    profile = header.profile_name or "not recorded"
    return f"file {header.file}, counters {counters}, profile {profile}"


def records_text(found: JournalFile) -> str:
    """How many good records, and their numbers."""
    if not found.records:
        return "none"
    first, last = found.records[0][0], found.records[-1][0]
    return f"{len(found.records)} ({first}..{last})"


def problem_text(problem: Problem) -> str:
    """Where the first bad record is, what is wrong, and what recovery would cut."""
    text = f"at byte {problem.offset}: {problem.reason}; recovery would cut {problem.dropped} bytes"
    if problem.records_after:
        text += f", losing {problem.records_after} intact records after the bad one"
    if problem.dropped:
        text += f" ({problem.dropped_hex})"
    return text


# ---------------------------------------------------------------------- show


def iso_time(ts: float | None) -> str:
    """``ts`` (Unix seconds) as ISO 8601 UTC with microseconds, or ``-``."""
    if ts is None:
        return "-"
    try:
        moment = datetime.fromtimestamp(ts, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return format_ts(ts)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def print_records(found: JournalFile, *, replay: bool) -> None:
    """The header as a comment, then one line per record."""
    out = sys.stdout
    if found.header is not None:
        out.write(f"# {found.path.name}: {header_text(found.header)}\n")
    for number, inp in found.records:
        if replay:
            stamp = "" if inp.ts is None else f"@{format_ts(inp.ts)} "
            out.write(f"{stamp}{notation(inp)}  # record {number}\n")
        else:
            out.write(f"{number:>8}  {iso_time(inp.ts):<27}  {notation(inp)}\n")


def print_json(found: JournalFile) -> None:
    """One JSON object per record: record, ts, time, input."""
    out = sys.stdout
    for number, inp in found.records:
        body = {"record": number, "ts": inp.ts, "time": iso_time(inp.ts), "input": notation(inp)}
        out.write(json.dumps(body) + "\n")


def print_messages(found: JournalFile, profile_name: str | None, decks: int | None) -> int:
    """Replay the records through the engine; print each message as a JSON line.

    The engine resumes from the header's counters, so the numbers (``seq``, alarm ids,
    shoe) are the ones the daemon published. Refused inputs go to standard error.
    """
    if found.header is None:
        print(f"baccarat journal: {found.path}: no header, nothing to replay", file=sys.stderr)
        return 2
    try:
        profile = header_profile(found.header, profile_name, decks)
    except ValueError as exc:
        print(f"baccarat journal: {exc}", file=sys.stderr)
        return 2
    engine = Engine.resume(profile, found.header.counters)
    out = sys.stdout
    for number, inp in found.records:
        outcome = engine.feed(inp)
        if outcome.refused is not None:
            print(f"{found.path}: record {number}: refused: {outcome.refused}", file=sys.stderr)
        for message in outcome.messages:
            out.write(message.to_json() + "\n")
    return 0
