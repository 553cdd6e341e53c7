"""The daemon speaks systemd's notify protocol: READY once up, watchdog pings from its loop."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

from support.daemon import Daemon
from support.mosquitto import Mosquitto


async def test_ready_and_watchdog_pings(tmp_path: Path, mosquitto: Mosquitto) -> None:
    address = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.setblocking(False)
    daemon = Daemon(
        tmp_path, mosquitto,
        env={"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "600000"},  # ping every 0.3 s
    )
    received: list[str] = []
    try:
        await asyncio.to_thread(daemon.start, wait_ready=False)
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                async with asyncio.timeout(1):
                    data = await loop.sock_recv(sock, 4096)
            except TimeoutError:
                continue
            received.append(data.decode())
            if sum("WATCHDOG=1" in r for r in received) >= 4 and any(
                "READY=1" in r for r in received
            ):
                break
        assert await asyncio.to_thread(daemon.stop) == 0
        while True:  # what it said on the way out
            try:
                received.append(sock.recv(4096).decode())
            except BlockingIOError:
                break
    finally:
        daemon.close()
        sock.close()
    ready = [r for r in received if "READY=1" in r]
    assert ready, received
    assert "table T1" in ready[0]  # STATUS= goes with READY=1
    assert sum("WATCHDOG=1" in r for r in received) >= 4
    assert "STOPPING=1" in received[-1]  # said on SIGTERM
