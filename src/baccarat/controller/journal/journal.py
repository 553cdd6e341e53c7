"""The journal: every engine input, durable before anything derived from it leaves.

State after a crash is the replay of the journal (invariant 2). The journal is a folder of
append-only text files, one per shoe, named so that they sort in order::

    shoe-000001.journal  shoe-000002.journal  ...

Each file opens with a header and then holds one record per engine input::

    #journal {"version":1,"file":7,"first_record":1235,"counters":{...},"profile":{...}} *3b9ac9ff
    1235 1718000000.123456 shoe 8 *0c4f1e2a
    1236 1718000001.500000 4S *9e1d77b0
    1237 - void dealer dropped a card *5a0b3c71

A record is ``<record number> <ts> <input> *<crc>``. The record number counts up by one
across files. ``ts`` is the input's time with 6 decimals (more if that is what it takes to
read back the same float, so a replay feeds the engine exactly what it was fed), or ``-``
when the input had none. The input is its one-line notation (``to_text()``, read back by
:func:`~baccarat.controller.engine.inputs.parse_input`). ``crc`` is the CRC-32 of the bytes
before `` *``, in 8 lower-case hex digits. The header carries, as JSON, the number of the
file's first record, the engine's counters before that record (``Engine.counters()``)
and the rule profile, so that the newest file alone can be replayed after older ones
were deleted (retention).

Rotation
--------
The daemon appends every input before the engine sees it, so only afterwards does it know
whether a ``shoe`` input started a shoe (the engine refuses one while a round is in
progress). Then it calls :meth:`Journal.rotate` with the counters from before that input:
the new file's first record repeats it, under the same record number::

    counters = engine.counters()
    journal.append(inp, wait=False)          # written, fdatasync started ...
    outcome = engine.feed(inp)
    queue(outcome.messages)                  # made ready, held back
    journal.settle()                         # ... durable
    release(outcome.messages)                # now they may leave
    if isinstance(inp, NewShoe) and outcome.refused is None:
        journal.rotate(counters, inp)        # header + the same record, then retention

(``append(inp)`` alone waits for the fdatasync itself.) A crash before the rotation is
complete leaves the shoe in the old file, whose replay starts it all the same; the shoe
then simply shares that file.

Recovery
--------
:meth:`Journal.open` reads the newest file and returns a :class:`Recovery`: its header's
counters (for ``Engine.resume``) and the inputs to replay. The file is cut at its first
bad record: a torn last record (no newline), a CRC mismatch, a line that is not a record,
a record out of sequence, an input that does not parse. Every record before it is kept,
the file is truncated there, and a :class:`Problem` says where and what, for an alarm.
A bad record in the middle is treated the same way: replaying the records after a missing
input would be a guess, so replay stops before it and the problem counts the intact
records that follow. Nothing is destroyed: when the dropped bytes are more than the
problem shows, or hold intact records, they are first saved beside the file as
``shoe-NNNNNN.journal.dropped-at-OFFSET``. A newest file without a valid header is set
aside whole under that name, and recovery falls back to the file before it.

Bad content never raises. :class:`JournalError` is raised only for I/O the daemon cannot
work around (a folder it cannot create or lock, a write or fdatasync that fails); after a
failed append the journal refuses any further one, and the daemon should restart.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import math
import os
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeGuard

from baccarat.controller.engine.inputs import DrawCard, Input, InputError, parse_input
from baccarat.controller.journal.datasync import InlineSync, Sync, make_sync

if TYPE_CHECKING:
    from baccarat.controller.config import JournalConfig
    from baccarat.rules.profiles import Profile

FORMAT_VERSION = 1
HEADER_TAG = b"#journal"
LOCK_NAME = ".lock"
DEFAULT_RETENTION = 200
HEX_SHOWN = 64
"""Bytes of a dropped tail a :class:`Problem` shows; longer tails are saved beside the file."""

Counters = dict[str, int]
Record = tuple[int, Input]

_FILE_NAME = re.compile(r"shoe-(\d{6,})\.journal")
_ANY_NAME = re.compile(r"shoe-(\d{6,})\.journal(\..*)?")
_CRC_HEX = re.compile(rb"[0-9a-f]{8}")
_NUMBER = re.compile(rb"[0-9]+")
_log = logging.getLogger(__name__)
_datasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


class JournalError(Exception):
    """The journal cannot be read or written (an I/O failure, not bad content)."""


class JournalLockedError(JournalError):
    """Another process holds the journal folder."""


class UnrecordableInputError(ValueError):
    """An input whose notation would not read back as the same input (see :func:`as_recorded`)."""


class RecordError(ValueError):
    """A line of a journal file that is not a valid record; the text says why."""


# ---------------------------------------------------------------------- the format


@dataclass(frozen=True, slots=True)
class Header:
    """The first line of a file: where its numbering starts and what replaying it needs."""

    file: int
    first_record: int
    counters: Counters
    profile: dict[str, Any] | None = None
    version: int = FORMAT_VERSION

    @property
    def profile_name(self) -> str | None:
        """The rule profile's name, if the header has a profile."""
        name = (self.profile or {}).get("name")
        return name if isinstance(name, str) else None


