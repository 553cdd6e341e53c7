"""``baccarat board``: broker address, topic routing, and a real subscription."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator

import aiomqtt
import pytest

from baccarat.boards.feed import BoardFeed, parse_broker, receive
from baccarat.boards.state import BoardState
from baccarat.cli import build_parser
from boards.messages_for_tests import alarm, roads, round_open, shoe

BASE = "baccarat/T1"
WAIT_SECONDS = 5.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("localhost", ("localhost", 1883)),
        ("broker.lan:1884", ("broker.lan", 1884)),
        ("[::1]:1885", ("::1", 1885)),
        ("[fe80::1]", ("fe80::1", 1883)),
    ],
)
def test_parse_broker(text: str, expected: tuple[str, int]) -> None:
    assert parse_broker(text) == expected


@pytest.mark.parametrize("text", ["host:port", "host:0", "host:70000", ":1883", "[]:1"])
def test_parse_broker_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=r"port|host"):
        parse_broker(text)


def test_the_subcommand_is_registered() -> None:
    args = build_parser("board").parse_args(["board", "--broker", "h:1", "--table", "T9"])
    assert (args.broker, args.table, args.prefix) == ("h:1", "T9", "baccarat")


def test_messages_are_routed_by_topic() -> None:
    state = receive(BoardState(), BASE, f"{BASE}/shoe", shoe(1).to_json().encode())
    assert state.shoe is not None
    state = receive(state, BASE, f"{BASE}/roads", roads(2, "BP").to_json().encode())
    assert state.roads is not None
    assert len(state.roads.bead_plate.cells) == 2


def test_status_bodies_json_or_plain() -> None:
    body = b'{"schema": 1, "type": "status", "state": "offline", "table": "T1"}'
    assert receive(BoardState(), BASE, f"{BASE}/status", body).controller == "offline"
    assert receive(BoardState(), BASE, f"{BASE}/status", b"online").controller == "online"


def test_commands_other_tables_and_garbage() -> None:
    state = BoardState()
    assert receive(state, BASE, f"{BASE}/cmd/void", b"{}") is state
    assert receive(state, BASE, "baccarat/T2/shoe", shoe(1).to_json().encode()) is state
    bad = receive(state, BASE, f"{BASE}/card", b"not json")
    assert bad.rejected == 1
    assert receive(bad, BASE, f"{BASE}/card", b'{"type": "card"}').rejected == 2


def test_reconnection_delay_doubles_and_is_capped() -> None:
    backoff = BoardFeed("localhost", 1, "baccarat", "T1").backoff
    assert 0.25 <= backoff.next_delay() <= 0.5
    assert 0.5 <= backoff.next_delay() <= 1.0
    for _ in range(30):
        backoff.next_delay()
    assert 5.0 <= backoff.next_delay() <= 10.0


# --- against a real broker -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def broker() -> Iterator[int]:
    """A mosquitto on a free local port, stopped after the test."""
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    if not shutil.which(binary):
        pytest.skip("mosquitto is not installed")
    port = free_port()
    process = subprocess.Popen(
        [binary, "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            process.poll()
            if process.returncode is not None:
                pytest.skip("mosquitto did not start")
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=5)


async def wait_for(condition: Callable[[], object]) -> None:
    """Poll the feed's state (a plain value another task replaces) until ``condition``."""
    async with asyncio.timeout(WAIT_SECONDS):
        while not condition():  # noqa: ASYNC110 - nothing to wait on but the state itself
            await asyncio.sleep(0.02)


async def test_the_feed_folds_retained_and_live_messages(broker: int) -> None:
    async with aiomqtt.Client("127.0.0.1", broker) as publisher:
        await publisher.publish(f"{BASE}/shoe", shoe(1).to_json(), qos=1, retain=True)
        await publisher.publish(f"{BASE}/roads", roads(2, "BBP").to_json(), qos=1, retain=True)
        await publisher.publish(f"{BASE}/status", b"online", qos=1, retain=True)
        feed = BoardFeed("127.0.0.1", broker, "baccarat", "T1")
        task = asyncio.create_task(feed.run())
        try:
            await wait_for(lambda: feed.state.roads is not None and feed.state.controller)
            assert feed.state.link == "connected"
            await publisher.publish(f"{BASE}/round", round_open(3, 4).to_json(), qos=1)
            await publisher.publish(f"{BASE}/alarm", alarm(4, 9, 4).to_json(), qos=1)
            await publisher.publish(f"{BASE}/alarm", b"garbage", qos=1)
            await wait_for(lambda: feed.state.alarms and feed.state.rejected)
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    state = feed.state
    assert state.roads is not None
    assert [c.winner for c in state.roads.bead_plate.cells] == ["banker", "banker", "player"]
    assert state.live is not None
    assert state.live.round == 4
    assert [a.id for a in state.alarms] == [9]
    assert state.controller == "online"
    assert state.rejected == 1


async def test_the_feed_says_so_when_the_broker_is_away() -> None:
    feed = BoardFeed("127.0.0.1", free_port(), "baccarat", "T1")
    task = asyncio.create_task(feed.run())
    try:
        await wait_for(lambda: feed.state.link.startswith("lost"))
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert "retry in" in feed.state.link
