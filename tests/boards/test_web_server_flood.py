"""Many slow connections to the board's (and the pit's) web server: a few log lines, no traceback.

Issue 32: under 1,500 slow connections the pit's and the board's logs grew by thousands of
"Too many open files" tracebacks. Here, real sockets to the real server: idle connections
beyond the most it serves at once are closed, and connections past the process's file
limit (lowered for the test, as a small box has it) make ``accept()`` fail with EMFILE; the
log says each once with its cause and a count, never a traceback, and the server answers
again once they are gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import socket
from collections.abc import Iterator

import pytest

from baccarat.boards import web_server
from baccarat.boards.web_server import WebBoardServer, page_config

PREFIX = "baccarat"


@contextlib.contextmanager
def open_files_limit(soft: int) -> Iterator[None]:
    old = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, old)


async def get(url_port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", url_port)
    writer.write(b"GET /config.json HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


def idle_connections(port: int, n: int) -> list[socket.socket]:
    out = []
    for _ in range(n):
        try:
            out.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:  # this process out of files too: enough are open
            break
    return out


@pytest.mark.timeout(120)
async def test_slow_connections_beyond_the_limits_are_a_few_warnings_not_tracebacks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="baccarat.web")
    config = page_config("127.0.0.1", 1, None, PREFIX)
    async with WebBoardServer(config) as server:
        port = server.port
        assert b"200" in (await get(port)).split(b"\r\n")[0]
        # idle clients, many more than it serves at once
        crowd = await asyncio.to_thread(idle_connections, port, web_server.MAX_CLIENTS + 300)
        await asyncio.sleep(1.0)
        # and past the process's open files: accept() fails with EMFILE
        in_use = len(os.listdir("/proc/self/fd"))
        with open_files_limit(in_use + 40):
            crowd += await asyncio.to_thread(idle_connections, port, 200)
            await asyncio.sleep(2.5)  # accept() is retried every second
        for sock in crowd:
            sock.close()
        await asyncio.sleep(0.5)
        assert b"200" in (await get(port)).split(b"\r\n")[0]
    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert all(r.exc_info is None for r in caplog.records), "a traceback was logged"
    busy = [r for r in records if "the most served at once" in r.getMessage()]
    files = [r for r in records if "too many open files" in r.getMessage()]
    assert 1 <= len(busy) <= 2, [r.getMessage() for r in busy]
    assert 1 <= len(files) <= 2, [r.getMessage() for r in records]
    assert "LimitNOFILE" in files[0].getMessage()
    assert len(records) <= 6, [r.getMessage() for r in records]