def file_name(number: int) -> str:
    """The name of journal file ``number``: names sort in the order of the files."""
    return f"shoe-{number:06d}.journal"


def as_recorded(inp: Input) -> Input:
    """The input as a replay of the journal will read it back (free text normalised).

    Feed the engine this, not the original, for inputs built from free text (a device
    report, a void reason): :meth:`Journal.append` refuses any input that differs from it.
    """
    recorded = parse_input(inp.to_text(), inp.ts)
    if inp.device_seq is None:
        return recorded
    return replace(recorded, device_seq=inp.device_seq)


def encode_record(number: int, inp: Input) -> bytes:
    """One record line; :class:`UnrecordableInputError` if it would not read back the same."""
    text = inp.to_text()
    ts = "-" if inp.ts is None else format_ts(inp.ts)
    if inp.device_seq is not None:
        ts += f"/{int(inp.device_seq)}"  # the device's frame number, after the time
    if type(inp) is DrawCard:  # a card's text is its canonical code: it always reads back
        if inp.ts is not None and not math.isfinite(inp.ts):
            raise UnrecordableInputError(f"{text!r}: ts {inp.ts!r} is no time")
    else:
        _check_recordable(text, inp)
    return _seal(f"{number} {ts} {text}".encode())


def format_ts(ts: float) -> str:
    """Six decimals, or the shortest text that reads back as the same float if that is more."""
    text = f"{ts:.6f}"
    return text if float(text) == ts else repr(float(ts))


def decode_record(line: bytes) -> Record:
    """The record number and input of one line without its newline; or :class:`RecordError`."""
    body = _unseal(line)
    parts = body.split(b" ", 2)
    if len(parts) != 3 or not _NUMBER.fullmatch(parts[0]):
        raise RecordError("not a record: expected '<number> <ts> <input>'")
    try:
        stamp, _, device = parts[1].partition(b"/")
        ts = None if stamp == b"-" else float(stamp)
        inp = parse_input(parts[2].decode("utf-8"), ts)
        if device:
            inp = replace(inp, device_seq=int(device))
        return int(parts[0]), inp
    except (ValueError, InputError) as exc:  # UnicodeDecodeError is a ValueError
        raise RecordError(f"not an input: {exc}") from None


def encode_header(header: Header) -> bytes:
    """The header line of a file."""
    payload = {
        "version": header.version,
        "file": header.file,
        "first_record": header.first_record,
        "counters": header.counters,
        "profile": header.profile,
    }
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=True)
    return _seal(HEADER_TAG + b" " + text.encode("ascii"))


def decode_header(line: bytes) -> Header:
    """The header of one line without its newline; or :class:`RecordError`."""
    body = _unseal(line)
    tag, _, text = body.partition(b" ")
    if tag != HEADER_TAG:
        raise RecordError(f"not a journal header: it does not start with {HEADER_TAG.decode()}")
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise RecordError(f"header is not JSON: {exc}") from None
    return _header_from(payload)


def _header_from(payload: Any) -> Header:
    if not isinstance(payload, dict) or payload.get("version") != FORMAT_VERSION:
        raise RecordError(f"header is not a version {FORMAT_VERSION} journal header")
    file, first = payload.get("file"), payload.get("first_record")
    counters, profile = payload.get("counters"), payload.get("profile")
    if profile is not None and not isinstance(profile, dict):
        raise RecordError("header's profile is not a table")
    if _is_count(file) and _is_count(first) and isinstance(counters, dict):
        try:
            return Header(file, first, checked_counters(counters), profile)
        except ValueError as exc:
            raise RecordError(f"header: {exc}") from None
    raise RecordError("header lacks file, first_record or counters")


def checked_counters(counters: Mapping[str, Any]) -> Counters:
    """A copy of ``counters``; ValueError unless each is a name and a whole number."""
    for key, value in counters.items():
        if not isinstance(key, str) or not _is_count(value):
            raise ValueError(f"counter {key!r} is not a whole number: {value!r}")
    return dict(counters)


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _seal(body: bytes) -> bytes:
    return b"%s *%08x\n" % (body, zlib.crc32(body))


