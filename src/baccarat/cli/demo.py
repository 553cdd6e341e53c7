"""``baccarat demo``: the whole table with no hardware.

It starts, in a temporary folder:

* an embedded MQTT broker (amqtt, TCP and WebSocket listeners on loopback), unless
  ``--broker HOST:PORT`` names one (whose MQTT-over-WebSocket port ``--ws-port`` the web
  board uses);
* a virtual electronic shoe on a pty (the ``framed`` protocol, with dealer buttons);
* the daemon, ``baccarat run``, as a process of its own, on that pty and broker;
* the web board, whose address it prints;
* a pit that settles misdeals the way a pit boss would (an extra or foreign card is
  burned, a wrong declared result is declared again from the cards);
* a dealer who deals a full 8-deck shoe at a watchable pace and makes a few mistakes;
* the live terminal board (or, when the output is not a terminal, one line per event).

Ctrl-C stops everything cleanly. The folder goes with the demo, unless ``--keep`` keeps
it (the journal and the daemon's log, for ``baccarat journal``, ``recall`` and ``roads``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

from baccarat.boards.feed import parse_broker
from baccarat.boards.web_server import DEFAULT_WS_PORT
from baccarat.drivers.events import CardDrawn, DealerButton
from baccarat.mqtt import MqttClient, MqttSettings
from baccarat.rules.alarm_kinds import HOLDS_CARD
from baccarat.sim_hardware.dealer import Dealer, Mistake
from baccarat.sim_hardware.virtual_shoe import VirtualShoe

TABLE: Final = "DEMO"
PREFIX: Final = "baccarat"
MISTAKES: Final[dict[int, Mistake]] = {
    4: "extra_card",
    9: "wrong_declare",
    60: "foreign_card",
    22: "extra_card",
}
"""Round number -> the dealer's mistake in that round."""
BURNABLE: Final = HOLDS_CARD
"""Alarm kinds that hold a card aside: the demo's pit accepts each card as a burn."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat demo``."""
    parser.add_argument("--fast", action="store_true", help="deal fast (0.05 s a card)")
    parser.add_argument("--pace", type=float, default=0.6, help="seconds between cards")
    parser.add_argument("--seed", type=int, default=2026, help="the shoe's shuffle")
    parser.add_argument("--broker", help="HOST[:PORT] of a broker to use instead of amqtt")
    parser.add_argument(
        "--ws-port",
        type=int,
        default=DEFAULT_WS_PORT,
        help=f"with --broker: its MQTT-over-WebSocket port, for the web board ({DEFAULT_WS_PORT})",
    )
    parser.add_argument("--web-port", type=int, default=8080, help="web board port (0: any)")
    parser.add_argument(
        "--plain", action="store_true", help="one line per event instead of the live board"
    )
    parser.add_argument("--rounds", type=int, default=0, help="stop after N rounds (0: shoe)")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the journal and the daemon's log (and say where) instead of deleting them",
    )


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def embedded_broker(port: int, ws_port: int) -> AsyncIterator[None]:
    """An amqtt broker on loopback: MQTT on ``port``, MQTT over WebSocket on ``ws_port``."""
    import logging

    from amqtt.broker import Broker

    for name in ("amqtt", "transitions"):
        logging.getLogger(name).setLevel(logging.ERROR)
    broker = Broker(
        {
            "listeners": {
                "default": {"type": "tcp", "bind": f"127.0.0.1:{port}"},
                "ws": {"type": "ws", "bind": f"127.0.0.1:{ws_port}"},
            },
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
            },
        }
    )
    await broker.start()
    try:
        yield
    finally:
        await broker.shutdown()


def daemon_config(
    folder: Path, host: str, port: int, shoe: str, mqtt_version: str = "5"
) -> Path:
    """The daemon's table.toml for the demo (amqtt speaks MQTT 3.1.1 only)."""
    path = folder / "table.toml"
    path.write_text(
        f'table = "{TABLE}"\nprofile = "macau"\n'
        '[rules]\nopen_mode = "explicit"\n'
        f'[device]\nkind = "serial"\npath = "{shoe}"\nprotocol = "framed"\nbaud = 115200\n'
        f'[broker]\nhost = "{host}"\nport = {port}\nmqtt_version = "{mqtt_version}"\n'
        f'[journal]\nfolder = "{folder / "journal"}"\n'
    )
    return path


