"""The journal writer: every engine input on disk, fdatasync'd, before the engine sees it.

State after a crash is the replay of the journal (docs/design.md, invariant 2).
:meth:`Journal.append` writes one record and returns once ``fdatasync`` has; the file
format is :mod:`~baccarat.controller.journal.records`.

Rotation
--------
The daemon appends every input before the engine sees it, so only afterwards does it know
whether a ``shoe`` input started a shoe (the engine refuses one while a round is in
progress). Then it calls :meth:`Journal.rotate` with the counters from before that input:
the new file's first record repeats it, under the same record number::

    counters = engine.counters()
    journal.append(inp)                      # durable
    outcome = engine.feed(inp)
    if isinstance(inp, NewShoe) and outcome.refused is None:
        journal.rotate(counters, inp)        # header + the same record, then retention

A crash before the rotation is complete leaves the shoe in the old file, whose replay
starts it all the same. Recovery reads the newest file, so once the new file has its name
every later record goes there; if the folder cannot be flushed after that rename, recovery
may find either file, and both end with the shoe: the journal then refuses every later
append, so that no record lands in a file recovery would not read.

Recovery
--------
:meth:`Journal.open` reads the newest file and returns a :class:`Recovery`: its header's
counters (for ``Engine.resume``) and the inputs to replay. The file is cut at its first
bad record (:mod:`~baccarat.controller.journal.reader`); every record before it is kept,
and a :class:`~baccarat.controller.journal.reader.Problem` says where and what, for an
alarm. Nothing is destroyed: when the dropped bytes are more than the problem shows, or
hold intact records, they are first saved beside the file as
``shoe-NNNNNN.journal.dropped-at-OFFSET``. A newest file without a valid header is set
aside whole under that name, and recovery falls back to the file before it. Older files are
never changed; those that still hold inputs of messages the broker has not acknowledged
are read by :func:`~baccarat.controller.journal.reader.backlog` and replayed by
:mod:`baccarat.controller.recovery`.

:class:`JournalError` is raised only for I/O the daemon cannot work around (a folder it
cannot create or lock, a write or fdatasync that fails, a folder it cannot flush after a
rotation's rename); after a failed append the record is cut off again, the journal
refuses any further append, and the daemon stops.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from baccarat.controller.engine.inputs import Input
from baccarat.controller.journal.reader import (
    HEX_SHOWN,
    JournalError,
    JournalFile,
    Problem,
    journal_files,
    scan,
)
from baccarat.controller.journal.records import (
    SESSIONS_KEPT,
    Counters,
    Header,
    Record,
    checked_counters,
    encode_header,
    encode_record,
    file_name,
)

if TYPE_CHECKING:
    from baccarat.controller.config import JournalConfig
    from baccarat.rules.profiles import Profile

LOCK_NAME = ".lock"
PROBE_NAME = ".write-probe"
PROBE_SIZE = 8192
"""Bytes :meth:`Journal.prove_writable` writes: two pages, room for a new file's header
(about 7.8 kB at most with a built-in profile, 7.2 kB of them the 1,024 device sessions
it may carry) and its first records."""
DEFAULT_RETENTION = 200

_ANY_NAME = re.compile(r"shoe-(\d{6,})\.journal(\..*)?")
_log = logging.getLogger(__name__)


class JournalLockedError(JournalError):
    """Another process holds the journal folder."""


class JournalTableError(JournalError):
    """The journal's newest file was written by another table's daemon."""


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
    def last_device_session(self) -> int | None:
        """The device's session of that frame (``None``: none, or not recorded with it)."""
        for _, inp in reversed(self.records):
            if inp.device_seq is not None:
                return inp.device_session
        return None

    @property
    def clean(self) -> bool:
        """True when nothing had to be dropped."""
        return not self.problems


