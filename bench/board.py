"""The daemon's CPU time per card and memory as an arm64 board runs it, under qemu-user.

The arm64 package (``packaging/build-deb --arch arm64``) is installed as on a board into
a root of Debian 12's own arm64 python3 (``packaging/arm64-root``, then ``dpkg -x`` and its
postinst, as ``tests/packaging/test_deb_arm64.py`` does), and its ``baccarat run`` is
started there under qemu-aarch64 (binfmt_misc, ``QEMU_LD_PREFIX``). Beside it, the same
daemon natively on this machine (this virtualenv's Python). Each gets a whole seeded
8-deck shoe on a pty as a scanning shoe's lines (csm profile, journal fdatasync'd,
QoS 1 to a loopback mosquitto), one card at a time: each card is written when the previous
one's ``card`` message has reached a subscriber. Printed for each: the daemon's CPU time
(user + system, from /proc) per card, the card-to-subscriber p50, its resident memory
after the shoe, and its CPU while idle.

    python bench/board.py --deb dist/baccarat-controller_0.1.0_arm64.deb [--cards 416]

Under qemu-user the CPU time and the memory are qemu's: the emulated program's plus the
translator's (its code cache is in the resident figure).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from latency import (
    card_lines,
    cpu_seconds,
    filesystem,
    free_port,
    measure,
    open_pty,
    rss_mb,
    send_command,
    start_mosquitto,
)

ROOT = Path(__file__).resolve().parents[1]
VENV = Path("opt/baccarat-controller/venv")
START_TIMEOUT = 120.0
"""Seconds for a daemon to start and answer its first command (a few under qemu)."""


def install_arm64(deb: Path, folder: Path) -> Path:
    """The arm64 package installed into a root of Debian 12's arm64 python3; the root."""
    done = subprocess.run(
        [ROOT / "packaging" / "arm64-root", folder], capture_output=True, text=True,
        check=True, timeout=600,
    )  # fmt: skip
    root = Path(done.stdout.splitlines()[-1])
    subprocess.run(["dpkg", "-x", deb, root], check=True, timeout=120)
    control = folder.parent / "control"
    subprocess.run(["dpkg-deb", "-e", deb, control], check=True, timeout=60)
    env = {
        **os.environ,
        "BACCARAT_INSTALL_ROOT": str(root),
        "BACCARAT_PYTHON": str(root / "usr/bin/python3"),
        "QEMU_LD_PREFIX": str(root),
    }
    done = subprocess.run(
        [control / "postinst", "configure"], env=env, capture_output=True, text=True,
        check=False, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"board.py: the package's postinst failed:\n{done.stderr}")
    return root


def start_daemon(
    python: Path, folder: Path, port: int, device: str, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """``baccarat run`` with this Python on the pty, csm profile, journal fdatasync'd."""
    journal = folder / "journal"
    journal.mkdir()
    config = folder / "table.toml"
    config.write_text(
        f'table = "BENCH"\nprofile = "csm"\n'
        f'[device]\nkind = "serial"\npath = "{device}"\nprotocol = "line"\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {port}\n'
        f'[journal]\nfolder = "{journal}"\nfsync = true\n'
    )
    command = [python, "-m", "baccarat.cli", "run", "--config", config, "--log-level", "WARNING"]
    return subprocess.Popen([str(a) for a in command], env=env)


def wait_until_it_answers(port: int) -> None:
    """Open a shoe by command, asking again every 10 s until the daemon answers."""
    start = time.monotonic()
    while True:
        try:
            asyncio.run(send_command(port, "shoe"))
        except TimeoutError:
            if time.monotonic() - start > START_TIMEOUT:
                raise
        else:
            return


def one_side(name: str, python: Path, env: dict[str, str], lines: list[bytes], tmp: Path) -> None:
    """Measure one daemon over the shoe and print its line."""
    folder = tmp / name
    folder.mkdir()
    port = free_port()
    broker = start_mosquitto(folder, port)
    master, device = open_pty()
    daemon = start_daemon(python, folder, port, device, env)
    try:
        wait_until_it_answers(port)
        before = cpu_seconds(daemon.pid)
        latencies = asyncio.run(measure(master, port, "baccarat/BENCH/card", lines, 0.0))
        per_card = (cpu_seconds(daemon.pid) - before) / len(lines)
        rss = rss_mb(daemon.pid)
        before = cpu_seconds(daemon.pid)
        time.sleep(5)
        idle = (cpu_seconds(daemon.pid) - before) / 5
        print(
            f"  {name:<22} CPU {per_card * 1e3:7.2f} ms/card   card-to-subscriber p50 "
            f"{statistics.median(latencies) * 1e3:7.2f} ms   RSS {rss:6.1f} MB   "
            f"idle CPU {idle * 100:5.2f} %"
        )
    finally:
        for proc in (daemon, broker):  # the daemon before the broker it talks to
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        os.close(master)


def main() -> None:
    """Install the arm64 package, run both daemons over the shoe, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deb", type=Path, required=True, help="the arm64 package")
    parser.add_argument("--cards", type=int, default=416, help="cards (416: one 8-deck shoe)")
    args = parser.parse_args()
    if not Path("/proc/sys/fs/binfmt_misc/qemu-aarch64").exists():
        sys.exit("board.py: no qemu-aarch64 in binfmt_misc (scripts/setup --system)")
    lines = list(card_lines(args.cards))
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        print(f"installing {args.deb.name} into a Debian 12 arm64 root (qemu-user)")
        root = install_arm64(args.deb.resolve(), tmp / "arm64" / "root")
        print(
            f"{args.cards} cards, each sent when the previous one arrived; csm profile; "
            f"journal fdatasync'd on {filesystem(tmp)}; loopback mosquitto; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        one_side("amd64 (native)", Path(sys.executable), dict(os.environ), lines, tmp)
        arm64 = {**os.environ, "QEMU_LD_PREFIX": str(root)}
        one_side("arm64 (qemu-aarch64)", root / VENV / "bin/python", arm64, lines, tmp)


if __name__ == "__main__":
    main()