class Pit:
    """Watches the alarms and settles them; notices when the shoe is over."""

    def __init__(self, host: str, port: int, plain: bool) -> None:
        self.host, self.port, self.plain = host, port, plain
        self.base = f"{PREFIX}/{TABLE}"
        self.results: dict[int, str] = {}
        self.alarms: list[dict[str, Any]] = []
        self.online = asyncio.Event()
        self.shoe_over = asyncio.Event()
        self.settled = asyncio.Event()
        self.settled.set()
        self.pending: set[int] = set()
        self.rounds = 0
        self.round_done = asyncio.Event()

    async def run(self) -> None:
        """Subscribe and react until cancelled."""
        settings = MqttSettings(self.host, self.port, client_id="", version="3.1.1")
        async with MqttClient(settings) as client:
            await client.subscribe(f"{self.base}/#", qos=1)
            async for message in client.messages():
                if "/cmd/" in message.topic or not message.payload:
                    continue  # the pit's own commands; a retained message cleared
                body = json.loads(message.payload)
                await self._react(client, body)

    async def _react(self, client: MqttClient, body: dict[str, Any]) -> None:
        kind = body.get("type")
        if kind == "status" and body.get("state") == "online":
            self.online.set()
        elif kind == "result":
            self.results[body["round"]] = body["winner"]
            self.rounds += 1
            self.round_done.set()
        elif kind == "void":
            self.rounds += 1
            self.round_done.set()
        elif kind == "shoe" and body.get("phase") == "closed":
            self.shoe_over.set()
        elif kind == "alarm":
            self.alarms.append(body)
            if body["correctable"]:
                self.pending.add(body["id"])
                self.settled.clear()
            await self._settle(client, body)
        elif kind == "alarm_cleared":
            self.pending.discard(body["id"])
            if not self.pending:
                self.settled.set()
        if self.plain:
            _print_plain(body)

    async def _settle(self, client: MqttClient, alarm: dict[str, Any]) -> None:
        if alarm["kind"] in BURNABLE:
            body = json.dumps({"alarm": alarm["id"]}).encode()  # this alarm's card, not another's
            for _ in range(alarm.get("count") or 1):
                await client.publish(f"{self.base}/cmd/accept_as_burn", body, qos=1)
        elif alarm["kind"] == "missing_card":
            # The simulated dealer never goes back for a card: the pit voids the round.
            body = json.dumps({"reason": "pit: a card was missing"}).encode()
            await client.publish(f"{self.base}/cmd/void", body, qos=1)
        elif alarm["kind"] == "result_mismatch" and alarm["round"] in self.results:
            winner = self.results[alarm["round"]]
            body = json.dumps({"winner": winner}).encode()
            await client.publish(f"{self.base}/cmd/declare", body, qos=1)


def _print_plain(body: dict[str, Any]) -> None:
    kind = body.get("type")
    if kind == "card":
        where = "" if body["round"] is None else f"  (round {body['round']})"  # the shoe's burn
        print(f"  card {body['position']:>4} {body['card'] or '??'}{where}")
    elif kind == "result":
        print(
            f"round {body['round']}: {body['winner'].upper()}  "
            f"player {body['player']['total']} {' '.join(body['player']['cards'])} | "
            f"banker {body['banker']['total']} {' '.join(body['banker']['cards'])}"
        )
    elif kind == "alarm":
        print(f"ALARM {body['kind']}: {body['text']}")
    elif kind == "alarm_cleared":
        print(f"  alarm {body['id']} settled by {body['by']}")
    elif kind == "void":
        print(f"round {body['round']}: VOID ({body['reason']})")
    elif kind == "shoe" and body["phase"] in ("ready", "closed"):
        print(f"  shoe {body['shoe']}: {body['phase']}, {body['cards_left']} cards left")
    sys.stdout.flush()


async def _deal(shoe: VirtualShoe, pit: Pit, seed: int, pace: float) -> None:
    await pit.online.wait()
    await asyncio.sleep(0.5)
    dealer = Dealer(decks=8, seed=seed, mistakes_at=MISTAKES)
    for event in dealer.events():
        if isinstance(event, DealerButton) and event.button == "open":
            await asyncio.sleep(pace)  # the dealer waits for the pit to settle the table
            await asyncio.wait_for(pit.settled.wait(), timeout=None)
        shoe.send(event)
        if isinstance(event, CardDrawn | DealerButton):
            await asyncio.sleep(pace)
    await shoe.drain()


async def _board(host: str, port: int, plain: bool) -> None:
    if plain:
        await asyncio.Event().wait()
    from baccarat.boards.feed import BoardFeed, show

    await show(BoardFeed(host, port, PREFIX, TABLE))