class Journal:
    """The append-only, fdatasync'd log of engine inputs in one folder."""

    def __init__(
        self,
        folder: Path,
        *,
        fsync: bool = True,
        retention: int = DEFAULT_RETENTION,
        profile: Profile | None = None,
        datasync: Callable[[int], None] = os.fdatasync,
        folder_sync: Callable[[int], None] = os.fsync,
        table: str | None = None,
    ) -> None:
        """A journal not yet opened.

        Args:
            folder: where the files go; created if missing.
            fsync: flush every record before :meth:`append` returns (off only in tests).
            retention: how many files to keep.
            profile: the rule profile, written into each file's header.
            datasync: what flushes a file's written bytes (tests give a disk that fails).
            folder_sync: what flushes the folder's entries, given the folder's descriptor
                (tests give a disk that fails).
            table: the table's id, written into each file's header; :meth:`open` refuses
                a journal whose newest file names another.
        """
        if retention < 1:
            raise ValueError("retention keeps at least one file")
        self.folder = Path(folder)
        self.fsync = fsync
        self.retention = retention
        self.profile = profile.model_dump(mode="json") if profile is not None else None
        self._datasync = datasync
        self._folder_sync = folder_sync
        self.table = table
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._path: Path | None = None
        self._file_no = 0
        self._next_record = 1
        self._last: Record | None = None
        self._size = 0
        self._failed: str | None = None
        self._sessions: dict[int, None] = {}  # the device sessions seen, oldest first
        self.chain_head: Callable[[], dict[str, Any] | None] = lambda: None
        """The table's signed chain head now, for the header of a journal's first file."""

    @classmethod
    def from_config(
        cls,
        config: JournalConfig,
        profile: Profile | None = None,
        datasync: Callable[[int], None] = os.fdatasync,
        table: str | None = None,
    ) -> Journal:
        """A journal with the daemon's settings (not yet opened)."""
        return cls(
            config.folder, fsync=config.fsync, retention=config.retention, profile=profile,
            datasync=datasync, table=table,
        )

    # ------------------------------------------------------------ opening and closing

    def open(self) -> Recovery:
        """Create and lock the folder, recover its newest file, and ready it for appends."""
        if self._lock_fd is not None:
            raise RuntimeError("the journal is already open")
        try:
            self._lock()
            return self._recover()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the current file and release the folder; closing twice is harmless."""
        self._close_file()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def prove_writable(self) -> None:
        """Write and flush :data:`PROBE_SIZE` bytes in the folder, then delete them.

        :class:`JournalError` if that fails (a disk full, read-only or failing): the daemon
        calls this before it opens the device, so that no event is read from a device
        (a line shoe cannot send it again) by a daemon whose journal cannot hold it.
        """
        self._check_usable()
        path = self.folder / PROBE_NAME
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o640)
            try:
                self._write_durably(fd, bytes(PROBE_SIZE))
            finally:
                os.close(fd)
        except OSError as exc:
            raise JournalError(
                f"cannot write to journal {self.folder} ({PROBE_NAME}, {PROBE_SIZE} bytes):"
                f" {exc.strerror or exc}"
            ) from exc
        finally:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

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
    def device_sessions(self) -> list[int]:
        """Every device session the journal's records name, oldest first.

        The newest :data:`~baccarat.controller.journal.records.SESSIONS_KEPT`, those of
        deleted files too: each file's header carries those seen up to its first record.
        """
        return list(self._sessions)

    def _note_session(self, inp: Input) -> None:
        session = inp.device_session
        if session is None:
            return
        session = int(session) & 0xFFFF
        self._sessions.pop(session, None)
        self._sessions[session] = None
        while len(self._sessions) > SESSIONS_KEPT:
            del self._sessions[next(iter(self._sessions))]

    @property
    def next_record(self) -> int:
        """The number the next appended record will have."""
        return self._next_record

    # ------------------------------------------------------------ writing

    def append(self, inp: Input) -> int:
        """Write one input's record and fdatasync it; return its record number.

        An empty journal starts its first file with empty counters (a fresh engine).
        Raise ``UnrecordableInputError``, writing nothing, for an input that
        ``as_recorded`` would change, and :class:`JournalError` if the write or the
        flush fails: the record is then cut off again, and every later append refused.
        """
        self._check_usable()
        number = self._next_record
        line = encode_record(number, inp)
        if self._fd is None:
            self._begin_file({}, number, line, self.chain_head())
        else:
            self._append_line(self._fd, line, number)
        self._next_record = number + 1
        self._last = (number, inp)
        self._note_session(inp)
        return number

    def rotate(
        self, counters: Mapping[str, int], inp: Input, chain: dict[str, Any] | None = None
    ) -> Path | None:
        """Start the next file with ``inp``, the last input appended: a shoe that started.

        ``counters`` are the engine's from before ``inp``, ``chain`` the table's signed
        chain head then. The new file's header carries them, its first record repeats
        ``inp`` under the same number, and it appears with both or not at all; then the
        oldest files beyond the retention are deleted.
        Returns the new file, or ``None`` if it could not be created: the shoe then goes on
        in the current file, which replays just as well (the failure is logged). Raise
        :class:`JournalError` if the new file is in the folder but the folder could not be
        flushed: recovery may then read either file, so the journal refuses every later
        append (each file holds every record appended so far) and the daemon stops.
        """
        self._check_usable()
        if self._last is None or self._last[1] != inp:
            raise ValueError(f"rotate takes the last input appended, not {inp!r}")
        number = self._last[0]
        try:
            path = self._begin_file(
                checked_counters(counters), number, encode_record(number, inp), chain
            )
        except JournalError as exc:
            if self._failed is not None:
                raise
            _log.error("journal: no new file for the shoe, it goes on in %s: %s", self._path, exc)
            return None
        self._apply_retention()
        return path

    def _begin_file(
        self, counters: Counters, number: int, record: bytes, chain: dict[str, Any] | None
    ) -> Path:
        file_no = self._file_no + 1
        header = encode_header(Header(
            file_no, number, counters, self.profile, self.table,
            sessions=tuple(self._sessions), chain=chain,
        ))
        path = self.folder / file_name(file_no)
        fd = self._create(path, header + record)
        self._close_file()
        self._fd, self._path, self._file_no = fd, path, file_no
        self._size = len(header) + len(record)
        return path

    def _append_line(self, fd: int, line: bytes, number: int) -> None:
        try:
            self._write_durably(fd, line)
        except OSError as exc:
            self._fail(f"cannot append record {number} to {self._path}: {exc.strerror or exc}")
            raise JournalError(self._failed) from exc
        self._size += len(line)

    def _write_durably(self, fd: int, data: bytes) -> None:
        """Write all of ``data`` (a short write goes on, to name the error), then flush."""
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written == 0:
                raise OSError(errno.EIO, f"nothing written of {len(view)} bytes")
            view = view[written:]
        if self.fsync:
            self._datasync(fd)

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise JournalError(f"the journal failed earlier: {self._failed}")
        if self._lock_fd is None:
            raise RuntimeError("the journal is not open: call open() first")

    def _fail(self, reason: str) -> None:
        """After a failed write: cut the file back to its last whole record, and stop.

        If the file cannot be cut (a read-only disk), recovery cuts the torn record later;
        the reason says so.
        """
        self._failed = reason
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError as exc:
                self._failed = (
                    f"{reason} (and it cannot be cut back to {self._size} bytes: "
                    f"{exc.strerror or exc}; recovery will)"
                )

    def _create(self, path: Path, content: bytes) -> int:
        """Write the file under a temporary name, then rename it: never a headless file.

        Until the rename, a failure leaves the journal as it was (recovery deletes a
        ``.new`` file). From the rename on, the new file is what recovery reads, so a
        folder that cannot be flushed after it fails the journal (:meth:`_fail`): no
        append may land in a file that recovery will not read.
        """
        temporary = path.with_name(path.name + ".new")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
        try:
            fd = os.open(temporary, flags, 0o640)
        except OSError as exc:
            raise JournalError(f"cannot create {temporary}: {exc.strerror or exc}") from exc
        try:
            self._write_durably(fd, content)
            os.rename(temporary, path)
        except OSError as exc:
            os.close(fd)
            with contextlib.suppress(OSError):  # recovery deletes it if it stays
                temporary.unlink(missing_ok=True)
            raise JournalError(f"cannot create {path}: {exc.strerror or exc}") from exc
        try:
            self._sync_folder()
        except OSError as exc:
            os.close(fd)
            self._fail(f"{path} was created but {self.folder} cannot be flushed: "
                       f"{exc.strerror or exc}")
            raise JournalError(self._failed) from exc
        return fd

    def _sync_folder(self) -> None:
        """Flush the folder's entries (a rename, a new file), if fsync is on."""
        if not self.fsync:
            return
        fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            self._folder_sync(fd)
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
            self._check_table(path, found.header)
            self._resume(found, found.header)
            if found.problem is not None:
                problems.append(self._cut_tail(found.problem, found.good_end, data))
            return Recovery(path, found.header, found.records, problems)
        return Recovery(None, None, [], problems)

    def _check_table(self, path: Path, header: Header) -> None:
        """:class:`JournalTableError` if ``path`` was written for another table."""
        if self.table is None or header.table in (None, self.table):
            return
        raise JournalTableError(
            f"journal {self.folder} belongs to table {header.table} ({path.name} says so),"
            f" not to {self.table}: the configuration names another table's journal folder"
        )

    def _set_aside(self, path: Path, problem: Problem) -> Problem:
        """A file without a valid header: keep its bytes under another name."""
        aside = _free_name(path, 0)
        os.rename(path, aside)
        self._sync_folder()
        return replace(problem, saved_to=aside)

    def _resume(self, found: JournalFile, header: Header) -> None:
        self._sessions = dict.fromkeys(header.sessions)
        for _, inp in found.records:
            self._note_session(inp)
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
