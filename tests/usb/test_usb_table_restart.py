"""The table stops before its acknowledgements reach the USB shuffler, and starts again.

The real table (``TableRun(table).serve``: journal, engine, outbox, publisher to a real mosquitto)
in this process, reading the virtual shuffler through the real USB source and pyusb on
the emulated bus. The shuffler is deaf at first: nothing the first table writes reaches
it, as when the host dies before its acknowledgements are written, so its HELLO is still
in flight when the second table starts and is the first frame it sends again. A host
that did not know the session of what it recorded took that HELLO for a power-up and
took the shoe's first cards a second time, with no alarm (PROTOCOL.md 6.4).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

import pytest

from baccarat.cards import Card
from baccarat.controller import serving as serving_module
from baccarat.controller.config import BrokerConfig, Config, DeviceConfig, JournalConfig
from baccarat.controller.engine.inputs import DeviceReport, DrawCard, Input
from baccarat.controller.journal.reader import read_journal_file
from baccarat.controller.journal.records import decode_header, encode_header, encode_record
from baccarat.controller.serving import TableRun
from baccarat.controller.table import Table
from baccarat.drivers.usb_source import UsbSource
from baccarat.sim_hardware.virtual_shuffler import VirtualShuffler
from support.daemon import Recorder
from support.mosquitto import Mosquitto

WITHIN = 30.0
"""Seconds a step may take before the test fails (the machine is shared)."""
IN_FLIGHT = 8
"""The shuffler's window: HELLO, ShuffleStarted, ShuffleDone and the first five cards."""


@pytest.fixture(autouse=True)
async def executor_shut_down() -> AsyncIterator[None]:
    """The table resolves the broker's address in the loop's executor: end its thread."""
    yield
    await asyncio.get_running_loop().shutdown_default_executor()


def config(folder: Path, broker: Mosquitto) -> Config:
    return Config(
        table="T3",
        profile="csm",
        device=DeviceConfig(kind="usb", protocol="framed"),
        broker=BrokerConfig(host=broker.host, port=broker.port),
        journal=JournalConfig(folder=folder),
    )


def journaled(folder: Path) -> list[Input]:
    """Every input the journal holds, oldest first (all files)."""
    return [
        inp
        for path in sorted(folder.glob("shoe-*.journal"))
        for _, inp in read_journal_file(path).records
    ]


def journaled_cards(folder: Path) -> list[Card]:
    return [i.card for i in journaled(folder) if isinstance(i, DrawCard) and i.card is not None]


async def serve_until(
    cfg: Config, shuffler: VirtualShuffler, done: Callable[[], bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Serve the table on the shuffler until ``done()``, then stop it as SIGTERM does."""
    monkeypatch.setattr(serving_module, "open_device",
                        lambda _device: UsbSource(backend=shuffler.backend))
    stop = asyncio.Event()
    serving = asyncio.create_task(TableRun(Table(cfg)).serve(stop))
    try:
        async with asyncio.timeout(WITHIN):
            while not done():
                assert not serving.done(), "the table stopped by itself"
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await serving


def window_recorded(folder: Path, shuffler: VirtualShuffler) -> Callable[[], bool]:
    """Whether the journal holds the five cards the deaf shuffler has in flight."""
    def done() -> bool:
        with shuffler.device.lock:
            full = shuffler.firmware.sender.in_flight == IN_FLIGHT
        return full and len(journaled_cards(folder)) == IN_FLIGHT - 3
    return done


def dealt_all(shuffler: VirtualShuffler) -> Callable[[], bool]:
    def done() -> bool:
        with shuffler.device.lock:
            return shuffler.firmware.dealt_all
    return done


async def first_table_dies_deaf(
    cfg: Config, shuffler: VirtualShuffler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first table journals the window; none of its ACKs reach the shuffler."""
    with shuffler.device.lock:
        shuffler.firmware.deaf = True
    await serve_until(cfg, shuffler, window_recorded(cfg.journal.folder, shuffler), monkeypatch)
    with shuffler.device.lock:
        assert shuffler.firmware.sender.unacknowledged[0] == 0  # the HELLO, in flight
        shuffler.firmware.deaf = False


async def test_a_table_restarted_before_the_hellos_ack_got_out_takes_no_card_twice(
    tmp_path: Path, mosquitto: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    shuffler = VirtualShuffler(decks=1, seed=5)
    cfg = config(tmp_path / "journal", mosquitto)
    await first_table_dies_deaf(cfg, shuffler, monkeypatch)
    assert journaled_cards(cfg.journal.folder) == shuffler.shoe[:5]

    await serve_until(cfg, shuffler, dealt_all(shuffler), monkeypatch)
    assert journaled_cards(cfg.journal.folder) == shuffler.shoe  # each once, in order
    hellos = [i for i in journaled(cfg.journal.folder)
              if isinstance(i, DeviceReport) and i.kind == "hello"]
    assert len(hellos) == 1  # recorded once, before its ACK; the repeat was dropped
    assert hellos[0].device_seq == 0
    assert hellos[0].device_session == shuffler.firmware.sender.session


def forget_sessions(folder: Path) -> None:
    """Write the journal again as a daemon did before sessions were recorded."""
    for path in folder.glob("shoe-*.journal"):
        lines = path.read_bytes().splitlines()
        header = encode_header(decode_header(lines[0]))
        records = read_journal_file(path).records
        body = b"".join(
            encode_record(number, replace(inp, device_session=None)) for number, inp in records
        )
        path.write_bytes(header + body)


async def test_an_old_journal_without_sessions_gets_an_alarm_not_silent_duplicates(
    tmp_path: Path, mosquitto: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record names frames but not their session: the HELLO may be a repeat, said so."""
    shuffler = VirtualShuffler(decks=1, seed=6)
    cfg = config(tmp_path / "journal", mosquitto)
    await first_table_dies_deaf(cfg, shuffler, monkeypatch)
    forget_sessions(cfg.journal.folder)

    async with Recorder(mosquitto, table="T3") as board:
        await serve_until(cfg, shuffler, dealt_all(shuffler), monkeypatch)
        await board.wait_for(
            lambda b: any(a.get("kind") == "restart_in_round" for a in b.bodies("alarm")),
            within=WITHIN,
        )
    alarm = next(a for a in board.bodies("alarm") if a.get("kind") == "restart_in_round")
    assert "frame 7 but not its session" in alarm["text"]
    assert "taken twice" in alarm["text"]
    cards = journaled_cards(cfg.journal.folder)
    assert cards == shuffler.shoe[:5] + shuffler.shoe  # taken twice, but not silently