def _unseal(line: bytes) -> bytes:
    body, star, crc = line.rpartition(b" *")
    if not star or not _CRC_HEX.fullmatch(crc):
        raise RecordError("no CRC at the end of the line")
    actual = zlib.crc32(body)
    if int(crc, 16) != actual:
        raise RecordError(
            f"CRC mismatch: the line says {crc.decode()}, its bytes give {actual:08x}"
        )
    return body


def _check_recordable(text: str, inp: Input) -> None:
    if inp.ts is not None and not math.isfinite(inp.ts):
        raise UnrecordableInputError(f"{text!r}: ts {inp.ts!r} is no time")
    try:
        text.encode()
        same = parse_input(text, inp.ts) == inp
    except (InputError, UnicodeEncodeError):
        same = False
    if not same:
        raise UnrecordableInputError(f"{text!r} would not read back as {inp!r}")


# ---------------------------------------------------------------------- reading a file


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
    """One journal file as read, unchanged: its header and good records up to a problem."""

    path: Path
    size: int
    header: Header | None
    records: list[Record]
    good_end: int
    problem: Problem | None


def read_journal_file(path: Path) -> JournalFile:
    """Read and verify one file without changing it; :class:`JournalError` if unreadable."""
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


# ---------------------------------------------------------------------- the journal


@dataclass(frozen=True, slots=True)
class Recovery:
    """What :meth:`Journal.open` found in the newest good file, and the problems on the way.

    Replay: ``Engine.resume(profile, recovery.counters)``, then feed ``inputs`` in order;
    raise an alarm for each of ``problems``.
    """

    file: Path | None
    header: Header | None
    records: list[Record]
    problems: list[Problem]

    @property
    def counters(self) -> Counters:
        """The engine's counters before the first input to replay (empty: a fresh engine)."""
        return dict(self.header.counters) if self.header else {}

    @property
    def inputs(self) -> list[Input]:
        """The inputs to replay, in order."""
        return [inp for _, inp in self.records]

    @property
    def last_device_seq(self) -> int | None:
        """The device frame number of the newest input that came with one."""
        for _, inp in reversed(self.records):
            if inp.device_seq is not None:
                return inp.device_seq
        return None

    @property
    def clean(self) -> bool:
        """True when nothing had to be dropped."""
        return not self.problems


