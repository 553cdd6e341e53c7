"""The journal remembers every device session its records name, across files (PROTOCOL.md 6.4).

Each file's header carries the sessions seen up to its first record, so a restart knows
them all after retention deleted the files where they came; a header's list is hostile
input like the rest of the file: a bad one is a bad header.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from pathlib import Path

import pytest

from baccarat.controller.engine.inputs import DeviceReport, NewShoe, OpenRound
from baccarat.controller.journal.records import (
    SESSIONS_KEPT,
    Header,
    RecordError,
    decode_header,
    encode_header,
)
from baccarat.controller.journal.writer import Journal


def hello(session: int, frame: int = 0) -> DeviceReport:
    report = DeviceReport("hello", f"protocol version 2, session 0x{session:04x}", ts=1.0)
    return dataclasses.replace(report, device_seq=frame, device_session=session)


def shoe_from_device(session: int, frame: int) -> NewShoe:
    return dataclasses.replace(NewShoe(ts=2.0), device_seq=frame, device_session=session)


def test_sessions_survive_rotation_retention_and_a_restart(tmp_path: Path) -> None:
    journal = Journal(tmp_path, fsync=False, retention=2)
    journal.open()
    for shoe, session in enumerate((0x0101, 0x0202, 0x0303, 0x0404)):
        journal.append(hello(session))
        inp = shoe_from_device(session, 1)
        journal.append(inp)
        journal.rotate({"shoe": shoe}, inp)
    journal.append(OpenRound())  # no device frame: names no session
    assert journal.device_sessions == [0x0101, 0x0202, 0x0303, 0x0404]
    journal.close()
    assert len(list(tmp_path.glob("shoe-*.journal"))) == 2  # the first shoes' files are gone
    again = Journal(tmp_path, fsync=False)
    recovery = again.open()
    again.close()
    assert recovery.header is not None
    assert again.device_sessions == [0x0101, 0x0202, 0x0303, 0x0404]


def test_a_session_seen_again_becomes_the_newest_and_the_oldest_go_beyond_the_bound(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path, fsync=False)
    journal.open()
    for session in [*range(SESSIONS_KEPT + 5), 3]:
        journal.append(hello(session))
    sessions = journal.device_sessions
    journal.close()
    assert len(sessions) == SESSIONS_KEPT
    assert sessions[-1] == 3
    assert sessions[0] == 6


def test_a_header_without_sessions_reads_as_none_and_one_with_them_round_trips() -> None:
    plain = Header(1, 1, {})
    assert b"sessions" not in encode_header(plain)
    assert decode_header(encode_header(plain)[:-1]).sessions == ()
    carried = Header(2, 9, {"seq": 4}, sessions=(1, 0xFFFF))
    assert decode_header(encode_header(carried)[:-1]).sessions == (1, 0xFFFF)
    one, other = (encode_header(Header(1, 1, {}, sessions=(s,))) for s in (1, 0xABCD))
    assert len(one) == len(other)  # a header's size does not depend on the numbers


@pytest.mark.parametrize(
    "sessions",
    [[1], ["1A2B"], ["1a2b3"], ["1a2"], [True], "1a2b", ["1a2b"] * (SESSIONS_KEPT + 1)],
)
def test_a_header_with_bad_sessions_is_a_bad_header(sessions: object) -> None:
    line = encode_header(Header(1, 1, {}, sessions=(7,)))[:-1]
    assert b'"sessions":["0007"]' in line
    body = line.rpartition(b" *")[0].replace(b'["0007"]', _json(sessions))
    bad = b"%s *%08x" % (body, zlib.crc32(body))
    with pytest.raises(RecordError, match="sessions"):
        decode_header(bad)


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