async def _web_board(
    stack: contextlib.AsyncExitStack, host: str, ws_port: int, web_port: int
) -> str:
    """Start the web board (on ``web_port``, or any free port if it is taken); its address."""
    from baccarat.boards.web_server import WebBoardServer, page_config

    config = page_config(host, ws_port, TABLE, PREFIX)
    server = WebBoardServer(config, port=web_port)
    try:
        await server.start()
    except OSError:
        server = WebBoardServer(config, port=0)
        await server.start()
    stack.push_async_callback(server.close)
    return server.url


async def _listening(host: str, port: int) -> bool:
    """Whether something accepts TCP connections on ``host:port`` (within two seconds)."""
    try:
        async with asyncio.timeout(2):
            _, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def _stop_when_done(pit: Pit, rounds: int) -> None:
    if rounds:
        while pit.rounds < rounds:
            pit.round_done.clear()
            await pit.round_done.wait()
        return
    await pit.shoe_over.wait()
    await asyncio.sleep(3)  # leave the last result on the board for a moment


async def _demo(args: argparse.Namespace, folder: Path) -> int:
    pace = 0.05 if args.fast else args.pace
    plain = args.plain or not sys.stdout.isatty()
    async with contextlib.AsyncExitStack() as stack:
        if args.broker:
            host, port = parse_broker(args.broker)
            ws_port = args.ws_port
        else:
            host, port, ws_port = "127.0.0.1", free_port(), free_port()
            await stack.enter_async_context(embedded_broker(port, ws_port))
        shoe_link = str(folder / "shoe")
        shoe = await stack.enter_async_context(VirtualShoe(shoe_link, "framed", baud=115200))
        mqtt_version = "5" if args.broker else "3.1.1"  # the embedded amqtt has no MQTT 5
        config = daemon_config(folder, host, port, shoe_link, mqtt_version)
        log = await asyncio.to_thread((folder / "daemon.log").open, "wb")
        stack.callback(log.close)
        daemon = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "baccarat.cli", "run", "--config", str(config),
            stdout=log, stderr=subprocess.STDOUT,
        )
        stack.push_async_callback(_stop_process, daemon)
        url = await _web_board(stack, host, ws_port, args.web_port)
        print(f"broker {host}:{port}; daemon log {folder / 'daemon.log'}")
        print(f"web board: {url}")
        if args.broker and not await _listening(host, ws_port):
            print(
                f"  but nothing listens on {host}:{ws_port}, the page's MQTT-over-WebSocket "
                "port: give the broker's with --ws-port"
            )
        pit = Pit(host, port, plain)
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(pit.run()),
                group.create_task(_deal(shoe, pit, args.seed, pace)),
                group.create_task(_board(host, port, plain)),
            ]
            await _stop_when_done(pit, args.rounds)
            for task in tasks:
                task.cancel()
        settled = [a for a in pit.alarms if a["correctable"]]
        print(f"{pit.rounds} rounds, {len(settled)} alarm(s) raised and settled by the pit, "
              f"{len(pit.alarms) - len(settled)} notice(s).")
    return 0


async def _stop_process(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    process.terminate()
    try:
        async with asyncio.timeout(10):
            await process.wait()
    except TimeoutError:
        process.kill()
        await process.wait()


def run(args: argparse.Namespace) -> int:
    """Play the demo until the shoe ends or Ctrl-C; 2 if the arguments are bad."""
    problem = _bad_arguments(args)
    if problem:
        print(f"baccarat demo: {problem}", file=sys.stderr)
        return 2
    if args.keep:
        folder = Path(tempfile.mkdtemp(prefix="baccarat-demo-"))
        status = _play(args, folder)
        _print_kept(folder)
        return status
    with tempfile.TemporaryDirectory(prefix="baccarat-demo-") as tmp:
        return _play(args, Path(tmp))


def _bad_arguments(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, or None."""
    if args.broker:
        try:
            parse_broker(args.broker)
        except ValueError as exc:
            return f"--broker: {exc}"
    for name, port in (("--ws-port", args.ws_port), ("--web-port", args.web_port)):
        if not 0 <= port < 65536:
            return f"bad port for {name}: {port}"
    return None


def _play(args: argparse.Namespace, folder: Path) -> int:
    try:
        return asyncio.run(_demo(args, folder))
    except KeyboardInterrupt:
        print("stopped.")
        return 0


def _print_kept(folder: Path) -> None:
    journal = folder / "journal"
    print(f"kept the journal in {journal} and the daemon's log in {folder / 'daemon.log'}; try")
    for command in ("journal verify", "recall", "roads"):
        print(f"  baccarat {command} {journal}")
