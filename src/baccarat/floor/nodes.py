"""A three-node NATS JetStream cluster on this machine's loopback, for tests and the demo.

``scripts/floor-cluster`` runs it (``python -m baccarat.floor.nodes``); the tests' fixture
(``tests/support/nats.py``) and ``bench/floor_cluster.py`` use :class:`LocalCluster`. Each
node is a Debian ``nats-server`` (2.9.10) with its own folder under one private temporary
folder: its configuration, its log and its JetStream store, kept across :meth:`kill` /
:meth:`start_node` so that a node brought back rejoins with what it had, as after a power
cut. Ports are free loopback ports chosen once; a node brought back takes its own again.

The accounts are those of ``examples/nats/`` (:func:`users`): a relay per table, the
recorder, the pit's operators and the boards, each with the permissions that mirror the
mosquitto ACLs (``examples/mosquitto/floor-acl``). Passwords here are throwaway.

:meth:`LocalCluster.close` kills whatever is left, and the script stops the cluster after
``--seconds``; the tests also give every node ``PR_SET_PDEATHSIG`` (``preexec``), so that
nothing outlives a killed pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from baccarat.errors import BaccaratError

HOST: Final = "127.0.0.1"
NODES: Final = 3
CLUSTER_NAME: Final = "floor"
ACCOUNT: Final = "FLOOR"
"""The account every floor user is in (JetStream enabled); SYS is the system account."""
START_TIMEOUT: Final = 20.0
"""Seconds for a node to accept connections and for JetStream to elect its meta leader."""
PASSWORD: Final = "floor-test"  # noqa: S105
"""Every local account's password (a throwaway cluster on loopback)."""


class ClusterError(BaccaratError):
    """A local node did not start, or the cluster found no leader in time."""


