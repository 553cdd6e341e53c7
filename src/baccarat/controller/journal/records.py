"""The journal's format: file names, the header line, one record line per input.

A journal is a folder of append-only text files, one per shoe, whose names sort in order::

    shoe-000001.journal  shoe-000002.journal  ...

Each file opens with a header (one line, shown here on two) and then holds one record per
engine input::

    #journal {"version":1,"file":7,"first_record":1235,"counters":{...},"profile":{...},
             "table":"T05"} *3b9ac9ff
    1235 1718000000.123456 shoe 8 *0c4f1e2a
    1236 1718000001.500000/42@1a2b 4S *9e1d77b0
    1237 - void dealer dropped a card *5a0b3c71

A record is ``<record number> <ts>[/<frame>[@<session>]] <input> *<crc>``. The record
number counts up by one across files. ``ts`` is the input's time with 6 decimals (more if
that is what it takes to read back the same float, so a replay feeds the engine exactly
what it was fed), or ``-`` when the input had none; ``/<frame>`` is the device's frame
number, when the input came in a numbered frame, and ``@<session>`` the device's session
of that frame in 4 hex digits, when the host knew it (PROTOCOL.md 6.4; records written
before sessions were recorded have none). The input is its one-line notation (``notation(inp)``,
with ``by=<origin>`` in front for an operator's command or a dealer's button,
read back by ``parse_input``; a void is ``void`` when confirmed, as every void recorded
before confirmation existed was carried out, and ``void_unconfirmed`` when not, so old
journals replay as they were played). ``crc`` is the CRC-32 of the bytes before `` *``, in 8
lower-case hex digits. The header carries, as JSON, the number of the file's first
record, the engine's counters before that record (``Engine.counters()``) and the rule
profile, so that the newest file alone can be replayed after older ones were deleted,
and the id of the table whose daemon wrote it (``table``; files written before it was
recorded have none), so that a daemon given another table's folder refuses it, and the
device sessions seen up to the file's first record (``sessions``, oldest first, each in 4
hex digits as a record writes it, at most :data:`SESSIONS_KEPT`; none if there were none),
so that a replay of an earlier session is known for one after older files were deleted
(PROTOCOL.md 6.4), and the
table's chain head before the file's first record, signed by the table's key (``chain``,
docs/record.md: a replay of the file from it seals the same events again).
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from baccarat.controller.engine.inputs import Input, InputError, notation, parse_input
from baccarat.errors import BaccaratError

FORMAT_VERSION = 1
HEADER_TAG = b"#journal"
SESSIONS_KEPT = 1024
"""Device sessions a header carries at most, the newest
(``drivers.framed_sessions.SESSIONS_KEPT``)."""

Counters = dict[str, int]
Record = tuple[int, Input]
"""A record number and its input."""

FILE_NAME = re.compile(r"shoe-(\d{6,})\.journal")
_CRC_HEX = re.compile(rb"[0-9a-f]{8}")
_NUMBER = re.compile(rb"[0-9]+")
_SESSION = re.compile(rb"[0-9a-f]{4}")


class UnrecordableInputError(BaccaratError, ValueError):
    """An input whose notation would not read back as the same input (see :func:`as_recorded`)."""


class RecordError(BaccaratError, ValueError):
    """A line of a journal file that is not a valid record; the text says why."""


@dataclass(frozen=True, slots=True)
class Header:
    """The first line of a file: where its numbering starts and what replaying it needs."""

    file: int
    first_record: int
    counters: Counters
    profile: dict[str, Any] | None = None
    table: str | None = None
    """The table whose daemon wrote the file (``None``: not recorded, an older file)."""
    version: int = FORMAT_VERSION
    sessions: tuple[int, ...] = ()
    """The device sessions seen up to the file's first record, oldest first."""
    chain: dict[str, Any] | None = None
    """The table's chain head before the file's first record, signed (``baccarat.chain``;
    ``None``: written before events were chained)."""

    @property
    def profile_name(self) -> str | None:
        """The rule profile's name, if the header has a profile."""
        name = (self.profile or {}).get("name")
        return name if isinstance(name, str) else None


