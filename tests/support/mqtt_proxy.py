"""A TCP proxy in front of a real broker that can stop passing the broker's PUBLISH packets.

    proxy = await MqttProxy(broker.host, broker.port).start()
    ... connect a client to 127.0.0.1:proxy.port ...
    proxy.stall()        # the connections open now get no more PUBLISH from the broker
    await proxy.close()

What a stalled connection still passes is everything else, both ways: CONNACK, SUBACK, the
PUBACKs of the client's own publishes, PINGRESP. So the client's keepalive sees a healthy
link while the broker's deliveries (which the broker counts as sent, awaiting their PUBACK)
never arrive: a broker that has stopped delivering to one session. Connections made after
:meth:`stall` pass everything. The broker-to-client stream is cut at MQTT packet
boundaries (the fixed header: type, then the remaining length as a varint).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

HOST = "127.0.0.1"
PUBLISH = 3
"""The MQTT control packet type of PUBLISH (the high nibble of the first byte)."""


@dataclass
class _Link:
    """One client's connection through the proxy."""

    stalled: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    writers: list[asyncio.StreamWriter] = field(default_factory=list)


class MqttProxy:
    """Listens on a free loopback port and connects each client to the broker."""

    def __init__(self, host: str, port: int) -> None:
        self.broker = (host, port)
        self.port = 0
        self.dropped = 0
        """PUBLISH packets from the broker not passed on."""
        self.connections = 0
        self._links: list[_Link] = []
        self._server: asyncio.Server | None = None

    async def start(self) -> MqttProxy:
        self._server = await asyncio.start_server(self._serve, HOST, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stall(self) -> None:
        """The connections open now get no more PUBLISH from the broker."""
        for link in self._links:
            link.stalled = True

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in self._links:
            _end(link)
            for task in link.tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            broker_r, broker_w = await asyncio.open_connection(*self.broker)
        except OSError:
            client_w.close()
            return
        self.connections += 1
        link = _Link(writers=[client_w, broker_w])
        self._links.append(link)
        link.tasks = [
            asyncio.create_task(self._pass_bytes(client_r, broker_w, link)),
            asyncio.create_task(self._pass_packets(broker_r, client_w, link)),
        ]

    async def _pass_bytes(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, link: _Link
    ) -> None:
        """The client's bytes to the broker, as they come."""
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            _end(link)

    async def _pass_packets(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, link: _Link
    ) -> None:
        """The broker's packets to the client, but PUBLISH once the link is stalled."""
        try:
            while True:
                head = await source.readexactly(1)
                length, size_bytes = await _remaining_length(source)
                body = await source.readexactly(length)
                if link.stalled and head[0] >> 4 == PUBLISH:
                    self.dropped += 1
                    continue
                sink.write(head + size_bytes + body)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            _end(link)


async def _remaining_length(source: asyncio.StreamReader) -> tuple[int, bytes]:
    """The fixed header's remaining length and its bytes (1 to 4, 7 bits each)."""
    value, raw = 0, b""
    for shift in range(0, 28, 7):
        byte = await source.readexactly(1)
        raw += byte
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return value, raw
    raise OSError("a remaining length longer than 4 bytes")


def _end(link: _Link) -> None:
    """Close both sides of a link (idempotent)."""
    for writer in link.writers:
        writer.close()
