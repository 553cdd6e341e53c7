"""SerialSource: reconnection, backoff, socket:// URLs, lifecycle, acknowledgements."""

from __future__ import annotations

import asyncio
import random
import termios
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import pytest
import serial

from baccarat.cards import ALL_CARDS
from baccarat.drivers import source as source_module
from baccarat.drivers.events import CardDrawn, DeviceEvent, LinkDown, LinkUp, Rejected
from baccarat.drivers.line import LineEncoder
from baccarat.drivers.serial_source import SerialSource
from baccarat.drivers.serial_transport import PortError, open_port
from baccarat.drivers.source import DeviceSourceError, reconnect_backoff
from baccarat.reconnect import LinkState
from baccarat.sim_hardware.virtual_shoe import ShoeThread, VirtualShoe

E = TypeVar("E", bound=DeviceEvent)


@pytest.fixture
def quick_reconnect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_module, "RECONNECT_FIRST", 0.01)
    monkeypatch.setattr(source_module, "RECONNECT_CAP", 0.05)


async def next_of(events: AsyncIterator[DeviceEvent], kind: type[E], within: float = 5.0) -> E:
    async with asyncio.timeout(within):
        async for event in events:
            if isinstance(event, kind):
                return event
    raise AssertionError(f"no {kind.__name__}")


def test_the_reconnection_backoff_starts_short_doubles_and_is_capped() -> None:
    backoff = reconnect_backoff(random.Random(1))
    delays = [backoff.next_delay() for _ in range(12)]
    low = 1 - source_module.RECONNECT_JITTER
    assert low * source_module.RECONNECT_FIRST <= delays[0] <= source_module.RECONNECT_FIRST
    assert max(delays) <= source_module.RECONNECT_CAP
    assert min(delays[-3:]) >= low * source_module.RECONNECT_CAP
    assert len(set(delays)) == len(delays)  # jittered


@pytest.mark.usefixtures("quick_reconnect")
async def test_a_missing_device_is_reported_once_and_given_up_after_max_attempts(
    tmp_path: Path,
) -> None:
    link = SerialSource(str(tmp_path / "nothing"), "line", max_attempts=5)
    async with link:
        events = [event async for event in link]
    assert [type(e) for e in events] == [LinkDown, LinkDown]
    assert "cannot open" in events[0].reason  # type: ignore[attr-defined]
    assert "gave up after 5 failed opens" in events[1].reason  # type: ignore[attr-defined]
    assert link.state is LinkState.FAILED
    assert link.counters["open_failures"] == 5


@pytest.mark.usefixtures("quick_reconnect")
async def test_a_device_plugged_in_later_comes_up(device_link: Path) -> None:
    async with SerialSource(str(device_link), "line", baud=115200) as link:
        events = aiter(link)
        await next_of(events, LinkDown)
        assert link.counters["open_failures"] >= 1
        async with VirtualShoe(device_link, "line", baud=115200) as shoe:
            await next_of(events, LinkUp)
            shoe.send(CardDrawn(ALL_CARDS[0]))
            assert (await next_of(events, CardDrawn)).card == ALL_CARDS[0]


async def test_a_source_is_started_before_it_is_iterated(device_link: Path) -> None:
    source = SerialSource(str(device_link), "line")
    with pytest.raises(DeviceSourceError):
        await anext(source)
    async with source:
        await source.start()  # idempotent
        with pytest.raises(DeviceSourceError):
            source.resume_after(3)  # only before it starts
    await source.stop()  # idempotent
    assert source.state is LinkState.STOPPED
    remaining = [event async for event in source]  # what was queued, then the end
    assert all(isinstance(event, LinkDown) for event in remaining)


class LineServer:
    """A terminal server: a TCP port that plays the line protocol to whoever connects."""

    def __init__(self) -> None:
        self.connections: asyncio.Queue[asyncio.StreamWriter] = asyncio.Queue()
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"socket://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.connections.put(writer)


