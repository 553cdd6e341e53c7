"""A private PostgreSQL cluster for tests, on a free loopback port, in a folder of its own.

    cluster = Postgres().start()
    url = cluster.new_database()      # postgresql://baccarat@127.0.0.1:PORT/test_1
    cluster.close()

Debian's server binaries (``/usr/lib/postgresql/N/bin``; ``scripts/setup --system``
installs the ``postgresql`` package). ``initdb`` refuses to run as root, so under root the
cluster belongs to the ``postgres`` account and its folder is made outside pytest's
root-only tmp tree. Trust authentication on loopback only; the cluster is stopped (and
killed if need be) by :meth:`close`, and dies with the test process (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from support.mosquitto import _die_with_parent

START_TIMEOUT = 30.0


class PostgresError(RuntimeError):
    """The cluster could not be made or started; the text says why."""


def server_bin() -> Path:
    """Debian's PostgreSQL server binaries, the newest version installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise PostgresError(
            "PostgreSQL's server is not installed: run scripts/setup --system, which installs"
            " Debian's postgresql"
        )
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Postgres:
    """One cluster; :meth:`new_database` gives each test a database of its own."""

    def __init__(self) -> None:
        self.bin = server_bin()
        self.root = os.geteuid() == 0
        self.folder = Path(tempfile.mkdtemp(prefix="baccarat-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._databases = 0
        if self.root:
            shutil.chown(self.folder, "postgres", "postgres")

    def _as_owner(self, *argv: str) -> list[str]:
        if not self.root:
            return list(argv)
        # setpriv execs the program itself (runuser would stay as its parent, between our
        # signals and the server)
        return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *argv]

    def start(self) -> Postgres:
        """initdb, then the server; returns once it accepts connections."""
        done = subprocess.run(
            self._as_owner(str(self.bin / "initdb"), "-D", str(self.data), "-U", "baccarat",
                           "--auth=trust", "-E", "UTF8", "--no-sync"),
            capture_output=True, text=True, check=False,
        )
        if done.returncode:
            raise PostgresError(f"initdb failed: {done.stderr.strip()}")
        log = (self.folder / "server.log").open("ab")
        self._process = subprocess.Popen(
            self._as_owner(str(self.bin / "postgres"), "-D", str(self.data),
                           "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
                           "-c", f"unix_socket_directories={self.folder}", "-c", "fsync=on"),
            stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            if self._ready():
                return self
            time.sleep(0.1)
        raise PostgresError(f"postgres did not start:\n{self.log()}")

    def _ready(self) -> bool:
        done = subprocess.run(
            [str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-q"],
            check=False,
        )
        return done.returncode == 0

    def log(self) -> str:
        """What the server wrote."""
        path = self.folder / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    @property
    def url(self) -> str:
        """The maintenance database's URL."""
        return f"postgresql://baccarat@127.0.0.1:{self.port}/postgres"

    def new_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        self._databases += 1
        name = f"test_{self._databases}"
        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return f"postgresql://baccarat@127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        """Stop the server (SIGINT: fast shutdown; then SIGKILL) and remove its folder."""
        process = self._process
        if process is not None and process.poll() is None:
            process.send_signal(2)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
