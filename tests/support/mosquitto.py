"""A real mosquitto broker for tests, on free loopback ports, in a folder of its own.

    broker = Mosquitto(tmp_path, users={"pit": "s3cret"}, acl=ACL, tls=True).start()
    async with broker.client(username="pit", password="s3cret", tls=True) as client: ...
    broker.stop()    # the same ports stay reserved for this broker
    broker.start()   # back on the same ports, as after a broker restart on a casino floor
    broker.close()   # always: stops (kills if need be) and reaps the process

The configuration is written into the folder (persistence off unless asked), with an
optional password file (made with ``mosquitto_passwd -U``), an ACL file, a TLS listener
with a throwaway CA and server certificate (made with ``openssl``) and a websockets
listener. :meth:`start` returns once every listener accepts connections; a broker that
fails to start raises :class:`MosquittoError` with its log. The process gets SIGKILL if
the test process dies (PR_SET_PDEATHSIG), so nothing outlives a killed pytest.
Everything is synchronous except :meth:`start_async` / :meth:`stop_async`, which poll
with ``asyncio.sleep`` so that a test's event loop keeps running while the broker restarts.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import aiomqtt

from baccarat.floor.nodes import free_ports

HOST = "127.0.0.1"
START_TIMEOUT = 10.0  # seconds for every listener to accept connections
STOP_TIMEOUT = 5.0  # seconds after SIGTERM before SIGKILL
POLL = 0.01  # seconds between readiness probes
CERT_DAYS = 2
PORT_ATTEMPTS = 3  # first starts that may move to other ports when theirs were taken
PR_SET_PDEATHSIG = 1


class MosquittoError(RuntimeError):
    """The broker could not be found, configured or started; the text says why."""


def find_program(name: str, *folders: str) -> str:
    """The path of a program on $PATH or in one of ``folders``, or MosquittoError."""
    found = shutil.which(name) or next(
        (str(Path(f) / name) for f in folders if os.access(Path(f) / name, os.X_OK)), None
    )
    if found is None:
        raise MosquittoError(
            f"{name} not found (on $PATH or in {', '.join(folders)}): "
            "run scripts/setup --system, which installs Debian's mosquitto"
        )
    return found


class Mosquitto:
    """One mosquitto process, its configuration files and its (reserved) ports."""

    def __init__(
        self,
        folder: Path,
        *,
        anonymous: bool = True,
        users: Mapping[str, str] | None = None,
        acl: str | Path | None = None,
        tls: bool = False,
        require_certificate: bool = False,
        websockets: bool = False,
        persistence: bool = False,
        config: str | None = None,
        extra_config: str = "",
    ) -> None:
        """Prepare (not start) a broker whose files live in ``folder``.

        ``anonymous``: allow clients without a username. ``users``: username -> password,
        written to a password file. ``acl``: ACL text, or the path of an ACL file.
        ``tls``: add a TLS listener (:attr:`tls_port`) with a throwaway CA (:attr:`ca_file`);
        ``require_certificate``: that listener also wants a client certificate signed by
        the CA (:meth:`client_certificate`). ``websockets``: add an MQTT-over-WebSocket
        listener (:attr:`websockets_port`). ``persistence``: keep retained messages and
        sessions across :meth:`stop` / :meth:`start`. ``config``: a complete configuration
        to use instead of the generated one, with ``{port}``, ``{tls_port}``,
        ``{websockets_port}``, ``{folder}``, ``{password_file}``, ``{acl_file}``,
        ``{ca_file}``, ``{cert_file}``, ``{key_file}`` filled in. ``extra_config``: lines
        appended to the generated configuration.
        """
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.anonymous = anonymous
        self.users = dict(users or {})
        self.acl = acl
        self.tls = tls or require_certificate
        self.require_certificate = require_certificate
        self.websockets = websockets
        self.persistence = persistence
        self.config_template = config
        self.extra_config = extra_config
        self.host = HOST
        self.port, self.tls_port, self.websockets_port = free_ports(3)
        self.config_file = self.folder / "mosquitto.conf"
        self.log_file = self.folder / "mosquitto.log"
        self.password_file = self.folder / "passwords"
        self.acl_file = self.folder / "acl"
        self.ca_file = self.folder / "ca.crt"
        self.cert_file = self.folder / "server.crt"
        self.key_file = self.folder / "server.key"
        self._process: subprocess.Popen[bytes] | None = None
        self._prepared = False
        self._log_offset = 0
        self._ran = False  # has it ever started? Then its ports are fixed.
        self._port_moves = 0
        self.starts = 0

    # ---- life cycle -------------------------------------------------------------------

    def start(self, timeout: float = START_TIMEOUT) -> Mosquitto:
        """Start the broker and wait (up to ``timeout`` seconds) until it accepts.

        A restart uses the ports of the first start, or fails saying they are taken. Only
        a first start whose ports were taken in the meantime moves to other free ports.
        """
        self._spawn()
        deadline = time.monotonic() + timeout
        while not self._ready(deadline):
            time.sleep(POLL)
        return self

    async def start_async(self, limit: float = START_TIMEOUT) -> Mosquitto:
        """:meth:`start` without blocking the event loop while waiting (``limit`` seconds)."""
        self._spawn()
        deadline = time.monotonic() + limit
        while True:
            if self._ready(deadline):
                return self
            await asyncio.sleep(POLL)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the broker gracefully (SIGTERM, then SIGKILL after ``timeout``); idempotent."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)  # in case it was paused
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._process = None

    async def stop_async(self, grace: float = STOP_TIMEOUT) -> None:
        """:meth:`stop` without blocking the event loop (SIGKILL after ``grace`` seconds)."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.terminate()
            deadline = time.monotonic() + grace
            while True:
                if process.poll() is not None:
                    break
                if time.monotonic() > deadline:
                    process.kill()
                    process.wait()
                    break
                await asyncio.sleep(POLL)
        self._process = None

    def kill(self) -> None:
        """Kill the broker at once (SIGKILL), as a crash or a power cut would."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        self._process = None

    def pause(self) -> None:
        """Freeze the broker (SIGSTOP): connections stay open but nothing is answered."""
        self._require_process().send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a broker frozen by :meth:`pause` (SIGCONT)."""
        self._require_process().send_signal(signal.SIGCONT)

    def close(self) -> None:
        """Stop the broker if it runs, whatever state it is in; idempotent."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()  # teardown: no need to be gentle
        if process is not None:
            process.wait()
        self._process = None

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        """Whether the broker process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The broker's process id while it runs."""
        return self._process.pid if self.running and self._process else None

    def log(self) -> str:
        """Everything the broker has logged, over all its starts."""
        try:
            return self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    # ---- clients ----------------------------------------------------------------------

    def client(
        self,
        *,
        username: str | None = None,
        password: str | None = None,
        tls: bool = False,
        websockets: bool = False,
        certificate: str | None = None,
        **kwargs: Any,
    ) -> aiomqtt.Client:
        """An aiomqtt client for this broker (not connected: use ``async with``).

        ``tls`` connects to the TLS listener and trusts :attr:`ca_file`; ``certificate``
        names a client certificate to present (made by :meth:`client_certificate`);
        ``websockets`` connects to the websockets listener. Other arguments go to
        ``aiomqtt.Client``.
        """
        port = self.port
        if tls or certificate:
            port = self.tls_port
            context = ssl.create_default_context(cafile=str(self.ca_file))
            if certificate is not None:
                cert, key = self.client_certificate(certificate)
                context.load_cert_chain(cert, key)
            kwargs["tls_context"] = context
        if websockets:
            port = self.websockets_port
            kwargs["transport"] = "websockets"
        return aiomqtt.Client(self.host, port, username=username, password=password, **kwargs)

    def client_certificate(self, name: str) -> tuple[Path, Path]:
        """A client certificate (and key) with common name ``name``, signed by the CA."""
        self._make_ca()
        cert, key = self.folder / f"client-{name}.crt", self.folder / f"client-{name}.key"
        if not cert.exists():
            _sign(self.folder, name, cert, key, self.ca_file, server=False)
        return cert, key

    def env(
        self, *, username: str | None = None, password: str | None = None, tls: bool = False
    ) -> dict[str, str]:
        """``BACCARAT_BROKER__*`` variables that point the daemon at this broker."""
        env = {
            "BACCARAT_BROKER__HOST": self.host,
            "BACCARAT_BROKER__PORT": str(self.tls_port if tls else self.port),
        }
        if username is not None:
            env["BACCARAT_BROKER__USERNAME"] = username
        if password is not None:
            env["BACCARAT_BROKER__PASSWORD"] = password
        if tls:
            env["BACCARAT_BROKER__TLS"] = "true"
            env["BACCARAT_BROKER__CA_FILE"] = str(self.ca_file)
        return env

    # ---- internals --------------------------------------------------------------------

    def _spawn(self) -> None:
        if self.running:
            raise MosquittoError(f"mosquitto already runs (pid {self.pid})")
        self._process = None
        if not self._prepared:
            self._prepare()
        with self.log_file.open("ab") as log:
            log.write(f"---- start {self.starts + 1} ----\n".encode())
            log.flush()
            self._log_offset = log.tell()
            self._process = subprocess.Popen(
                [find_program("mosquitto", "/usr/sbin"), "-c", str(self.config_file)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
            )
        self.starts += 1

    def _prepare(self) -> None:
        if self.users:
            lines = "".join(f"{user}:{password}\n" for user, password in self.users.items())
            self.password_file.write_text(lines)
            self.password_file.chmod(0o600)
            subprocess.run(
                [find_program("mosquitto_passwd", "/usr/bin"), "-U", str(self.password_file)],
                check=True,
                capture_output=True,
                timeout=30,
            )
        if self.acl is not None:
            text = self.acl.read_text() if isinstance(self.acl, Path) else self.acl
            self.acl_file.write_text(text)
            self.acl_file.chmod(0o600)
        if self.tls:
            self._make_ca()
            if not self.cert_file.exists():
                _sign(
                    self.folder,
                    "localhost",
                    self.cert_file,
                    self.key_file,
                    self.ca_file,
                    server=True,
                )
        self.config_file.write_text(self._config())
        self._prepared = True

    def _config(self) -> str:
        if self.config_template is not None:
            return self.config_template.format(**self._placeholders())
        lines = [
            "# written by tests/support/mosquitto.py",
            "per_listener_settings false",
            f"persistence {'true' if self.persistence else 'false'}",
            f"persistence_location {self.folder}/",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
            "log_timestamp_format %H:%M:%S",
            # as examples/mosquitto/bridge.conf: mosquitto's default (1000) drops what a
            # persistent subscriber has not taken once a table catches up after an outage
            # ("Outgoing messages are being dropped", seen under load); extra_config may
            # set its own below
            "max_queued_messages 100000",
            f"allow_anonymous {'true' if self.anonymous else 'false'}",
        ]
        if os.geteuid() == 0:
            lines.append("user root")  # else it drops to 'mosquitto', who cannot read our files
        if self.users:
            lines.append(f"password_file {self.password_file}")
        if self.acl is not None:
            lines.append(f"acl_file {self.acl_file}")
        lines += ["", f"listener {self.port} {self.host}"]
        if self.tls:
            lines += [
                "",
                f"listener {self.tls_port} {self.host}",
                f"cafile {self.ca_file}",
                f"certfile {self.cert_file}",
                f"keyfile {self.key_file}",
            ]
            if self.require_certificate:
                lines.append("require_certificate true")
        if self.websockets:
            lines += ["", f"listener {self.websockets_port} {self.host}", "protocol websockets"]
        return "\n".join([*lines, "", self.extra_config, ""])

    def _placeholders(self) -> dict[str, object]:
        return {
            "port": self.port,
            "tls_port": self.tls_port,
            "websockets_port": self.websockets_port,
            "folder": self.folder,
            "password_file": self.password_file,
            "acl_file": self.acl_file,
            "ca_file": self.ca_file,
            "cert_file": self.cert_file,
            "key_file": self.key_file,
        }

    def _listening_ports(self) -> list[int]:
        ports = {"{port}": self.port}
        if self.tls:
            ports["{tls_port}"] = self.tls_port
        if self.websockets:
            ports["{websockets_port}"] = self.websockets_port
        if self.config_template is not None:
            ports = {
                "{port}": self.port,
                "{tls_port}": self.tls_port,
                "{websockets_port}": self.websockets_port,
            }
            return [port for name, port in ports.items() if name in self.config_template]
        return list(ports.values())

    def _accepting(self) -> bool:
        """This start's process said it runs, and every listener accepts connections.

        The log line matters: a probe alone could reach another process on a taken port
        in the moment before our mosquitto gives up on it.
        """
        if not self._logged_running():
            return False
        return all(_accepts(self.host, port) for port in self._listening_ports())

    def _logged_running(self) -> bool:
        if not self._logs_to_us():
            return True  # a configuration of its own that logs elsewhere: probes must do
        with self.log_file.open("rb") as log:
            log.seek(self._log_offset)
            return b" running" in log.read()

    def _ready(self, deadline: float) -> bool:
        """True once started; False while starting; respawns on other ports if need be."""
        if self._accepting():
            self._ran = True
            return True
        process = self._require_process()
        if process.poll() is None:
            if time.monotonic() > deadline:
                self._fail_start()
            return False
        self._process = None
        if not self._ran and self._port_moves < PORT_ATTEMPTS and self._ports_taken():
            self._port_moves += 1
            self.port, self.tls_port, self.websockets_port = free_ports(3)
            self.config_file.write_text(self._config())
            self._spawn()
            return False
        raise MosquittoError(
            f"mosquitto exited with status {process.returncode} while starting:\n"
            f"{self.log()}\nconfiguration:\n{self.config_file.read_text()}"
        )

    def _logs_to_us(self) -> bool:
        """Whether the broker's "running" line reaches our log file (stderr)."""
        if self.config_template is None:
            return True
        dests = re.findall(r"^log_dest\s+(\w+)", self.config_template, re.MULTILINE)
        types = re.findall(r"^log_type\s+(\w+)", self.config_template, re.MULTILINE)
        return (not dests or "stderr" in dests) and (
            not types or bool({"information", "all"} & set(types))
        )

    def _ports_taken(self) -> bool:
        with self.log_file.open("rb") as log:
            log.seek(self._log_offset)
            return b"Address already in use" in log.read()

    def _fail_start(self) -> NoReturn:
        self.close()
        raise MosquittoError(f"mosquitto did not start in time:\n{self.log()}")

    def _require_process(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise MosquittoError("mosquitto is not running")
        return self._process

    def _make_ca(self) -> None:
        if self.ca_file.exists():
            return
        _openssl(
            self.folder,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            str(CERT_DAYS),
            "-subj",
            "/CN=baccarat test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-addext",
            "subjectKeyIdentifier=hash",
        )


def _sign(folder: Path, name: str, cert: Path, key: Path, ca: Path, *, server: bool) -> None:
    """A key and a certificate for ``name`` signed by the CA in ``folder``."""
    csr, ext = folder / f"{name}.csr", folder / f"{name}.ext"
    usage = "serverAuth" if server else "clientAuth"
    extensions = [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        f"extendedKeyUsage={usage}",
        "subjectKeyIdentifier=hash",
        "authorityKeyIdentifier=keyid:always",
    ]
    if server:
        extensions.append("subjectAltName=DNS:localhost,IP:127.0.0.1")
    ext.write_text("\n".join(extensions) + "\n")
    _openssl(
        folder,
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        str(key),
        "-out",
        str(csr),
        "-subj",
        f"/CN={name}",
    )
    _openssl(
        folder,
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca),
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        str(cert),
        "-days",
        str(CERT_DAYS),
        "-extfile",
        str(ext),
    )
    key.chmod(0o600)


def _openssl(folder: Path, *args: str) -> None:
    done = subprocess.run(
        [find_program("openssl", "/usr/bin"), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise MosquittoError(f"openssl {' '.join(args)} failed:\n{done.stderr}")


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


# Looked up once, here: a forked child of a threaded process should not call dlopen().
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the thread that started it dies.

    That thread is the test process's main thread unless a broker is started from another
    thread, which would then take the broker with it when it ends.
    """
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


MosquittoFactory = Callable[..., Mosquitto]
"""The ``mosquitto_factory`` fixture: ``mosquitto_factory(**options)`` -> a started broker."""