class Journal:
    """The append-only, fdatasync'd log of engine inputs in one folder (see the module)."""

    def __init__(
        self,
        folder: Path,
        *,
        fsync: bool = True,
        retention: int = DEFAULT_RETENTION,
        profile: Profile | None = None,
        overlap: bool = False,
        sync: Sync | None = None,
    ) -> None:
        """A journal not yet opened. ``profile`` goes into each file's header.

        With ``overlap`` (and ``fsync``), a record's fdatasync runs in the kernel while
        the caller goes on, where the system can (:mod:`~baccarat.controller.journal.datasync`):
        see ``append(inp, wait=False)`` and :meth:`settle`. ``sync`` replaces the way
        records are flushed altogether (tests give it a disk that fails).
        """
        if retention < 1:
            raise ValueError("retention keeps at least one file")
        self.folder = Path(folder)
        self.fsync = fsync
        self.overlap = overlap
        self._given_sync = sync
        self._sync: Sync = InlineSync()
        self._unsettled: tuple[int, int] | None = None  # (record, file size before it)
        self.retention = retention
        self.profile = profile.model_dump(mode="json") if profile is not None else None
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._path: Path | None = None
        self._file_no = 0
        self._next_record = 1
        self._last: Record | None = None
        self._size = 0
        self._failed: str | None = None

    @classmethod
    def from_config(cls, config: JournalConfig, profile: Profile | None = None) -> Journal:
        """A journal with the daemon's settings (not yet opened)."""
        return cls(
            config.folder,
            fsync=config.fsync,
            retention=config.retention,
            profile=profile,
            overlap=config.sync == "overlap",
        )

    # ------------------------------------------------------------ opening and closing

    def open(self) -> Recovery:
        """Create and lock the folder, recover its newest file, and ready it for appends."""
        if self._lock_fd is not None:
            raise RuntimeError("the journal is already open")
        try:
            self._lock()
            recovery = self._recover()
        except BaseException:
            self.close()
            raise
        if self._given_sync is not None:
            self._sync = self._given_sync
        elif self.fsync and self.overlap:
            self._sync = make_sync()
        return recovery

    def close(self) -> None:
        """Close the current file and release the folder; closing twice is harmless.

        A record whose fdatasync is still running is waited for first; if that fails,
        the record is cut off and the failure logged (as :meth:`settle` would raise it).
        """
        try:
            self.settle()
        except JournalError as exc:
            _log.critical("journal: %s", exc)
        self._sync.close()
        self._sync = InlineSync()
        self._close_file()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> Path | None:
        """The file records go to; ``None`` before the first record of an empty journal."""
        return self._path

    @property
    def next_record(self) -> int:
        """The number the next appended record will have."""
        return self._next_record

    @property
    def sync_name(self) -> str:
        """How records are flushed: ``io_uring`` (overlapped) or ``inline``."""
        return self._sync.name

    @property
    def unsettled(self) -> bool:
        """True while the last record's fdatasync may still be running (see :meth:`settle`)."""
        return self._unsettled is not None

    # ------------------------------------------------------------ writing

    def append(self, inp: Input, *, wait: bool = True) -> int:
        """Write one input's record and fdatasync it; return its record number.

        With ``wait=False`` the fdatasync is only started: the record is durable when
        :meth:`settle` has returned, and nothing derived from it may leave before that.
        (Every other call of the journal settles first.)

        An empty journal starts its first file with empty counters (a fresh engine).
        Raise :class:`UnrecordableInputError`, writing nothing, for an input that
        :func:`as_recorded` would change, and :class:`JournalError` if the write fails.
        """
        self.settle()
        self._check_usable()
        number = self._next_record
        line = encode_record(number, inp)
        if self._fd is None:
            self._begin_file({}, number, line)
        else:
            self._append_line(self._fd, line, number)
        self._next_record = number + 1
        self._last = (number, inp)
        if wait:
            self.settle()
        return number

    def settle(self) -> None:
        """Until the fdatasync of the last record is done (at once if it is).

        If it failed, the record is cut off the file (it never happened: nothing derived
        from it may be published), the journal refuses further appends, and
        :class:`JournalError` is raised.
        """
        if self._unsettled is None:
            return
        number, size_before = self._unsettled
        self._unsettled = None
        try:
            self._sync.wait()
        except OSError as exc:
            self._size = size_before
            self._fail(f"cannot sync record {number} to {self._path}: {exc.strerror or exc}")
            raise JournalError(self._failed) from exc

    def rotate(self, counters: Mapping[str, int], inp: Input) -> Path | None:
        """Start the next file with ``inp``, the last input appended: a shoe that started.

        ``counters`` are the engine's from before ``inp``. The new file's header carries
        them, its first record repeats ``inp`` under the same number, and it appears with
        both or not at all; then the oldest files beyond the retention are deleted.
        Returns the new file, or ``None`` if it could not be created: the shoe then goes on
        in the current file, which replays just as well (the failure is logged).
        """
        self.settle()
        self._check_usable()
        if self._last is None or self._last[1] != inp:
            raise ValueError(f"rotate takes the last input appended, not {inp!r}")
        number = self._last[0]
        try:
            path = self._begin_file(checked_counters(counters), number, encode_record(number, inp))
        except JournalError as exc:
            _log.error("journal: no new file for the shoe, it goes on in %s: %s", self._path, exc)
            return None
        self._apply_retention()
        return path

    def _begin_file(self, counters: Counters, number: int, record: bytes) -> Path:
        file_no = self._file_no + 1
        header = encode_header(Header(file_no, number, counters, self.profile))
        path = self.folder / file_name(file_no)
        fd = self._create(path, header + record)
        self._close_file()
        self._fd, self._path, self._file_no = fd, path, file_no
        self._size = len(header) + len(record)
        return path

    def _append_line(self, fd: int, line: bytes, number: int) -> None:
        """Write the record and start its fdatasync (:meth:`settle` waits for it)."""
        try:
            _write_all(fd, line)
            if self.fsync:
                self._sync.start(fd)
                self._unsettled = (number, self._size)
        except OSError as exc:
            self._fail(f"cannot append record {number} to {self._path}: {exc.strerror or exc}")
            raise JournalError(self._failed) from exc
        self._size += len(line)

    def _write_line(self, fd: int, line: bytes) -> None:
        _write_all(fd, line)
        if self.fsync:
            _datasync(fd)

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise JournalError(f"the journal failed earlier: {self._failed}")
        if self._lock_fd is None:
            raise RuntimeError("the journal is not open: call open() first")

    def _fail(self, reason: str) -> None:
        """After a failed write: cut the file back to its last whole record, and stop."""
        self._failed = reason
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                _log.exception("journal: cannot cut %s back to %d bytes", self._path, self._size)

    def _create(self, path: Path, content: bytes) -> int:
        """Write the file under a temporary name, then rename it: never a headless file."""
        temporary = path.with_name(path.name + ".new")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
        try:
            fd = os.open(temporary, flags, 0o640)
        except OSError as exc:
            raise JournalError(f"cannot create {temporary}: {exc.strerror or exc}") from exc
        try:
            self._write_line(fd, content)
            os.rename(temporary, path)
            self._sync_folder()
        except OSError as exc:
            os.close(fd)
            temporary.unlink(missing_ok=True)
            raise JournalError(f"cannot create {path}: {exc.strerror or exc}") from exc
        return fd

    def _sync_folder(self) -> None:
        if not self.fsync:
            return
        fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _close_file(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _apply_retention(self) -> None:
        """Delete the oldest files, and what was saved beside them, beyond the retention."""
        numbers = sorted(journal_files(self.folder))
        for number in numbers[: max(0, len(numbers) - self.retention)]:
            for path in self.folder.glob(file_name(number) + "*"):
                try:
                    path.unlink()
                except OSError as exc:
                    _log.warning("journal: cannot delete %s: %s", path, exc.strerror or exc)

    # ------------------------------------------------------------ recovery

    def _lock(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock_fd = os.open(
                self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640
            )
        except OSError as exc:
            raise JournalError(f"cannot open journal {self.folder}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JournalLockedError(
                f"journal {self.folder} is in use by another process"
            ) from None

    def _recover(self) -> Recovery:
        try:
            return self._recover_files()
        except OSError as exc:
            raise JournalError(f"cannot recover {self.folder}: {exc.strerror or exc}") from exc

    def _recover_files(self) -> Recovery:
        """Resume the newest file with a good header, its bad tail cut; set aside the rest."""
        for unfinished in self.folder.glob("shoe-*.journal.new"):
            unfinished.unlink()  # a rotation that never completed was never in effect
        self._file_no = max(_all_numbers(self.folder), default=0)
        problems: list[Problem] = []
        for number in sorted(journal_files(self.folder), reverse=True):
            path = self.folder / file_name(number)
            data = path.read_bytes()
            found = scan(data, path)
            if found.header is None:
                assert found.problem is not None
                problems.append(self._set_aside(path, found.problem))
                continue
            self._resume(found, found.header)
            if found.problem is not None:
                problems.append(self._cut_tail(found.problem, found.good_end, data))
            return Recovery(path, found.header, found.records, problems)
        return Recovery(None, None, [], problems)

    def _set_aside(self, path: Path, problem: Problem) -> Problem:
        """A file without a valid header: keep its bytes under another name."""
        aside = _free_name(path, 0)
        os.rename(path, aside)
        self._sync_folder()
        return replace(problem, saved_to=aside)

    def _resume(self, found: JournalFile, header: Header) -> None:
        self._fd = os.open(found.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        self._path, self._size = found.path, found.good_end
        self._next_record = header.first_record + len(found.records)
        self._last = found.records[-1] if found.records else None

    def _cut_tail(self, problem: Problem, good_end: int, data: bytes) -> Problem:
        """Save what the problem cannot show, then truncate the file at the bad record."""
        assert self._fd is not None
        saved: Path | None = None
        if problem.records_after or problem.dropped > HEX_SHOWN:
            saved = _free_name(problem.file, problem.offset)
            _write_new_file(saved, data[problem.offset :], sync=self.fsync)
        os.ftruncate(self._fd, good_end)
        if self.fsync:
            os.fsync(self._fd)
            self._sync_folder()
        return replace(problem, saved_to=saved)


def _write_all(fd: int, line: bytes) -> None:
    written = os.write(fd, line)
    if written != len(line):
        raise OSError(errno.EIO, f"short write: {written} of {len(line)} bytes")


def journal_files(folder: Path) -> list[int]:
    """The numbers of the journal files in ``folder`` (not of files saved beside them)."""
    return [int(m.group(1)) for p in folder.iterdir() if (m := _FILE_NAME.fullmatch(p.name))]


def _all_numbers(folder: Path) -> list[int]:
    return [int(m.group(1)) for p in folder.iterdir() if (m := _ANY_NAME.fullmatch(p.name))]


def _free_name(path: Path, offset: int) -> Path:
    """``<file>.dropped-at-<offset>``, with a copy number if that name is taken."""
    candidate = path.with_name(f"{path.name}.dropped-at-{offset}")
    copy = 1
    while candidate.exists():
        copy += 1
        candidate = path.with_name(f"{path.name}.dropped-at-{offset}.{copy}")
    return candidate


def _write_new_file(path: Path, data: bytes, *, sync: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o640)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
