"""The daemon's order per input: journal (fdatasync) -> engine -> outbox.

In-process (the daemon's Table on a real mosquitto, a real journal folder), because the
failure case needs a disk whose flush fails on cue, which cannot exist here: the test's
disk really writes and flushes, then reports EIO, as a dying disk would. The success path
runs through the real process in the other daemon tests and the bench.
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
from baccarat.controller.config import BrokerConfig, Config, DeviceConfig, JournalConfig
from baccarat.controller.engine.inputs import DrawCard, NewShoe
from baccarat.controller.journal.reader import JournalError
from baccarat.controller.journal.writer import Journal
from baccarat.controller.serving import TableRun
from baccarat.controller.table import Table
from baccarat.drivers.events import CardDrawn
from baccarat.messages.bodies import Message
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.mosquitto import Mosquitto

WAIT = 10.0


class DiskThatFailsOnCue:
    """Flushes for real; while ``fail`` is set, each flush then reports EIO."""

    def __init__(self) -> None:
        self.fail = False

    def __call__(self, fd: int) -> None:
        os.fdatasync(fd)
        if self.fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))


def make_table(
    tmp_path: Path,
    broker: Mosquitto,
    disk: DiskThatFailsOnCue,
    device: DeviceConfig | None = None,
) -> Table:
    config = Config(
        table="T5",
        profile="csm",
        device=device or DeviceConfig(kind="none"),
        broker=BrokerConfig(host=broker.host, port=broker.port),
        journal=JournalConfig(folder=tmp_path / "journal"),
    )
    table = Table(config)
    table.journal = Journal(config.journal.folder, profile=table.profile, datasync=disk)
    return table


async def received(sub: aiomqtt.Client, within: float) -> list[dict[str, Any]]:
    """Every engine message (with a seq) that reaches ``sub`` within the time."""
    bodies: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(within):
            async for message in sub.messages:
                assert isinstance(message.payload, bytes)
                if not message.payload:
                    continue  # a retained message cleared (the fault topic)
                body = json.loads(message.payload)
                if "seq" in body:
                    bodies.append(body)
    except TimeoutError:
        pass
    return bodies


async def test_nothing_of_an_input_the_journal_could_not_flush_is_published(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    disk = DiskThatFailsOnCue()
    table = make_table(tmp_path, mosquitto, disk)
    stop = asyncio.Event()
    async with mosquitto.client() as sub:
        await sub.subscribe("baccarat/T5/#", qos=1)
        serving = asyncio.create_task(TableRun(table).serve(stop))
        async with asyncio.timeout(WAIT):
            await table.publisher.connected.wait()
        table.handle(NewShoe())
        table.handle(DrawCard(parse_card("4S"), ts=1.0))
        durable = await received(sub, 1.0)
        assert {body["type"] for body in durable} >= {"shoe", "round", "card"}
        last_durable = max(body["seq"] for body in durable)

        disk.fail = True
        with pytest.raises(JournalError, match="cannot append record 3"):
            table.handle(DrawCard(parse_card("KH"), ts=2.0))
        assert table.fatal.is_set()
        assert all(m.seq is None or m.seq <= last_durable for m in table.outbox)
        async with asyncio.timeout(WAIT):
            await serving  # the daemon stops, saying offline
        later = await received(sub, 1.0)
    assert [b for b in later if b["seq"] > last_durable] == []
    with Journal(tmp_path / "journal") as journal:
        recovery = journal.open()
        assert recovery.clean
        assert recovery.inputs == [NewShoe(), DrawCard(parse_card("4S"), ts=1.0)]


async def test_a_command_the_journal_could_not_flush_is_answered_with_an_error(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    disk = DiskThatFailsOnCue()
    table = make_table(tmp_path, mosquitto, disk)
    table.recover()
    disk.fail = True
    await table.on_command("shoe", b'{"id": 7}', None)
    assert table.fatal.is_set()
    (reply,) = [json.loads(m.payload) for m in table.outbox]
    assert reply["id"] == 7
    assert not reply["ok"]
    assert "journal" in reply["error"]
    table.journal.close()


def test_a_body_that_cannot_be_made_is_logged_and_the_table_goes_on(
    tmp_path: Path,
    mosquitto: Mosquitto,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    table = make_table(tmp_path, mosquitto, DiskThatFailsOnCue())
    table.recover()

    def no_body(message: Message) -> bytes:
        raise RuntimeError("no body")

    monkeypatch.setattr(Message, "to_bytes", no_body)
    outcome = table.handle(NewShoe())  # must not raise into the input's source
    assert outcome.refused is None
    assert outcome.messages
    assert len(table.outbox) == 0
    assert f"message seq {outcome.messages[0].seq} " in caplog.text
    monkeypatch.undo()
    table.handle(DrawCard(parse_card("4S"), ts=1.0))
    assert len(table.outbox) > 0  # the next input's messages go out as usual
    table.journal.close()


async def stopped(serving: asyncio.Task[None]) -> None:
    """Until the daemon has stopped; a JournalError it stops with is expected."""
    try:
        async with asyncio.timeout(WAIT):
            await serving
    except* JournalError:
        pass


async def test_a_frame_the_journal_could_not_flush_is_taken_again_after_a_restart(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Issue 14's acceptance: the disk fails on the third card frame of a framed shoe."""
    link = tmp_path / "shoe"
    device = DeviceConfig(kind="serial", path=str(link), protocol="framed", baud=115200)
    cards = [parse_card(code) for code in ("4S", "KH", "9D")]
    async with VirtualShoe(link, "framed", baud=115200, retransmit_timeout=0.2) as shoe:
        disk = DiskThatFailsOnCue()
        table = make_table(tmp_path, mosquitto, disk, device)
        serving = asyncio.create_task(TableRun(table).serve(asyncio.Event()))
        for card in cards[:2]:
            shoe.send(CardDrawn(card))
            async with asyncio.timeout(WAIT):
                await shoe.drain()  # journaled, then acknowledged
        disk.fail = True
        shoe.send(CardDrawn(cards[2]))
        await stopped(serving)
        assert table.fatal.is_set()
        with pytest.raises(TimeoutError):  # the third frame is not acknowledged
            async with asyncio.timeout(1.0):
                await shoe.drain()

        stop = asyncio.Event()
        again = make_table(tmp_path, mosquitto, DiskThatFailsOnCue(), device)
        serving = asyncio.create_task(TableRun(again).serve(stop))
        async with asyncio.timeout(WAIT):
            await shoe.drain()  # the shoe's retransmission, taken and acknowledged
        stop.set()
        await stopped(serving)
    with Journal(tmp_path / "journal") as journal:
        inputs = journal.open().inputs
    assert [inp.card for inp in inputs if isinstance(inp, DrawCard)] == cards
