"""Card-to-subscriber latency through the real daemon, beside a bare relay, in one run.

A card's line is written on a pty (the shoe's side); the clock stops when its ``card``
message reaches a subscriber through a loopback mosquitto. The daemon (``baccarat run``,
a process of its own, journal fdatasync'd for every input) and a bare relay (a process
that reads the pty and publishes each line at QoS 1, nothing else) are measured in
turns over the same cards. Also printed: the daemon's resident memory after a full shoe
and its CPU use while idle.

    python bench/latency.py [--cards 1000] [--gap 0.004] [--journal DIR]
    python bench/latency.py --profile macau --cards 400 [--no-edge]   # the live edge's cost

The cards go at ``--gap`` seconds apart, so that each is measured alone, not queued
behind the previous one. The daemon runs the ``csm`` profile (an automatic shuffler:
no burn, no cut card, no end of shoe), so any number of cards is a valid deal; a shoe's
profile (``--profile macau``: 416 cards) also has the live edge computed after every card
in the daemon's worker thread, which ``--no-edge`` turns off. The
journal's fdatasync costs what the disk under ``--journal`` makes it cost (the output
names its file system; on tmpfs it costs nothing). The targets printed are the ones of
issue 14: daemon p50 within 2.5x and p99 within 3.5x of the bare relay.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tty
from collections.abc import Iterator
from pathlib import Path

import aiomqtt

from baccarat.controller.engine.shoe_inputs import shuffled_shoe

RELAY = r"""
import asyncio, os, sys, aiomqtt
async def main(path, port):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    lines = asyncio.Queue()
    buf = bytearray()
    def readable():
        buf.extend(os.read(fd, 4096))
        while b"\n" in buf:
            i = buf.index(b"\n")
            lines.put_nowait(bytes(buf[:i]))
            del buf[: i + 1]
    asyncio.get_running_loop().add_reader(fd, readable)
    async with aiomqtt.Client("127.0.0.1", port) as client:
        print("ready", flush=True)
        while True:
            line = await lines.get()
            await client.publish("relay/card", line.strip(), qos=1)
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_mosquitto(folder: Path, port: int) -> subprocess.Popen[bytes]:
    """A throwaway mosquitto on 127.0.0.1:port."""
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    conf = folder / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    proc = subprocess.Popen([binary, "-c", str(conf)], stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc


def wait_port(port: int, timeout: float = 10.0) -> None:
    """Until something accepts connections on the port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def open_pty() -> tuple[int, str]:
    """A raw pty pair: the master fd (the shoe's side) and the slave's path."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    path = os.ttyname(slave)
    return master, path


def card_lines(count: int) -> Iterator[bytes]:
    """Scanning-shoe lines of seeded 8-deck shoes."""
    n = 0
    seed = 0
    while True:
        for card in shuffled_shoe(8, seed):
            yield f"{card.shoe_code}\r\n".encode()
            n += 1
            if n == count:
                return
        seed += 1


async def measure(
    master: int, port: int, topic: str, lines: list[bytes], gap: float
) -> list[float]:
    """Write each line, wait for its message; the latencies in seconds."""
    latencies: list[float] = []
    async with aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe(topic, qos=1)
        await asyncio.sleep(0.3)
        messages = client.messages
        for line in lines:
            start = time.perf_counter()
            os.write(master, line)
            async with asyncio.timeout(5):
                await anext(messages)
            latencies.append(time.perf_counter() - start)
            await asyncio.sleep(gap)
    return latencies


def summary(name: str, latencies: list[float]) -> tuple[float, float]:
    """Print p50, p99 and max in microseconds; return p50 and p99."""
    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(
        f"  {name:<28} p50 {p50 * 1e6:8.0f} us   p99 {p99 * 1e6:8.0f} us   "
        f"max {ordered[-1] * 1e6:8.0f} us   ({len(ordered)} cards)"
    )
    return p50, p99


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def filesystem(folder: Path) -> str:
    """The type of the file system that holds ``folder`` (from /proc/self/mounts)."""
    best, kind = "", "unknown"
    target = str(folder.resolve())
    with contextlib.suppress(OSError), open("/proc/self/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            _, mount_point, fs_type, *_ = line.split()
            inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
            if inside and len(mount_point) >= len(best):
                best, kind = mount_point, fs_type
    return kind


def start_daemon(
    folder: Path, port: int, device: str, journal: Path, *, profile: str, edge: bool
) -> subprocess.Popen[bytes]:
    """``baccarat run`` on the pty, journal with fdatasync, the live edge on or off."""
    config = folder / "table.toml"
    config.write_text(
        f'table = "BENCH"\nprofile = "{profile}"\n'
        f'[device]\nkind = "serial"\npath = "{device}"\nprotocol = "line"\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {port}\n'
        f'[journal]\nfolder = "{journal}"\nfsync = true\n'
        f'[edge]\nenabled = {str(edge).lower()}\n'
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "baccarat.cli",
            "run",
            "--config",
            str(config),
            "--log-level",
            "WARNING",
        ],
    )


async def send_command(port: int, name: str, body: bytes = b"{}") -> None:
    """Publish an operator command and wait for its reply.

    Sent again every 3 s until the reply comes (60 s at most): a daemon that has not yet
    subscribed to its commands (it says online first) never sees the first.
    """
    async with aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe("baccarat/BENCH/reply", qos=1)
        async with asyncio.timeout(60):
            while True:
                await client.publish(f"baccarat/BENCH/cmd/{name}", body, qos=1)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(3):
                        await anext(client.messages)
                        return


def main() -> None:
    """Run the measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=1000)
    parser.add_argument("--gap", type=float, default=0.004, help="seconds between cards")
    parser.add_argument("--journal", type=Path, help="journal folder (default: a temp dir)")
    parser.add_argument(
        "--profile", default="csm",
        help="csm (no end of shoe, no live edge: any number of cards) or a shoe's profile, "
        "e.g. macau, whose live edge is computed after every card (--cards 400 at most)",
    )
    parser.add_argument("--no-edge", action="store_true", help="[edge] enabled = false")
    args = parser.parse_args()
    lines = list(card_lines(args.cards))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        journal = args.journal or folder / "journal"
        port = free_port()
        broker = start_mosquitto(folder, port)
        procs: list[subprocess.Popen[bytes]] = [broker]
        try:
            print(f"{args.cards} cards, one every {args.gap * 1000:.1f} ms, loopback mosquitto, "
                  f"profile {args.profile}, live edge {'off' if args.no_edge else 'on'}")
            journal.mkdir(parents=True, exist_ok=True)
            print(f"journal: {journal} ({filesystem(journal)}, fdatasync on)")
            relay_master, relay_pty = open_pty()
            relay = subprocess.Popen(
                [sys.executable, "-c", RELAY, relay_pty, str(port)], stdout=subprocess.PIPE
            )
            procs.append(relay)
            assert relay.stdout is not None
            relay.stdout.readline()
            daemon_master, daemon_pty = open_pty()
            daemon = start_daemon(
                folder, port, daemon_pty, journal, profile=args.profile, edge=not args.no_edge
            )
            procs.append(daemon)
            time.sleep(1.5)
            asyncio.run(send_command(port, "shoe"))
            # Alternate blocks so both see the same machine conditions.
            relay_lat: list[float] = []
            daemon_lat: list[float] = []
            block = 100
            for i in range(0, len(lines), block):
                chunk = lines[i : i + block]
                relay_lat += asyncio.run(measure(relay_master, port, "relay/card", chunk, args.gap))
                daemon_lat += asyncio.run(
                    measure(daemon_master, port, "baccarat/BENCH/card", chunk, args.gap)
                )
            if os.environ.get("LATENCY_DEBUG"):
                worst = sorted(range(len(daemon_lat)), key=lambda i: -daemon_lat[i])[:12]
                print("  slowest daemon cards (index: us):",
                      ", ".join(f"{i}: {daemon_lat[i] * 1e6:.0f}" for i in worst))
            r50, r99 = summary("bare relay", relay_lat)
            d50, d99 = summary("daemon (journal fdatasync)", daemon_lat)
            print(
                f"  ratio daemon / relay: p50 {d50 / r50:.2f}x (target <= 2.5x), "
                f"p99 {d99 / r99:.2f}x (target <= 3.5x)"
            )
            print(
                f"  daemon resident memory after {args.cards} cards: "
                f"{rss_mb(daemon.pid):.1f} MB (target < 60 MB)"
            )
            before = cpu_seconds(daemon.pid)
            time.sleep(5)
            idle = (cpu_seconds(daemon.pid) - before) / 5
            print(f"  daemon CPU while idle: {idle * 100:.2f} % of one core over 5 s")
        finally:
            for proc in reversed(procs):  # the daemon before the broker it talks to
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5)


if __name__ == "__main__":
    main()
