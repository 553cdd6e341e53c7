"""The metrics page server on its own: IPv4 and IPv6 hosts, the page, a refused port."""

from __future__ import annotations

import asyncio
import logging
import socket
import urllib.request

import pytest

from baccarat.metrics_http import serve_page


def free_port(family: socket.AddressFamily, host: str) -> int:
    with socket.socket(family) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as page:
        return bytes(page.read())


@pytest.mark.parametrize(
    ("host", "url_host", "family"),
    [
        ("127.0.0.1", "127.0.0.1", socket.AF_INET),
        pytest.param("::1", "[::1]", socket.AF_INET6,
                     marks=pytest.mark.skipif(not ipv6(), reason="no IPv6 loopback here")),
    ],
)
async def test_the_page_is_served_on_the_host_given(
    host: str, url_host: str, family: socket.AddressFamily, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="baccarat.metrics_http")
    port = free_port(family, host)
    serving = asyncio.create_task(serve_page(lambda: b"up 1\n", host, port))
    try:
        for _ in range(100):
            if f"metrics on http://{host}:{port}/metrics" in caplog.text:
                break
            await asyncio.sleep(0.05)
        body = await asyncio.to_thread(fetch, f"http://{url_host}:{port}/metrics")
    finally:
        serving.cancel()
    assert body == b"up 1\n"
    assert "cannot listen" not in caplog.text


async def test_a_port_taken_is_logged_and_returns(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        await asyncio.wait_for(serve_page(lambda: b"", "127.0.0.1", port), 10)
    assert f"metrics: cannot listen on 127.0.0.1:{port}" in caplog.text
