"""The daemon's own log says what it sees of its device, and where its start stands.

The real ``baccarat run`` process, a real pty (a virtual shoe, or raw bytes written to a
pty's master), a real mosquitto (stopped where the test needs the broker away). Each test
reads the daemon's log as an engineer would (``journalctl -u baccarat``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tty
from pathlib import Path

from baccarat.cards import parse_card
from baccarat.drivers.events import CardDrawn
from baccarat.drivers.line import LineEncoder
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto, MosquittoFactory


def with_device_setting(daemon: Daemon, line: str) -> None:
    """Add ``line`` to the daemon's ``[device]`` section."""
    text = daemon.config.read_text()
    daemon.config.write_text(text.replace("[journal]", f"{line}\n[journal]", 1))


def raw_pty() -> tuple[int, str]:
    """A pty in raw mode: its master (the test writes the device's bytes) and slave path."""
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    return master, path


async def test_framed_bytes_on_a_line_port_are_logged_with_the_protocol_to_set(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, protocol="line", baud=115200)
        try:
            await asyncio.to_thread(daemon.start)
            shoe.send(CardDrawn(parse_card("7S")))
            await asyncio.to_thread(daemon.wait_log, "hint:", 15)
        finally:
            daemon.close()
    line = next(x for x in daemon.log().splitlines() if "hint:" in x)
    assert "WARNING" in line
    assert f"device {shoe_path}:" in line
    assert "byte(s) rejected" in line
    assert 'protocol = "framed"' in line


async def test_noise_on_the_line_is_logged_with_a_hint_at_the_baud_rate(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    master, path = raw_pty()
    daemon = Daemon(tmp_path, mosquitto, device=path, protocol="line", baud=9600)
    try:
        await asyncio.to_thread(daemon.start)
        noise = bytes([0xF0, 0x8C, 0xE6, 0x00, 0xFE, 0x98, 0x86, 0xF8, 0x80, 0x1E])
        os.write(master, noise + b"\n")
        await asyncio.to_thread(daemon.wait_log, "hint:", 15)
    finally:
        daemon.close()
        os.close(master)
    line = next(x for x in daemon.log().splitlines() if "hint:" in x)
    assert "the line speed may not be the shoe's; 9600 baud is set" in line
    assert "baud = <speed>" in line


async def test_a_quiet_device_is_logged_once_and_its_return_too(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    master, path = raw_pty()
    daemon = Daemon(tmp_path, mosquitto, device=path, protocol="line", baud=9600)
    with_device_setting(daemon, "quiet_after = 1.5")
    try:
        await asyncio.to_thread(daemon.start)
        await asyncio.to_thread(daemon.wait_log, f"no bytes from {path} for 2 s", 15)
        await asyncio.sleep(3)  # still quiet: not said again
        os.write(master, b"A01\r\n")
        await asyncio.to_thread(daemon.wait_log, "bytes again after", 10)
    finally:
        daemon.close()
        os.close(master)
    assert daemon.log().count("no bytes from") == 1
    assert "9600 baud, protocol line" in daemon.log()


async def test_the_device_s_fault_report_is_in_the_log(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    from baccarat.drivers.events import DeviceFault

    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, protocol="framed")
        try:
            await asyncio.to_thread(daemon.start)
            shoe.send(DeviceFault(0x0102, "card reader dirty"))
            await asyncio.to_thread(daemon.wait_log, "card reader dirty", 15)
        finally:
            daemon.close()
    line = next(x for x in daemon.log().splitlines() if "card reader dirty" in x)
    assert "WARNING" in line
    assert "reports fault code 258" in line


async def test_a_start_without_broker_says_it_waits_with_attempts_and_next_try(
    tmp_path: Path, mosquitto_factory: MosquittoFactory
) -> None:
    broker = mosquitto_factory()
    broker.stop()
    daemon = Daemon(tmp_path, broker)
    try:
        daemon.start(wait_ready=False)
        where = f"waiting for the broker {broker.host}:{broker.port} ("
        await asyncio.to_thread(daemon.wait_log, where, 20)
        await asyncio.to_thread(daemon.wait_log, "attempts failed (last:", 20)
        line = next(x for x in daemon.log().splitlines() if where in x)
        assert line.split(" ")[1] == "WARNING"
        assert "ready: table T1, but" in line
        assert re.search(r"\(\d+ attempts? failed, next try in \d+\.\d s\)", line), line
        await broker.start_async()
        await asyncio.to_thread(daemon.wait_log, "the device and the broker are reached", 60)
    finally:
        daemon.close()


async def test_stop_says_how_many_events_are_not_yet_published(
    tmp_path: Path, mosquitto_factory: MosquittoFactory
) -> None:
    broker = mosquitto_factory()
    broker.stop()
    master, path = raw_pty()
    daemon = Daemon(tmp_path, broker, device=path, protocol="line", baud=9600)
    try:
        daemon.start(wait_ready=False)
        await asyncio.to_thread(daemon.wait_log, "ready: table", 20)
        encoder = LineEncoder()
        for code in ("7S", "6H", "KS", "KH"):
            os.write(master, encoder.encode(CardDrawn(parse_card(code))))
        for _ in range(100):
            if len(daemon.journaled_cards()) == 4:
                break
            await asyncio.sleep(0.1)
        assert len(daemon.journaled_cards()) == 4
        assert await asyncio.to_thread(daemon.stop) == 0
    finally:
        daemon.close()
        os.close(master)
    line = next(x for x in daemon.log().splitlines() if "not yet published" in x)
    count = int(line.split("stopping: ")[1].split(" ")[0])
    assert count >= 4  # a message for each card at least
    assert "they are journaled and will be published at the next start" in line


async def test_the_retained_status_says_the_device_is_awaited_then_up(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    shoe_path = str(tmp_path / "shoe")
    daemon = Daemon(tmp_path, mosquitto, device=shoe_path, protocol="line", baud=9600)
    try:
        async with Recorder(mosquitto) as board:
            daemon.start(wait_ready=False)
            await asyncio.to_thread(daemon.wait_log, "but waiting for the device", 20)

            def device_states(r: Recorder) -> list[str]:
                return [b.get("device") for t, b in r.received if t.endswith("/status")]

            await board.wait_for(lambda r: "waiting" in device_states(r), 10)
            async with VirtualShoe(shoe_path, "line", baud=9600):
                await board.wait_for(lambda r: device_states(r)[-1:] == ["up"], 60)
    finally:
        daemon.close()
    assert json.loads(json.dumps(device_states(board)))[0] == "waiting"