def file_name(number: int) -> str:
    """The name of journal file ``number``."""
    return f"shoe-{number:06d}.journal"


def as_recorded(inp: Input) -> Input:
    """The input as a replay of the journal will read it back (free text normalised).

    Feed the engine this, not the original, for inputs built from free text (a device
    report, a void reason): ``Journal.append`` refuses any input that differs from it.
    """
    recorded = parse_input(notation(inp), inp.ts)
    if inp.device_seq is None:
        return recorded
    return replace(recorded, device_seq=inp.device_seq, device_session=inp.device_session)


def encode_record(number: int, inp: Input) -> bytes:
    """One record line; :class:`UnrecordableInputError` if it would not read back the same."""
    text = notation(inp)
    if inp.ts is not None and not math.isfinite(inp.ts):
        raise UnrecordableInputError(f"{text!r}: ts {inp.ts!r} is no time")
    try:
        text.encode()
        same = parse_input(text, inp.ts) == replace(inp, device_seq=None)
    except (InputError, UnicodeEncodeError):
        same = False
    if not same:
        raise UnrecordableInputError(f"{text!r} would not read back as {inp!r}")
    ts = "-" if inp.ts is None else format_ts(inp.ts)
    if inp.device_seq is not None:
        ts += f"/{int(inp.device_seq)}"
        if inp.device_session is not None:
            ts += f"@{int(inp.device_session) & 0xFFFF:04x}"
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
    stamp, _, device = parts[1].partition(b"/")
    try:
        ts = None if stamp == b"-" else float(stamp)
        inp = parse_input(parts[2].decode("utf-8"), ts)
    except (ValueError, InputError) as exc:  # UnicodeDecodeError is a ValueError
        raise RecordError(f"not an input: {exc}") from None
    if not device:
        return int(parts[0]), inp
    frame, at, session = device.partition(b"@")
    if not _NUMBER.fullmatch(frame) or (at and not _SESSION.fullmatch(session)):
        shown = device[:20].decode("ascii", errors="replace")
        raise RecordError(f"not a device frame: {shown!r} (expected <frame>[@<session>])")
    device_session = int(session, 16) if at else None
    return int(parts[0]), replace(inp, device_seq=int(frame), device_session=device_session)


def encode_header(header: Header) -> bytes:
    """The header line of a file."""
    payload = {
        "version": header.version,
        "file": header.file,
        "first_record": header.first_record,
        "counters": header.counters,
        "profile": header.profile,
    }
    if header.table is not None:
        payload["table"] = header.table
    if header.sessions:  # fixed width: a header's size does not depend on the numbers
        payload["sessions"] = [f"{session & 0xFFFF:04x}" for session in header.sessions]
    if header.chain is not None:
        payload["chain"] = header.chain
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
    table, chain = payload.get("table"), payload.get("chain")
    if chain is not None and not isinstance(chain, dict):
        raise RecordError("header's chain is not an object")
    if profile is not None and not isinstance(profile, dict):
        raise RecordError("header's profile is not a table")
    if table is not None and not isinstance(table, str):
        raise RecordError("header's table is not a table id")
    sessions = _sessions(payload.get("sessions", []))
    if _is_count(file) and _is_count(first) and isinstance(counters, dict):
        try:
            return Header(file, first, checked_counters(counters), profile, table,
                          sessions=sessions, chain=chain)
        except ValueError as exc:
            raise RecordError(f"header: {exc}") from None
    raise RecordError("header lacks file, first_record or counters")


def _sessions(value: Any) -> tuple[int, ...]:
    """A header's device sessions; :class:`RecordError` unless a list of 4 hex digits each."""
    if not isinstance(value, list) or len(value) > SESSIONS_KEPT:
        raise RecordError(f"header's sessions are not a list of at most {SESSIONS_KEPT}")
    if not all(isinstance(s, str) and _SESSION.fullmatch(s.encode()) for s in value):
        raise RecordError("header's sessions are not sessions in 4 hex digits")
    return tuple(int(s, 16) for s in value)


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
