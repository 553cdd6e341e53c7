"""``baccarat record --broker HOST[:PORT] --db URL [--metrics-port N]``: the floor recorder.

See :mod:`baccarat.floor.recorder`; its metrics: :mod:`baccarat.floor.metrics`. With
``--cluster nats://A,nats://B,nats://C`` it records the NATS JetStream cluster's stream
instead of a broker (:mod:`baccarat.floor.cluster`, docs/cluster.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import time
from pathlib import Path

from baccarat import logs
from baccarat.boards.feed import parse_broker
from baccarat.chain import ChainError, read_keys
from baccarat.cli.common import add_log_arguments
from baccarat.floor.chain_watch import ChainWatch
from baccarat.floor.cluster import MAX_BYTES, ClusterAddress, ClusterRecorder
from baccarat.floor.metrics import RecorderMetrics
from baccarat.floor.recorder import BrokerAddress, Recorder, RecorderFailedError
from baccarat.floor.records import QUARANTINE_SAMPLE
from baccarat.floor.shuffle import DAY, FloorShuffle
from baccarat.floor.store import Received, Store, StoreError, open_store
from baccarat.floor.watchdog import TIMEOUT as STALL_TIMEOUT
from baccarat.metrics_http import serve_page
from baccarat.rules.shuffle_match import FLOOR_SHOES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat record``."""
    parser.add_argument("--broker", default="127.0.0.1:1883", help="the floor broker HOST[:PORT]")
    parser.add_argument(
        "--db", required=True,
        help="a SQLite file (PATH or sqlite:///PATH) or postgresql://user@host/db",
    )
    parser.add_argument("--prefix", default="baccarat", help="the tables' topic prefix")
    parser.add_argument("--username", help="the recorder's broker account")
    parser.add_argument("--password-file", type=Path, help="a file holding its password")
    parser.add_argument(
        "--client-id", default="baccarat-recorder",
        help="stable: the broker keeps this session's messages while the recorder is away",
    )
    parser.add_argument(
        "--metrics-port", type=int, metavar="N",
        help="serve Prometheus metrics on http://HOST:N/metrics (the lag, the counters)",
    )
    parser.add_argument(
        "--metrics-host", default="127.0.0.1",
        help="address of the metrics endpoint (127.0.0.1: only this machine)",
    )
    parser.add_argument(
        "--shuffle-hours", type=float, default=DAY, metavar="H",
        help="the shuffle check: every shoe against every table's shoes of the last H hours"
        f" ({DAY:.0f}; 0: no check)",
    )
    parser.add_argument(
        "--shuffle-shoes", type=int, default=FLOOR_SHOES, metavar="N",
        help=f"shoes the check holds at most ({FLOOR_SHOES:,}: about 140 MiB)",
    )
    parser.add_argument(
        "--stall-timeout", type=float, default=STALL_TIMEOUT, metavar="S",
        help="seconds the broker may deliver nothing, the recorder's probe due back, before"
        f" the recorder reconnects ({STALL_TIMEOUT:.0f}; 0: no watchdog)",
    )
    parser.add_argument(
        "--cluster", metavar="URLS",
        help="record the NATS JetStream cluster (its nodes' nats:// URLs, comma-separated)"
        " instead of the MQTT broker (docs/cluster.md)",
    )
    parser.add_argument("--cluster-user", default="recorder",
                        help="the recorder's account on the cluster (password: --password-file)")
    parser.add_argument(
        "--stream-bytes", type=int, default=MAX_BYTES, metavar="N",
        help=f"the stream's size limit if the recorder makes it ({MAX_BYTES:,} bytes)",
    )
    parser.add_argument(
        "--quarantine-keep", type=int, default=QUARANTINE_SAMPLE, metavar="N",
        help=f"quarantined bodies kept, the newest ({QUARANTINE_SAMPLE:,}: at most 64 MiB);"
        " every one is counted all the same, by topic and reason (docs/limits.md)",
    )
    parser.add_argument(
        "--keys", type=Path, metavar="FILE",
        help="the floor's keys file: check every table's chain as it comes, a break published"
        " on {prefix}/floor/surveillance (docs/record.md)",
    )
    add_log_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Record until SIGTERM or SIGINT."""
    logs.configure(args.log_level, args.log_format)
    try:
        host, port = parse_broker(args.broker)
    except ValueError as exc:
        print(f"baccarat record: --broker: {exc}", file=sys.stderr)
        return 2
    if args.metrics_port is not None and not 0 < args.metrics_port < 65536:
        print(f"baccarat record: bad port for --metrics-port: {args.metrics_port}",
              file=sys.stderr)
        return 2
    if not 0 <= args.stall_timeout <= 86400 or 0 < args.stall_timeout < 1:
        print("baccarat record: --stall-timeout must be 0 (off) or 1 to 86400 seconds",
              file=sys.stderr)
        return 2
    if not (args.shuffle_hours >= 0 and 1 <= args.shuffle_shoes <= 1_000_000):
        print("baccarat record: --shuffle-hours must be 0 or more and --shuffle-shoes 1 to"
              " 1000000", file=sys.stderr)
        return 2
    password = None
    if args.password_file is not None:
        try:
            password = args.password_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            print(f"baccarat record: {args.password_file}: {exc.strerror}", file=sys.stderr)
            return 2
    broker = BrokerAddress(
        host=host, port=port, username=args.username,
        password=password, client_id=args.client_id,
    )
    chain = None
    if args.keys is not None:
        try:
            chain = ChainWatch(read_keys(args.keys), prefix=args.prefix)
        except ChainError as exc:
            print(f"baccarat record: --keys: {exc}", file=sys.stderr)
            return 2
    try:
        store = open_store(args.db)
        store.quarantine_keep = max(0, args.quarantine_keep)
    except StoreError as exc:
        print(f"baccarat record: {exc}", file=sys.stderr)
        return 2
    try:
        metrics = None if args.metrics_port is None else (args.metrics_host, args.metrics_port)
        watch = None
        if args.shuffle_hours > 0:
            watch = FloorShuffle(store, prefix=args.prefix, hours=args.shuffle_hours,
                                 shoes=args.shuffle_shoes)
            watch.load(time.time())
        cluster = None if args.cluster is None else ClusterAddress(
            tuple(args.cluster.split(",")), args.cluster_user, password, args.client_id)
        stream_bytes = args.stream_bytes
        asyncio.run(_record(broker, store, args.prefix, metrics, watch,
                            stall_timeout=args.stall_timeout, cluster=cluster,
                            stream_bytes=stream_bytes, chain=chain))
    except StoreError as exc:  # the day's cards could not be read
        print(f"baccarat record: {exc}", file=sys.stderr)
        return 2
    except RecorderFailedError as exc:  # logged with its traceback
        print(f"baccarat record: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


async def _record(
    broker: BrokerAddress, store: Store, prefix: str, metrics: tuple[str, int] | None,
    watch: FloorShuffle | None, *, stall_timeout: float, cluster: ClusterAddress | None = None,
    stream_bytes: int = MAX_BYTES, chain: ChainWatch | None = None,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    hooks = [hook.stored for hook in (watch, chain) if hook is not None]

    async def watching(received: list[Received]) -> list[tuple[str, bytes]]:
        return [finding for hook in hooks for finding in await hook(received)]

    recorder = Recorder(broker, store, prefix=prefix, watch=watching if hooks else None,
                        stall_timeout=stall_timeout) if cluster is None else ClusterRecorder(
        cluster, store, prefix=prefix, watch=watching if hooks else None,
        stream_max_bytes=stream_bytes)
    serving = None
    if metrics is not None:
        page = RecorderMetrics(recorder).page
        serving = asyncio.create_task(
            serve_page(page, *metrics, name="recorder metrics"), name="recorder-metrics"
        )
    try:
        await recorder.run(stop)
    finally:
        if serving is not None:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
    c = recorder.counters
    logging.getLogger("baccarat.floor").info(
        "stopped: %s; %d delivered and not yet stored (the broker delivers them again);"
        " stopped reading the broker %d time(s), behind",
        c.account(), recorder.lag()[0], c.pauses,
    )
