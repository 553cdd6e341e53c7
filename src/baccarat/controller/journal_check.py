"""``baccarat verify --journal``: a table's journal checked against its signed chain heads.

The journal holds inputs, not messages: the messages are made again by replay, each file
from its header (as recovery does), and hashed into the chain as the daemon sealed them
(:func:`baccarat.chain.next_link`; no private key is needed to hash). What the table
signed is the chain head: before each file's first record (in the file's header) and the
newest one (``chain`` beside the journal, written with the ``published`` cursor). Each
signed head must verify under the table's key and equal the head the replay reaches at
its seq; an edited input, a record taken out or put in, a changed header or a file taken
out makes the replay's head differ from the next signed head (docs/record.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from baccarat.chain import ChainError, Head, Keys, check_head, next_link
from baccarat.controller.engine.engine import Engine
from baccarat.controller.journal.reader import header_profile, journal_files, read_journal_file
from baccarat.controller.journal.records import Header, file_name
from baccarat.controller.signing import CHAIN_FILE
from baccarat.errors import BaccaratError


class JournalCheckError(BaccaratError):
    """A journal that cannot be checked at all (no files, another table, no key)."""


@dataclass(slots=True)
class JournalReport:
    """What the check found: counts, the first break (``None``: intact)."""

    table: str | None = None
    files: int = 0
    inputs: int = 0
    events: int = 0
    heads: int = 0
    """Signed heads checked (headers and the ``chain`` file)."""
    unsigned_after: int | None = None
    """The seq of the newest signed head, when events after it are not covered."""
    last_seq: int = 0
    broken: str | None = None
    notes: list[str] = field(default_factory=list)


def verify_journal(folder: Path, keys: Keys, table: str | None = None) -> JournalReport:
    """Check every file of a journal folder in order; the report names the first break."""
    numbers = sorted(journal_files(folder))
    if not numbers:
        raise JournalCheckError(f"{folder} holds no journal file (shoe-NNNNNN.journal)")
    report = JournalReport(files=len(numbers))
    hashes: dict[int, bytes] = {}
    records: set[int] = set()
    head: Head | None = None
    key = ""
    for number in numbers:
        path = folder / file_name(number)
        found = read_journal_file(path)
        header = found.header
        if header is None:
            report.broken = f"{path.name}: no valid header ({found.problem})"
            return report
        owner = _table_of(header, path, table, report)
        if header.chain is None:
            report.broken = f"{path.name}: its header carries no signed chain head"
            return report
        try:
            signed = check_head(header.chain, owner, keys)
        except ChainError as exc:
            raise JournalCheckError(f"{path.name}: the header's chain head: {exc}") from None
        report.heads += 1
        key = str(header.chain["key"])
        # the file starts with the input that ended the file before (a new shoe): its head
        # is the one before that input's messages, which the replay passed already
        if head is not None and hashes.get(signed.seq) != signed.hash:
            report.broken = _mismatch(path.name, "header", signed, head, hashes)
            return report
        head = signed
        hashes.setdefault(head.seq, head.hash)
        engine = Engine.resume(header_profile(header), header.counters)
        for number_, inp in found.records:
            records.add(number_)
            for message in engine.feed(inp).messages:
                _, head = next_link(owner, head, message.seq, message.to_bytes(), key)
                hashes[message.seq] = head.hash
        if found.problem is not None:
            report.notes.append(f"{path.name}: {found.problem}")
    assert head is not None
    assert report.table is not None
    report.last_seq = head.seq
    report.inputs, report.events = len(records), len([s for s in hashes if s > 0])
    newest = folder / CHAIN_FILE
    try:
        value = json.loads(newest.read_text(encoding="utf-8"))
        signed = check_head(value, report.table, keys)
    except FileNotFoundError:
        report.unsigned_after = None
        report.notes.append(f"no {CHAIN_FILE} file: the newest file's records are covered by "
                            "no signed head")
        return report
    except (OSError, ValueError, ChainError) as exc:
        report.broken = f"{CHAIN_FILE}: {exc}"
        return report
    report.heads += 1
    if hashes.get(signed.seq) != signed.hash:
        report.broken = _mismatch(CHAIN_FILE, "file", signed, head, hashes)
    elif signed.seq < head.seq:
        report.unsigned_after = signed.seq
    return report


def _table_of(header: Header, path: Path, wanted: str | None, report: JournalReport) -> str:
    owner = header.table
    if owner is None:
        raise JournalCheckError(f"{path.name}: its header names no table (an older journal)")
    if wanted is not None and owner != wanted:
        raise JournalCheckError(f"{path.name} is table {owner}'s journal, not {wanted}'s")
    if report.table is not None and owner != report.table:
        raise JournalCheckError(f"{path.name} is table {owner}'s, the files before it are "
                                f"table {report.table}'s")
    report.table = owner
    return owner


def _mismatch(
    where: str, what: str, signed: Head, replayed: Head, hashes: dict[int, bytes]
) -> str:
    if signed.seq in hashes:
        found = "reaches another hash at that seq"
    else:
        found = f"never reaches that seq (it ends at seq {replayed.seq})"
    return (f"{where}: the {what} signs the chain head at seq {signed.seq}; the replay of "
            f"the records before it {found}: a record was changed, taken out or put in, or "
            "a file is missing")
