"""The Prometheus endpoint, scraped over HTTP while a real daemon deals a real round.

The real daemon process, a virtual framed shoe on a pty, a real mosquitto; the page is
fetched with urllib like any scraper would, and its figures are checked against what the
shoe dealt.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baccarat.cards import parse_card
from baccarat.controller.positions import CURSOR_INTERVAL
from baccarat.drivers.events import CardDrawn, ShoeInserted, UnreadableCard
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

WITHIN = 15.0
ROUND = ("9S", "2H", "KD", "5C")  # P1 B1 P2 B2: player 9 (natural), banker 7
"""A round that needs no third card: player wins with a natural."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scrape(port: int, path: str = "/metrics") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as page:
        assert page.headers["Content-Type"].startswith("text/plain")
        return str(page.read().decode())


def sample(page: str, name: str, labels: str = "") -> float:
    """The value of one sample of the page (``labels`` as written: ``winner="player"``)."""
    pattern = re.escape(name) + (r"\{" + re.escape(labels) + r"\}" if labels else "")
    found = re.search(rf"^{pattern} (\S+)$", page, re.MULTILINE)
    assert found, f"no {name}{{{labels}}} in:\n{page}"
    return float(found.group(1))


@contextlib.asynccontextmanager
async def a_metrics_table(
    folder: Path, mosquitto: Mosquitto
) -> AsyncIterator[tuple[VirtualShoe, Recorder, Daemon, int]]:
    """A daemon with no burn on a framed shoe, its metrics on a free port, and a board.

    Yields the shoe, the board, the daemon (started) and the port.
    """
    port = free_port()
    shoe_path = str(folder / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(
            folder, mosquitto, device=shoe_path, rules={"burn": "none"},
            env={"BACCARAT_METRICS__PORT": str(port)},
        )
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                yield shoe, board, daemon, port
        finally:
            daemon.close()


async def test_metrics_count_what_was_dealt(tmp_path: Path, mosquitto: Mosquitto) -> None:
    async with a_metrics_table(tmp_path, mosquitto) as (shoe, board, daemon, port):
        shoe.send(ShoeInserted())
        for code in ROUND:
            shoe.send(CardDrawn(parse_card(code)))
        await board.wait_for(lambda b: bool(b.bodies("result")), WITHIN)
        shoe.send(UnreadableCard(b""))  # held aside by its alarm, out of the shoe
        await board.wait_for(lambda b: bool(b.bodies("alarm")), WITHIN)
        page = await asyncio.to_thread(scrape, port)
    assert f"metrics on http://127.0.0.1:{port}/metrics" in daemon.log()
    assert sample(page, "baccarat_cards_total") == len(ROUND) + 1
    assert sample(page, "baccarat_burned_total") == 0
    assert sample(page, "baccarat_results_total", 'winner="player"') == 1
    assert sample(page, "baccarat_results_total", 'winner="banker"') == 0
    assert sample(page, "baccarat_link_up") == 1
    assert sample(page, "baccarat_link_state", 'state="up"') == 1
    assert sample(page, "baccarat_link_total", 'counter="frames_ok"') >= len(ROUND) + 1
    assert sample(page, "baccarat_broker_connected") == 1
    assert sample(page, "baccarat_outbox_dropped_total") == 0
    # every record (the shoe, four cards, the link coming up) was flushed and timed
    records = sample(page, "baccarat_journal_last_record")
    assert records >= len(ROUND) + 1
    assert sample(page, "baccarat_journal_fdatasync_seconds_count") >= records
    assert sample(page, "baccarat_published_total") >= 1


async def test_an_unknown_path_is_404_and_the_table_goes_on(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    port = free_port()
    daemon = Daemon(tmp_path, mosquitto, env={"BACCARAT_METRICS__PORT": str(port)})
    try:
        await asyncio.to_thread(daemon.start)
        with pytest.raises(urllib.error.HTTPError) as caught:
            await asyncio.to_thread(scrape, port, "/")
        assert caught.value.code == 404
        with socket.create_connection(("127.0.0.1", port), timeout=5) as rude:
            rude.sendall(b"\x00\xff garbage without a line end")
        page = await asyncio.to_thread(scrape, port)
        assert sample(page, "baccarat_broker_connected") == 1
    finally:
        assert daemon.stop() == 0


async def test_a_taken_port_is_logged_and_the_table_serves(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        daemon = Daemon(tmp_path, mosquitto, env={"BACCARAT_METRICS__PORT": str(port)})
        try:
            await asyncio.to_thread(daemon.start)
            daemon.wait_log("metrics: cannot listen on 127.0.0.1", WITHIN)
        finally:
            assert daemon.stop() == 0
    assert "Traceback" not in daemon.log()


def test_metrics_are_off_by_default(tmp_path: Path, mosquitto: Mosquitto) -> None:
    daemon = Daemon(tmp_path, mosquitto).start()
    try:
        assert "metrics on" not in daemon.log()
    finally:
        assert daemon.stop() == 0


FD_LIMIT = 160
"""The daemon's file descriptors in the next test: the unit's 1,024 scaled down with the
connections (200 here for the 1,000 that stopped a table)."""
FD_LIMIT_HOOK = f"""
import resource

_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, ({FD_LIMIT}, _hard))
"""


async def test_idle_connections_do_not_stop_the_table(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """200 connections that send nothing: the table goes on dealing and journaling.

    They were each served (a file descriptor held) until their timeout, so that the
    journal could not open a file: a journal fault, "Too many open files", exit 3.
    """
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(FD_LIMIT_HOOK)
    port = free_port()
    daemon = Daemon(tmp_path, mosquitto, env={
        "BACCARAT_METRICS__PORT": str(port), "PYTHONPATH": str(hooks),
    })
    idle: list[asyncio.StreamWriter] = []
    try:
        async with Recorder(mosquitto) as board, mosquitto.client() as pit:
            await asyncio.to_thread(daemon.start)
            for _ in range(200):
                with contextlib.suppress(OSError, TimeoutError):
                    async with asyncio.timeout(2.0):
                        _, writer = await asyncio.open_connection("127.0.0.1", port)
                        idle.append(writer)
            await pit.publish("baccarat/T1/cmd/shoe", b"{}", qos=1)  # a new journal file
            await board.wait_for(lambda b: bool(b.bodies("shoe")), WITHIN)
            await asyncio.sleep(2 * CURSOR_INTERVAL)  # the cursor written meanwhile
            assert "CRITICAL" not in daemon.log(), daemon.log()
            for writer in idle:
                writer.close()
            await asyncio.sleep(0.5)  # the daemon sees them go
            page = await asyncio.to_thread(scrape, port)
            assert sample(page, "baccarat_journal_last_record") >= 1
            assert await asyncio.to_thread(daemon.stop) == 0
    finally:
        for writer in idle:
            writer.close()
        daemon.close()
    assert len(idle) == 200
    assert (daemon.journal / "published").read_text().strip().isdigit()
