"""Recovery across journal files: what a restart queues again, from real files on disk.

A table deals two shoes through its real journal (three files: the first shoe input
rotates away from the empty first file); the broker acknowledged messages up to a point
(the ``published`` cursor); a second table on the same folder recovers. No broker is
needed: what matters is what goes into the outbox.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baccarat.controller.config import Config, JournalConfig
from baccarat.controller.outbox import OutMessage
from baccarat.controller.positions import CURSOR_FILE
from baccarat.controller.table import Table
from baccarat.sim_hardware.dealer import Dealer

EXPLICIT = {"open_mode": "explicit"}


def config(tmp_path: Path, retention: int = 200) -> Config:
    folder = tmp_path / "journal"
    return Config(
        table="T1", rules=EXPLICIT, journal=JournalConfig(folder=folder, retention=retention)
    )


def deal_two_shoes(tmp_path: Path, retention: int = 200) -> dict[int, OutMessage]:
    """Every engine message the first table queued, by seq; its journal left closed."""
    table = Table(config(tmp_path, retention))
    table.recover()
    for seed in (31, 32):
        for event in Dealer(decks=1, seed=seed).events():
            table.on_device_event(event)
    table.journal.close()
    return {m.seq: m for m in table.outbox if m.seq is not None}


def restart(tmp_path: Path, published: int | str, retention: int = 200) -> list[OutMessage]:
    """A new table on the same folder, the broker having acknowledged up to ``published``."""
    (tmp_path / "journal" / CURSOR_FILE).write_text(f"{published}\n")
    table = Table(config(tmp_path, retention))
    table.recover()
    table.journal.close()
    return list(table.outbox)


def first_seq_of_shoe(messages: dict[int, OutMessage], shoe: int) -> int:
    return min(s for s, m in messages.items() if json.loads(m.payload).get("shoe") == shoe)


def alarm_texts(queued: list[OutMessage]) -> list[str]:
    bodies = [json.loads(m.payload) for m in queued]
    return [b["text"] for b in bodies if b.get("type") == "alarm"]


@pytest.mark.parametrize("published", [0, 7, "in the first shoe", "at the second shoe"])
def test_every_message_past_the_cursor_is_queued_again(
    tmp_path: Path, published: int | str
) -> None:
    dealt = deal_two_shoes(tmp_path)
    second = first_seq_of_shoe(dealt, 2)
    cursor = {"in the first shoe": second // 2, "at the second shoe": second - 1}.get(
        str(published), published
    )
    assert isinstance(cursor, int)
    queued = restart(tmp_path, cursor)
    assert [m.seq for m in queued] == list(range(cursor + 1, max(dealt) + 1))
    assert queued == [dealt[m.seq] for m in queued if m.seq is not None]  # the same bytes


def test_nothing_past_a_cursor_at_the_end(tmp_path: Path) -> None:
    dealt = deal_two_shoes(tmp_path)
    assert restart(tmp_path, max(dealt)) == []


def test_a_file_deleted_by_retention_is_an_alarm_naming_the_lost_messages(
    tmp_path: Path,
) -> None:
    dealt = deal_two_shoes(tmp_path, retention=1)
    second = first_seq_of_shoe(dealt, 2)
    queued = restart(tmp_path, 5, retention=1)
    engine = [m for m in queued if m.seq is not None]
    assert engine[0].seq == second
    assert [m.payload for m in engine[: max(dealt) - second + 1]] == [
        dealt[s].payload for s in range(second, max(dealt) + 1)
    ]
    texts = alarm_texts(queued)
    assert len(texts) == 1
    assert f"messages 6 to {second - 1} were not acknowledged by the broker" in texts[0]
    assert "shoe-000002.journal is gone" in texts[0]


def test_an_older_file_cut_at_a_bad_record_is_an_alarm_naming_the_lost_messages(
    tmp_path: Path,
) -> None:
    dealt = deal_two_shoes(tmp_path)
    older = tmp_path / "journal" / "shoe-000002.journal"
    data = bytearray(older.read_bytes())
    middle = data.index(b"\n", len(data) // 2) + 1
    data[middle + 2] ^= 0x01  # one bit of a record in the middle of the first shoe
    older.write_bytes(data)
    queued = restart(tmp_path, 3)
    seqs = [m.seq for m in queued if m.seq is not None]
    texts = alarm_texts(queued)
    assert len(texts) == 1
    assert "shoe-000002.journal: byte" in texts[0]
    lost = sorted(set(range(4, max(dealt) + 1)) - set(seqs))
    assert lost, "the bad record lost no message"
    assert f"messages {lost[0]} to {lost[-1]} were not acknowledged" in texts[0]
    assert lost == list(range(lost[0], lost[-1] + 1))


def test_an_unreadable_cursor_publishes_everything_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dealt = deal_two_shoes(tmp_path)
    queued = restart(tmp_path, "twelve")
    assert [m.seq for m in queued] == sorted(dealt)
    assert "holds 'twelve', not a seq" in caplog.text
