"""A small HTTP server for one Prometheus page: ``GET /metrics``, nothing else.

The table daemon (:mod:`baccarat.controller.metrics`) and the floor recorder
(:mod:`baccarat.floor.metrics`) both serve their metrics with it. It is made to sit beside
a process that must not stop: at most :data:`MAX_CONNECTIONS` connections are served at
once (one more is closed at once, unread), each for :data:`REQUEST_TIMEOUT` seconds at
most, and an answer the client does not take is cut after :data:`CLOSE_TIMEOUT` more. A
port that cannot be had is logged as an error and the process goes on without metrics.
The page is built on the event loop when it is asked for: no thread, nothing shared.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from typing import Final

from prometheus_client import CONTENT_TYPE_LATEST

log = logging.getLogger(__name__)

REQUEST_TIMEOUT: Final = 5.0
"""Seconds a scraper has to send its request and take the answer: an idle connection is
closed after it."""
CLOSE_TIMEOUT: Final = 2.0
"""Seconds for the answer to leave once the connection is closed; then it is cut."""
MAX_CONNECTIONS: Final = 32
"""Connections served at once; one more is closed at once, unread. Every connection holds a
file descriptor, and so does every write of the journal or the database: idle connections
by the thousand must not stop the process (a scraper needs one)."""
ACCEPT_RETRY: Final = 0.5
"""Seconds to wait after a connection could not be taken (no file descriptor left)."""
Page = Callable[[], bytes]
"""Builds the metrics page, in Prometheus' text format."""


async def serve_page(page: Page, host: str, port: int, *, name: str = "metrics") -> None:
    """Answer ``GET /metrics`` on ``host:port`` with ``page()`` until cancelled.

    A port that cannot be had is logged (as ``name``) and this returns: metrics are never a
    reason to stop.
    """
    try:
        listener = _listen(host, port)
    except OSError as exc:
        log.error(  # noqa: TRY400 - one line, no traceback: the cause is in the text
            "%s: cannot listen on %s:%d: %s", name, host, port, exc.strerror or exc
        )
        return
    log.info("%s on http://%s:%d/metrics", name, host, port)
    with listener:
        listener.setblocking(False)
        await _accept(page, listener)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host`` (a name, an IPv4 or an IPv6 address) and ``port``."""
    family, _, _, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    return socket.create_server(address, family=family, backlog=MAX_CONNECTIONS)


async def _accept(page: Page, listener: socket.socket) -> None:
    """Take one connection at a time; past :data:`MAX_CONNECTIONS`, close it at once, unread.

    One at a time, so that a flood of connections holds at most :data:`MAX_CONNECTIONS`
    file descriptors (and the one just taken), whatever the loop's delay: the journal's
    next file must always find one.
    """
    loop = asyncio.get_running_loop()
    served: set[asyncio.Task[None]] = set()
    try:
        while True:
            try:
                connection, _ = await loop.sock_accept(listener)
            except OSError as exc:  # no descriptor left for now, or a connection gone
                log.warning("metrics: cannot accept a connection: %s", exc.strerror or exc)
                await asyncio.sleep(ACCEPT_RETRY)
                continue
            if len(served) >= MAX_CONNECTIONS:
                connection.close()
                continue
            task = asyncio.create_task(_admit(page, connection))
            served.add(task)
            task.add_done_callback(served.discard)
    finally:
        for task in served:
            task.cancel()


async def _admit(page: Page, connection: socket.socket) -> None:
    """Answer one connection."""
    try:
        reader, writer = await asyncio.open_connection(sock=connection)
    except OSError:
        connection.close()
        return
    await _answer(page, reader, writer)


async def _answer(page: Page, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT):
            request = await reader.readline()
            while await reader.readline() not in (b"\r\n", b"\n", b""):
                pass  # headers: not needed
        writer.write(_response(page, request))
        await writer.drain()
    except (TimeoutError, ValueError, ConnectionError):
        pass  # a scraper that is too slow, sends a line too long, or goes away
    finally:
        writer.close()
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await writer.wait_closed()
        except (TimeoutError, ConnectionError):
            writer.transport.abort()  # a client that does not read its answer


def _response(page: Page, request: bytes) -> bytes:
    parts = request.decode("latin-1").split()
    if len(parts) == 3 and parts[0] == "GET" and parts[1].split("?")[0] == "/metrics":
        return _http("200 OK", CONTENT_TYPE_LATEST, page())
    return _http("404 Not Found", "text/plain; charset=utf-8", b"only /metrics is here\n")


def _http(status: str, content_type: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body