def program() -> str:
    """The nats-server program (Debian installs it in /usr/sbin)."""
    found = shutil.which("nats-server") or next(
        (p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server") if os.access(p, os.X_OK)),
        None,
    )
    if found is None:
        raise ClusterError("nats-server is not installed (scripts/setup --system installs it)")
    return found


def users(
    tables: list[str], operators: list[str], prefix: str = "baccarat"
) -> list[dict[str, Any]]:
    """The floor account's users and permissions: the mosquitto ACLs in NATS subjects.

    ``relay-{table}``: publishes only its table's subjects (``{prefix}.{table}.*`` and
    replies), reads only its table's commands and limits (what it would carry back).
    ``relay-floor``: a relay at a floor broker, for every table (the floor broker's ACL
    already keeps each table to its own topics).
    ``recorder``: reads everything and uses the JetStream API (its stream and consumer).
    ``pit-{name}``: reads every table but the live edge (surveillance's alone: NRS 465.075,
    docs/surveillance.md), publishes commands only in its own name
    (``{prefix}.*.cmd.*.{name}``) and the tables' limits. ``board``: reads every table but
    the live edge, through subscriptions and the stream's direct get, publishes nothing else.
    ``surveillance``: reads every table, the live edge included, and writes nothing.
    Every user may subscribe to ``_INBOX.>`` (JetStream's acknowledgements and replies).
    """
    inbox = "_INBOX.>"
    out: list[dict[str, Any]] = []
    for table in tables:
        out.append({"user": f"relay-{table}", "password": PASSWORD, "permissions": {
            "publish": {"allow": [f"{prefix}.{table}.*", f"{prefix}.{table}.reply.>"]},
            "subscribe": {"allow": [inbox, f"{prefix}.{table}.cmd.>", f"{prefix}.{table}.limits"]},
        }})
    out.append({"user": "relay-floor", "password": PASSWORD, "permissions": {
        "publish": {"allow": [f"{prefix}.*.*"]},
        "subscribe": {"allow": [inbox]},
    }})
    out.append({"user": "recorder", "password": PASSWORD, "permissions": {
        "publish": {"allow": ["$JS.API.>", "$JS.ACK.>"]},
        "subscribe": {"allow": [inbox, f"{prefix}.>"]},
    }})
    direct = f"$JS.API.DIRECT.GET.{stream_name(prefix)}"
    for name in operators:
        out.append({"user": f"pit-{name}", "password": PASSWORD, "permissions": {
            "publish": {"allow": [f"{prefix}.*.cmd.*.{name}", f"{prefix}.*.limits",
                                  f"{direct}.>", f"$JS.API.STREAM.INFO.{stream_name(prefix)}"],
                        "deny": [f"{direct}.{prefix}.*.edge"]},
            "subscribe": {"allow": [inbox, f"{prefix}.>"], "deny": [f"{prefix}.*.edge"]},
        }})
    out.append({"user": "board", "password": PASSWORD, "permissions": {
        "publish": {"allow": [f"{direct}.{prefix}.*.*"], "deny": [f"{direct}.{prefix}.*.edge"]},
        "subscribe": {"allow": [inbox, f"{prefix}.>"], "deny": [f"{prefix}.*.edge"]},
    }})
    out.append({"user": "surveillance", "password": PASSWORD, "permissions": {
        "publish": {"allow": [f"{direct}.{prefix}.*.*"]},
        "subscribe": {"allow": [inbox, f"{prefix}.>"]},
    }})
    return out


def stream_name(prefix: str) -> str:
    """The stream that keeps the floor's messages: the prefix in capitals, as a name."""
    return "".join(c if c.isalnum() else "_" for c in prefix).upper()


@dataclass
class Node:
    """One nats-server of the cluster: its name, ports, folder and process."""

    index: int
    folder: Path
    client_port: int
    cluster_port: int
    http_port: int
    websocket_port: int
    mqtt_port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return f"n{self.index + 1}"

    @property
    def url(self) -> str:
        return f"nats://{HOST}:{self.client_port}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


class LocalCluster:
    """Three nats-server processes with JetStream on loopback, in ``folder``.

    ``mqtt``: each node has nats-server's MQTT listener too (``Node.mqtt_port``), for the
    bench's comparison of the relay with a mosquitto bridge (bench/floor_cluster.py).
    """

    def __init__(self, folder: Path, *, tables: list[str] | None = None,
                 operators: list[str] | None = None, prefix: str = "baccarat",
                 max_file_store: str = "2GB", mqtt: bool = False) -> None:
        self.folder = Path(folder)
        self.prefix = prefix
        self.tables = list(tables or [])
        self.operators = list(operators or ["ana", "ben"])
        self.max_file_store = max_file_store
        self.preexec: Callable[[], None] | None = None
        """Run in each node's process before exec (the tests' PR_SET_PDEATHSIG)."""
        self.mqtt = mqtt
        ports = free_ports(5 * NODES)
        self.nodes = [
            Node(i, self.folder / f"n{i + 1}", ports[5 * i], ports[5 * i + 1], ports[5 * i + 2],
                 ports[5 * i + 3], ports[5 * i + 4]) for i in range(NODES)
        ]

    @property
    def urls(self) -> list[str]:
        """Every node's client URL (a client given all three moves to another when one dies)."""
        return [node.url for node in self.nodes]

    @property
    def websocket_urls(self) -> list[str]:
        return [f"ws://{HOST}:{node.websocket_port}" for node in self.nodes]

    def config(self, node: Node) -> str:
        """The node's configuration: JetStream, the cluster's routes, the accounts."""
        routes = [f"nats://{HOST}:{other.cluster_port}" for other in self.nodes]
        accounts = {
            ACCOUNT: {"jetstream": "enabled", "users": users(self.tables, self.operators,
                                                             self.prefix)},
            "SYS": {"users": [{"user": "sys", "password": PASSWORD}]},
        }
        return "\n".join([
            f"server_name: {node.name}",
            f"listen: {HOST}:{node.client_port}",
            f"http: {HOST}:{node.http_port}",
            "max_payload: 1MB",
            f"jetstream {{ store_dir: {json.dumps(str(node.folder / 'js'))},"
            f" max_memory_store: 64MB, max_file_store: {self.max_file_store} }}",
            f"cluster {{ name: {CLUSTER_NAME}, listen: {HOST}:{node.cluster_port},"
            f" routes: {json.dumps(routes)} }}",
            f"websocket {{ listen: {json.dumps(f'{HOST}:{node.websocket_port}')}, no_tls: true }}",
            *([f"mqtt {{ listen: {json.dumps(f'{HOST}:{node.mqtt_port}')} }}"]
              if self.mqtt else []),
            f"accounts: {json.dumps(accounts, indent=1)}",
            "system_account: SYS",
            "",
        ])

    def set_tables(self, tables: list[str]) -> None:
        """The tables whose relays have accounts (before :meth:`start`)."""
        self.tables = list(tables)

    # ------------------------------------------------------------ life cycle

    def start(self, timeout: float = START_TIMEOUT) -> LocalCluster:
        """Start every node and wait until JetStream has a meta leader."""
        for node in self.nodes:
            self._spawn(node)
        self.wait_ready(timeout)
        return self

    def _spawn(self, node: Node) -> None:
        node.folder.mkdir(parents=True, exist_ok=True)
        config = node.folder / "nats.conf"
        config.write_text(self.config(node))
        log = (node.folder / "nats.log").open("ab")
        node.process = subprocess.Popen(
            [program(), "-c", str(config)], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, preexec_fn=self.preexec,  # noqa: PLW1509
        )
        log.close()

    def kill(self, index: int) -> None:
        """SIGKILL a node (its store stays, as after a power cut)."""
        node = self.nodes[index]
        if node.process is not None and node.process.poll() is None:
            node.process.send_signal(signal.SIGKILL)
            node.process.wait(10)

    def start_node(self, index: int, timeout: float = START_TIMEOUT) -> None:
        """Bring a killed node back on its own ports and store; returns once it accepts."""
        node = self.nodes[index]
        self._spawn(node)
        deadline = time.monotonic() + timeout
        while not _accepts(node.client_port):
            self._check(node)
            if time.monotonic() > deadline:
                raise ClusterError(f"{node.name} did not come back: {self.log(index)[-2000:]}")
            time.sleep(0.05)

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            while not _accepts(node.client_port):
                self._check(node)
                if time.monotonic() > deadline:
                    raise ClusterError(
                        f"{node.name} does not accept: {self.log(node.index)[-2000:]}")
                time.sleep(0.05)
        while self.meta_leader() is None:
            if time.monotonic() > deadline:
                raise ClusterError("JetStream elected no meta leader in time:"
                                   f" {self.log(0)[-2000:]}")
            time.sleep(0.1)

    def _check(self, node: Node) -> None:
        if node.process is not None and node.process.poll() is not None:
            raise ClusterError(f"{node.name} exited ({node.process.returncode}):"
                               f" {self.log(node.index)[-2000:]}")

    def close(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL) and reap it."""
        for node in self.nodes:
            process = node.process
            if process is None or process.poll() is not None:
                continue
            process.send_signal(signal.SIGTERM)
        for node in self.nodes:
            process = node.process
            if process is None:
                continue
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ what it says

    def log(self, index: int) -> str:
        path = self.nodes[index].folder / "nats.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def jsz(self, index: int, query: str = "") -> dict[str, Any] | None:
        """The node's /jsz monitoring page, or None if it does not answer."""
        node = self.nodes[index]
        if not node.alive:
            return None
        try:
            with urllib.request.urlopen(
                f"http://{HOST}:{node.http_port}/jsz{query}", timeout=1
            ) as answer:
                page: dict[str, Any] = json.load(answer)
                return page
        except (OSError, ValueError):
            return None

    def meta_leader(self) -> str | None:
        for node in self.nodes:
            page = self.jsz(node.index)
            leader = (page or {}).get("meta_cluster", {}).get("leader")
            if leader:
                return str(leader)
        return None

    def stream_leader(self, stream: str, consumer: str | None = None) -> int | None:
        """The index of the node that leads ``stream`` (or its ``consumer``) now, or None."""
        for node in self.nodes:
            page = self.jsz(node.index, "?accounts=true&streams=true&consumers=true")
            for account in (page or {}).get("account_details") or []:
                for info in account.get("stream_detail") or []:
                    if info.get("name") != stream:
                        continue
                    group = info
                    if consumer is not None:
                        found = [c for c in info.get("consumer_detail") or []
                                 if c.get("name") == consumer]
                        group = found[0] if found else {}
                    leader = (group.get("cluster") or {}).get("leader")
                    if leader:
                        return next((n.index for n in self.nodes if n.name == leader), None)
        return None


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that nothing listens on now (tests' brokers too)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind((HOST, 0))
        return [sock.getsockname()[1] for sock in socks]


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.2):
            return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    """``scripts/floor-cluster``: a local cluster until ``--seconds`` pass or Ctrl-C."""
    parser = argparse.ArgumentParser(prog="floor-cluster", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3600.0,
                        help="stop after this many seconds (default 3600)")
    parser.add_argument("--tables", default="T07,T08",
                        help="tables whose relays get an account (comma-separated)")
    parser.add_argument("--folder", type=Path, default=None,
                        help="keep the nodes' folders here (default: a temporary folder,"
                             " removed at the end)")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        folder = args.folder or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="floor-cluster-")))
        cluster = stack.enter_context(LocalCluster(folder, tables=args.tables.split(",")))
        print(json.dumps({"servers": cluster.urls, "websocket": cluster.websocket_urls,
                          "folder": str(folder), "password": PASSWORD}), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline:
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
                for node in cluster.nodes:
                    if not node.alive:
                        print(f"{node.name} exited: {cluster.log(node.index)[-500:]}",
                              file=sys.stderr)
                        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
