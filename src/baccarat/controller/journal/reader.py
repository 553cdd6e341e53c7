"""Reading journal files without changing them: verification, listing, the newest shoe.

:func:`scan` verifies a file's bytes: its header, then its records up to the first bad
one, which is described by a :class:`Problem`: a torn last record (no newline), a CRC
mismatch, a line that is not a record, a record out of sequence, an input that does not
parse. Everything after the first bad record is left out, even intact records: replaying
them after a missing input would be a guess. Bad content never raises.

:func:`backlog` finds the files before the newest that a restart must replay too, because
the broker had not acknowledged all the messages their inputs gave.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from baccarat.controller.journal.records import (
    FILE_NAME,
    Counters,
    Header,
    Record,
    RecordError,
    decode_header,
    decode_record,
    file_name,
)
from baccarat.errors import BaccaratError
from baccarat.rules.profiles import Profile, load_profile

HEX_SHOWN = 64
"""Bytes of a dropped tail a :class:`Problem` shows; recovery saves longer tails to a file."""


class JournalError(BaccaratError):
    """The journal cannot be read or written (an I/O failure, not bad content)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """The first bad record of a journal file, and what recovery drops because of it.

    ``offset`` is the byte where the bad record starts; ``dropped`` counts the bytes from
    there to the end, ``dropped_hex`` shows them (abbreviated); ``records_after`` counts
    the intact records among them after the bad one; ``saved_to`` is the file recovery
    saved them to, if it did.
    """

    file: Path
    offset: int
    reason: str
    dropped: int
    dropped_hex: str
    records_after: int = 0
    saved_to: Path | None = None

    def __str__(self) -> str:
        """One line for an alarm or a log (single spaces, no '#': it is journaled as is)."""
        text = f"{self.file.name}: byte {self.offset}: {self.reason}; {self.dropped} bytes"
        text += f" dropped ({self.dropped_hex})" if self.dropped else " dropped"
        if self.records_after:
            text += f", with {self.records_after} intact records after the bad one"
        if self.saved_to is not None:
            text += f", saved in {self.saved_to.name}"
        return " ".join(text.replace("#", " ").split())


@dataclass(frozen=True, slots=True)
class JournalFile:
    """One journal file as read: its header and good records, up to its first problem."""

    path: Path
    size: int
    header: Header | None
    records: list[Record]
    good_end: int
    problem: Problem | None


def read_journal_file(path: Path) -> JournalFile:
    """Read and verify one file; :class:`JournalError` if it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return scan(data, path)


def scan(data: bytes, path: Path) -> JournalFile:
    """Verify the bytes of a journal file: its header, then records up to the first bad one."""
    end = data.find(b"\n")
    if end < 0:
        reason = "empty file: no header" if not data else "torn header: no newline"
        return _cut(data, path, None, [], offset=0, reason=reason)
    try:
        header = decode_header(data[:end])
    except RecordError as exc:
        return _cut(data, path, None, [], offset=0, reason=f"bad header: {exc}")
    records: list[Record] = []
    pos = end + 1
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            reason = "torn record: no newline at the end"
            return _cut(data, path, header, records, offset=pos, reason=reason)
        try:
            number, inp = decode_record(data[pos:end])
        except RecordError as exc:
            return _cut(data, path, header, records, offset=pos, reason=str(exc))
        due = header.first_record + len(records)
        if number != due:
            reason = f"record {number} where {due} is due"
            return _cut(data, path, header, records, offset=pos, reason=reason)
        records.append((number, inp))
        pos = end + 1
    return JournalFile(path, len(data), header, records, pos, None)


def _cut(
    data: bytes,
    path: Path,
    header: Header | None,
    records: list[Record],
    *,
    offset: int,
    reason: str,
) -> JournalFile:
    dropped = data[offset:]
    problem = Problem(
        file=path,
        offset=offset,
        reason=reason,
        dropped=len(dropped),
        dropped_hex=abbreviated_hex(dropped),
        records_after=_intact_records_after(dropped),
    )
    return JournalFile(path, len(data), header, records, offset, problem)


def abbreviated_hex(data: bytes, limit: int = HEX_SHOWN) -> str:
    """``data`` as spaced hex, cut after ``limit`` bytes with a note of how many more."""
    if len(data) <= limit:
        return data.hex(" ")
    return f"{data[:limit].hex(' ')} ... (+{len(data) - limit} bytes)"


def _intact_records_after(dropped: bytes) -> int:
    """Lines after the first (the bad record) that are intact records by themselves."""
    count = 0
    for line in dropped.split(b"\n")[1:-1]:  # the last piece has no newline: not intact
        try:
            decode_record(line)
        except RecordError:
            continue
        count += 1
    return count


@dataclass(frozen=True, slots=True)
class Backlog:
    """Files before the newest whose messages the broker may not have, oldest first.

    Each of ``files`` holds only the records before the next file's first (a rotation
    repeats the new shoe's record there); ``ends`` are the next files' header counters:
    the engine's after each of ``files``. ``missing`` says why the files stop short of
    the cursor (a file deleted by retention, unreadable or headless), else ``None``.
    """

    files: list[JournalFile]
    ends: list[Counters]
    missing: str | None = None


def backlog(folder: Path, newest: Header, published: int) -> Backlog:
    """The files before ``newest`` that hold inputs of messages after ``published``.

    ``published`` is the ``seq`` of the last message the broker acknowledged. A file's
    messages come after its header's ``seq`` counter, so the files are read from the
    newest back to the first whose header is at or before ``published``.
    """
    files: list[JournalFile] = []
    ends: list[Counters] = []
    later = newest
    while later.counters.get("seq", 0) > published:
        path = folder / file_name(later.file - 1)
        found = _older_file(path)
        if isinstance(found, str):
            return Backlog(files, ends, found)
        assert found.header is not None
        kept = [record for record in found.records if record[0] < later.first_record]
        files.insert(0, replace(found, records=kept))
        ends.insert(0, later.counters)
        later = found.header
    return Backlog(files, ends)


def _older_file(path: Path) -> JournalFile | str:
    """The file as read, or why it cannot be replayed."""
    if not path.exists():
        return f"{path.name} is gone (retention, or set aside)"
    try:
        found = read_journal_file(path)
    except JournalError as exc:
        return str(exc)
    if found.header is None:
        return f"{path.name} has no valid header"
    return found


def journal_files(folder: Path) -> list[int]:
    """The numbers of the journal files in ``folder`` (not of files saved beside them)."""
    return [int(m.group(1)) for p in folder.iterdir() if (m := FILE_NAME.fullmatch(p.name))]


def newest_file(path: Path) -> Path:
    """``path`` if it is a file, else the newest journal file in that folder.

    Raise FileNotFoundError if there is none.
    """
    if path.is_dir():
        numbers = journal_files(path)
        if not numbers:
            raise FileNotFoundError(f"no shoe-*.journal file in {path}")
        return path / file_name(max(numbers))
    if not path.is_file():
        raise FileNotFoundError(f"no such journal: {path}")
    return path


def header_profile(header: Header, name: str | None = None, decks: int | None = None) -> Profile:
    """The profile named (a command-line choice), else the one the header recorded.

    ``decks``, if given, replaces the profile's. ValueError if the header records no
    profile and none is named, or the profile is not valid.
    """
    if name is not None:
        return load_profile(name, decks=decks)
    if header.profile is None:
        raise ValueError("the header records no profile: give --profile")
    profile = Profile.model_validate(header.profile)
    return profile if decks is None else profile.model_copy(update={"decks": decks})
