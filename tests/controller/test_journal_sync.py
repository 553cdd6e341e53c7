"""The daemon's overlapped journal flush: nothing leaves before its record is on disk.

In-process (the daemon's Table on a real mosquitto, a real journal folder), because the
failure case needs a disk whose flush fails on cue, which cannot exist here: the test's
disk really writes and flushes, then reports EIO for one record, as a dying disk would.
The success path runs through the real process in the other daemon tests and the bench.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from baccarat.cards import parse_card
from baccarat.controller.config import BrokerConfig, Config, JournalConfig
from baccarat.controller.engine.inputs import DrawCard, NewShoe
from baccarat.controller.journal.journal import Journal, JournalError
from baccarat.controller.table import Table
from support.mosquitto import Mosquitto

WAIT = 10.0


class DiskThatFailsOnCue:
    """Flushes for real; the flush started while ``fail`` is set reports EIO."""

    name = "failing-disk"

    def __init__(self) -> None:
        self.fail = False
        self._outcome: bool | None = None

    def start(self, fd: int) -> None:
        os.fdatasync(fd)
        self._outcome = not self.fail

    def wait(self) -> None:
        outcome, self._outcome = self._outcome, None
        if outcome is False:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    def close(self) -> None:
        self._outcome = None


def make_table(tmp_path: Path, broker: Mosquitto, disk: DiskThatFailsOnCue) -> Table:
    config = Config(
        table="T5",
        profile="csm",
        broker=BrokerConfig(host=broker.host, port=broker.port),
        journal=JournalConfig(folder=tmp_path / "journal"),
    )
    table = Table(config)
    table.journal = Journal(config.journal.folder, fsync=True, profile=table.profile, sync=disk)
    return table


async def received(sub: aiomqtt.Client, within: float) -> list[dict[str, Any]]:
    """Every engine message (with a seq) that reaches ``sub`` within the time."""
    bodies: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(within):
            async for message in sub.messages:
                assert isinstance(message.payload, bytes)
                body = json.loads(message.payload)
                if "seq" in body:
                    bodies.append(body)
    except TimeoutError:
        pass
    return bodies


async def test_what_a_failed_flush_produced_is_never_published(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    disk = DiskThatFailsOnCue()
    table = make_table(tmp_path, mosquitto, disk)
    stop = asyncio.Event()
    async with mosquitto.client() as sub:
        await sub.subscribe("baccarat/T5/#", qos=1)
        serving = asyncio.create_task(table.serve(stop))
        async with asyncio.timeout(WAIT):
            await table.publisher.connected.wait()
        table.handle(NewShoe())
        table.handle(DrawCard(parse_card("4S"), ts=1.0))
        durable = await received(sub, 1.0)
        assert {body["type"] for body in durable} >= {"shoe", "round", "card"}
        last_durable = max(body["seq"] for body in durable)

        disk.fail = True
        with pytest.raises(JournalError, match="cannot sync record 3"):
            table.handle(DrawCard(parse_card("KH"), ts=2.0))
        assert table.fatal.is_set()
        assert all(e.message.seq is None or e.message.seq <= last_durable
                   for e in table.outbox._entries)
        async with asyncio.timeout(WAIT):
            await serving  # the daemon stops; the publisher reconnects to say offline
        later = await received(sub, 1.0)
    assert [b for b in later if b["seq"] > last_durable] == []
    with Journal(tmp_path / "journal") as journal:
        recovery = journal.open()
        assert recovery.clean
        assert recovery.inputs == [NewShoe(), DrawCard(parse_card("4S"), ts=1.0)]


def test_a_body_that_cannot_be_made_does_not_raise_into_the_input_handler(
    tmp_path: Path, mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    """Small bodies are made when queued; one that fails is left to the publisher, which
    fails its session and keeps the message (tests/controller/test_publisher_outbox.py)."""

    class Unmakeable:
        topic = "card"
        seq = 41

        def to_bytes(self) -> bytes:
            raise RuntimeError("no body")

    table = make_table(tmp_path, mosquitto, DiskThatFailsOnCue())
    table._queue(Unmakeable())  # type: ignore[arg-type]
    (entry,) = table.outbox._entries
    assert callable(entry.message.payload)
    assert entry.message.seq == 41
    assert "message seq 41: no body" in caplog.text
