"""``seq-mark`` and the comparison at a start (controller/seq_promise.py), on a real file.

The daemon-level repros are tests/controller/test_seq_promise.py; these pin the file's two
slots (a torn write spoils one slot only), what is believed of a file or a broker body
someone else may have written, and which evidence counts as ahead of the journal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baccarat.controller.seq_promise import (
    MARK_FILE,
    MAX_SEQ,
    SLOT,
    Loss,
    SeqMark,
    _body_seq,
    lost_range,
)


def test_the_mark_survives_a_reopen_and_only_grows(tmp_path: Path) -> None:
    mark = SeqMark(tmp_path)
    assert mark.open() is None
    mark.ensure(5)
    mark.ensure(3)  # never lowered
    mark.ensure(12)
    mark.close()
    assert mark.writes == 2
    assert SeqMark(tmp_path).open() == 12
    assert (tmp_path / MARK_FILE).stat().st_size == 2 * SLOT


def test_a_torn_write_spoils_one_slot_and_the_other_holds_the_value_before(
    tmp_path: Path,
) -> None:
    mark = SeqMark(tmp_path)
    mark.open()
    mark.ensure(40)
    mark.ensure(41)  # the other slot
    mark.close()
    data = bytearray((tmp_path / MARK_FILE).read_bytes())
    newest = 1 if data[SLOT : 2 * SLOT].startswith(b"%020d" % 41) else 0
    data[newest * SLOT + 19] ^= 0x01  # the newest slot's last digit torn
    (tmp_path / MARK_FILE).write_bytes(bytes(data))
    again = SeqMark(tmp_path)
    assert again.open() == 40
    again.ensure(42)  # written over the torn slot, not over the good one
    again.close()
    assert SeqMark(tmp_path).open() == 42


@pytest.mark.parametrize("content", [b"garbage", b"\x00" * 64, b"9" * 20 + b" 00000000\n"])
def test_a_file_with_no_valid_slot_is_no_evidence(tmp_path: Path, content: bytes) -> None:
    (tmp_path / MARK_FILE).write_bytes(content)
    assert SeqMark(tmp_path).open() is None


def test_lost_range_names_what_is_ahead_of_the_journal() -> None:
    assert lost_range(30, marked=30, cursor=28, broker=29) is None
    assert lost_range(30, marked=None, cursor=0, broker=None) is None
    assert lost_range(22, marked=24, cursor=0, broker=24) == Loss(23, 24, ("seq-mark", "broker"))
    loss = lost_range(100, marked=100, cursor=150, broker=None)
    assert loss == Loss(101, 150, ("cursor",))
    assert loss.count == 50


@pytest.mark.parametrize(("payload", "seq"), [
    (json.dumps({"type": "round", "seq": 812}).encode(), 812),
    (b'{"seq": true}', None),
    (b'{"seq": -3}', None),
    (b'{"seq": 1.5}', None),
    (json.dumps({"seq": MAX_SEQ + 1}).encode(), None),
    (b"[1, 2]", None),
    (b"\xff\xfe not json", None),
    (b"[" * 100_000, None),
    (b"", None),
])
def test_a_retained_body_is_read_as_hostile(payload: bytes, seq: int | None) -> None:
    assert _body_seq(payload) == seq