async def test_a_socket_url_works_and_reconnects(quick_reconnect: None) -> None:
    encoder = LineEncoder()
    server = LineServer()
    async with server as url, SerialSource(url, "line") as link:
        events = aiter(link)
        await next_of(events, LinkUp)
        first = await asyncio.wait_for(server.connections.get(), 5)
        first.write(encoder.encode(CardDrawn(ALL_CARDS[0])) + b"X99\r\n")
        assert (await next_of(events, CardDrawn)).card == ALL_CARDS[0]
        assert (await next_of(events, Rejected)).data == b"X99\r\n"
        first.close()
        await first.wait_closed()
        down = await next_of(events, LinkDown)
        assert down.reason
        await next_of(events, LinkUp)
        second = await asyncio.wait_for(server.connections.get(), 5)
        second.write(encoder.encode(CardDrawn(ALL_CARDS[1])))
        assert (await next_of(events, CardDrawn)).card == ALL_CARDS[1]
        second.close()
        await second.wait_closed()
        assert link.counters["reconnects"] >= 1


async def test_a_partial_line_at_link_loss_is_reported(
    device_link: Path, quick_reconnect: None
) -> None:
    async with (
        VirtualShoe(device_link, "line", baud=115200) as shoe,
        SerialSource(str(device_link), "line", baud=115200) as link,
    ):
        events = aiter(link)
        await next_of(events, LinkUp)
        await shoe.write_raw(b"H1")  # half a line, then the cable is pulled
        await asyncio.sleep(0.1)
        unplugging = asyncio.create_task(shoe.unplug(0.2))
        rejected = await next_of(events, Rejected)
        await unplugging
    assert rejected.data == b"H1"
    assert "interrupted" in rejected.reason


def test_a_shoe_in_a_thread_for_plain_blocking_code(device_link: Path) -> None:
    with ShoeThread(VirtualShoe(device_link, "line", baud=115200)) as thread:
        with serial.Serial(str(device_link), 115200, timeout=5) as port:
            for card in ALL_CARDS[:3]:
                assert thread.call(thread.shoe.send, CardDrawn(card))
            lines = [port.readline() for _ in range(3)]
        thread.run(thread.shoe.drain())
    assert lines == [b"A01\r\n", b"A02\r\n", b"A03\r\n"]
    assert not device_link.exists()


async def take(
    events: AsyncIterator[DeviceEvent], count: int, within: float = 5.0
) -> list[DeviceEvent]:
    """The next ``count`` events."""
    async with asyncio.timeout(within):
        return [await anext(events) for _ in range(count)]


async def test_cards_sent_while_the_port_was_closed_are_read_when_it_opens(
    device_link: Path,
) -> None:
    """Opening the port discards nothing: the cards waiting in it come first, after LinkUp.

    Before, and at a reopen: the shoe deals while nobody has the port open.
    """
    cards = [CardDrawn(card) for card in ALL_CARDS[:12]]
    async with VirtualShoe(device_link, "line", baud=115200) as shoe:
        await shoe.play(cards[:6])
        await shoe.drain()  # written: in the pty's buffer, nobody reading
        async with SerialSource(str(device_link), "line", baud=115200) as link:
            first = await take(aiter(link), 7)
        await shoe.play(cards[6:9])
        await shoe.drain()
        await shoe.write_raw(b"A1")  # and the start of a line
        async with SerialSource(str(device_link), "line", baud=115200) as link:
            await shoe.write_raw(b"0\r\n")
            second = await take(aiter(link), 5)
    assert isinstance(first[0], LinkUp)
    assert first[1:] == cards[:6]
    assert isinstance(second[0], LinkUp)
    assert second[1:] == [*cards[6:9], CardDrawn(ALL_CARDS[9])]


async def test_a_terminal_that_cannot_be_set_up_is_a_port_error(
    device_link: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``termios.error`` (not an OSError) becomes a PortError, and the descriptor is closed.

    A mock: a terminal that hangs up between its open and its set-up cannot be timed by a
    test, so ``tcsetattr`` fails as it then does (EIO).
    """

    def hung_up(*args: object) -> None:
        raise termios.error(5, "Input/output error")

    async with VirtualShoe(device_link, "line", baud=115200):
        monkeypatch.setattr(termios, "tcsetattr", hung_up)
        with pytest.raises(PortError, match="cannot set 115200 baud 8N1: Input/output error"):
            await open_port(str(device_link), 115200, lambda data: None)
