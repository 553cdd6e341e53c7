"""A broker away so long that the outbox fills: the oldest messages go, and an alarm says so.

The real Table on a real journal, with a small outbox and no broker: what matters is what
the outbox holds when the broker comes back (the newest messages, with the alarm among
them), and that the journal still has every message the outbox dropped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from baccarat.controller.config import Config, JournalConfig
from baccarat.controller.journal.reader import read_journal_file
from baccarat.controller.table import DROPS_REPORTED_EVERY, Table
from baccarat.sim_hardware.dealer import Dealer

LIMIT = 100


def table(tmp_path: Path) -> Table:
    folder = tmp_path / "journal"
    config = Config(
        table="T1", rules={"open_mode": "explicit"}, journal=JournalConfig(folder=folder),
        broker={"outbox_limit": LIMIT},
    )
    made = Table(config)
    made.recover()
    return made


def bodies(made: Table) -> list[dict[str, object]]:
    return [json.loads(m.payload) for m in made.outbox if m.payload]


def test_a_full_outbox_raises_outbox_full_once_and_keeps_the_newest(tmp_path: Path) -> None:
    made = table(tmp_path)
    for event in Dealer(decks=1, seed=3).events():
        made.on_device_event(event)
    assert made.outbox.dropped > 0, "the shoe did not fill the outbox: nothing was tested"
    assert made.outbox.dropped < DROPS_REPORTED_EVERY
    queued = bodies(made)
    assert len(queued) == LIMIT
    alarms = [b for b in queued if b.get("type") == "alarm" and b.get("kind") == "outbox_full"]
    assert len(alarms) == 1, [b.get("kind") for b in queued if b.get("type") == "alarm"]
    [alarm] = alarms
    assert alarm["corrections"] == []
    assert "outbox is full (100 messages)" in str(alarm["text"])
    said = re.search(r": (\d+) of the oldest dropped so far, the oldest still kept is seq (\d+);",
                     str(alarm["text"]))
    assert said is not None, alarm["text"]
    dropped, oldest = map(int, said.groups())
    assert dropped < 5  # said at the first drop (an input queues a few messages at once)
    assert oldest == dropped + 1  # seq 1 to ``dropped`` gone, none kept out of order
    seqs = [b["seq"] for b in queued if isinstance(b.get("seq"), int)]
    assert seqs == sorted(seqs)  # the newest, in order, the alarm among them
    assert seqs[-1] - seqs[0] < LIMIT
    # the journal holds the report, so a replay (and a restart) makes the same alarm
    made.journal.close()
    [newest] = sorted((tmp_path / "journal").glob("shoe-*.journal"))[-1:]
    kinds = [getattr(inp, "kind", None) for _, inp in read_journal_file(newest).records]
    assert kinds.count("outbox_full") == 1


def test_an_outbox_that_never_fills_raises_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    made = Table(Config(table="T1", rules={"open_mode": "explicit"},
                        journal=JournalConfig(folder=folder)))
    made.recover()
    for event in Dealer(decks=1, seed=3).events():
        made.on_device_event(event)
    made.journal.close()
    assert made.outbox.dropped == 0
    assert not [b for b in bodies(made) if b.get("kind") == "outbox_full"]
