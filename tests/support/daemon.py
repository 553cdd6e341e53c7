"""The real daemon as a process, and a recording subscriber, for hardware-in-loop tests.

Used as::

    daemon = Daemon(tmp_path, broker, device=shoe_path, protocol="framed").start()
    async with Recorder(broker) as board:
        ...
        await board.wait_for(lambda r: r.phase() == "closed", timeout=60)
    daemon.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt

from baccarat.chain import split
from support.mosquitto import Mosquitto, _die_with_parent

READY_TIMEOUT = 20.0


LOG_TAIL = 6000
"""Bytes of a closed daemon's log printed with the test's output."""


class Daemon:
    """``baccarat run`` in a process of its own, with a config file written for it."""

    def __init__(
        self,
        folder: Path,
        broker: Mosquitto,
        *,
        device: str | None = None,
        protocol: str = "framed",
        baud: int = 115200,
        profile: str = "macau",
        rules: dict[str, Any] | None = None,
        open_mode: str | None = "implicit",
        table: str = "T1",
        env: dict[str, str] | None = None,
        broker_env: dict[str, str] | None = None,
    ) -> None:
        """A daemon's configuration in ``folder``; :meth:`start` runs it.

        ``open_mode``: most tests deal cards without the dealer's buttons, so a round
        opens with its first card unless ``rules`` say otherwise; ``None`` leaves the
        daemon's default (``auto``: explicit for a framed shoe).
        """
        self.folder = folder
        self.broker = broker
        self.table = table
        self.journal = folder / "journal"
        self.config = folder / "table.toml"
        self.log_file = folder / "daemon.log"
        self.env = dict(env or {})
        self.broker_env = broker_env if broker_env is not None else broker.env()
        self._process: subprocess.Popen[bytes] | None = None
        self._log_offset = 0
        lines = [f'table = "{table}"', f'profile = "{profile}"', "allow_test_decks = true"]
        rules = dict(rules or {})
        if open_mode is not None:
            rules.setdefault("open_mode", open_mode)
        if rules:
            lines.append("[rules]")
            lines += [f"{k} = {json.dumps(v)}" for k, v in rules.items()]
        if device is None:
            lines += ["[device]", 'kind = "none"']
        else:
            lines += [
                "[device]", 'kind = "serial"', f'path = "{device}"',
                f'protocol = "{protocol}"', f"baud = {baud}",
            ]
        lines += ["[journal]", f'folder = "{self.journal}"', "fsync = true"]
        self.config.write_text("\n".join(lines) + "\n")

    def start(self, *, wait_ready: bool = True) -> Daemon:
        """Start the process; by default wait until it says it is ready."""
        env = {**os.environ, **self.broker_env, **self.env, "PYTHONUNBUFFERED": "1"}
        log = self.log_file.open("ab")
        self._log_offset = self.log_file.stat().st_size
        self._process = subprocess.Popen(
            [sys.executable, "-m", "baccarat.cli", "run", "--config", str(self.config),
             "--log-level", os.environ.get("BACCARAT_TEST_LOG_LEVEL", "INFO")],
            stdout=log, stderr=subprocess.STDOUT, env=env,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
        )
        log.close()
        if wait_ready:
            self.wait_log("ready: table", READY_TIMEOUT)
        return self

    def wait_log(self, text: str, timeout: float) -> None:
        """Until ``text`` appears in this run's log (raise with the log if it does not)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return
            if self._process is not None and self._process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"daemon never logged {text!r}; log:\n{self.log()}")

    def log(self) -> str:
        """What the daemon wrote since its last start."""
        with self.log_file.open("rb") as f:
            f.seek(self._log_offset)
            return f.read().decode(errors="replace")

    @property
    def pid(self) -> int:
        """The process id."""
        assert self._process is not None
        return self._process.pid

    def wait(self, timeout: float) -> int:
        """Until the process ends by itself; its exit status (raise with the log if not)."""
        assert self._process is not None
        try:
            return self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"daemon still running; log:\n{self.log()}") from None

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM, wait; the exit status."""
        process = self._process
        if process is None or process.poll() is not None:
            return process.returncode if process else 0
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"daemon ignored SIGTERM; log:\n{self.log()}") from None

    def kill(self) -> None:
        """SIGKILL: a power cut, as far as the process can tell."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def close(self) -> None:
        """Whatever state it is in, make sure it is gone.

        The end of its log is printed: pytest shows it with a failed test's output.
        """
        with contextlib.suppress(AssertionError):
            self.stop()
        self.kill()
        with contextlib.suppress(OSError):
            tail = self.log_file.read_bytes()[-LOG_TAIL:].decode(errors="replace")
            print(f"--- the end of {self.log_file} ---\n{tail}")

    def journal_files(self) -> list[Path]:
        """The journal's shoe files, oldest first."""
        return sorted(self.journal.glob("shoe-*.journal"))

    def journaled_cards(self) -> list[str]:
        """The cards the journal holds, in order (all files)."""
        from baccarat.controller.engine.inputs import DrawCard
        from baccarat.controller.journal.reader import read_journal_file

        return [
            str(inp.card)
            for path in self.journal_files()
            for _, inp in read_journal_file(path).records
            if isinstance(inp, DrawCard) and inp.card is not None
        ]


class Recorder:
    """A board's subscription to one table: every message, kept in arrival order.

    With ``persistent`` (a fixed client id and clean_session off) the broker keeps the
    subscription and queues QoS 1 messages while the recorder is away; the recorder
    reconnects by itself when the broker goes away and comes back.
    """

    def __init__(
        self,
        broker: Mosquitto,
        *,
        table: str = "T1",
        prefix: str = "baccarat",
        persistent: bool = False,
        username: str | None = None,
        password: str | None = None,
    ) -> None:
        self.broker = broker
        self.topic = f"{prefix}/{table}/#"
        self.persistent = persistent
        self.username = username
        self.password = password
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.seals: list[tuple[Any, Any]] = []
        """(seq, seal) of each body that came with a chain member (baccarat.chain)."""
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._changed = asyncio.Event()

    async def __aenter__(self) -> Recorder:
        self._task = asyncio.create_task(self._run())
        async with asyncio.timeout(10):
            await self._subscribed.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        while True:
            try:
                await self._session()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.2)

    async def _session(self) -> None:
        kwargs: dict[str, Any] = {}
        if self.persistent:
            kwargs = {"identifier": "recorder", "clean_session": False}
        async with self.broker.client(
            username=self.username, password=self.password, **kwargs
        ) as client:
            await client.subscribe(self.topic, qos=1)
            self._subscribed.set()
            async for message in client.messages:
                if "/cmd/" in str(message.topic):
                    continue  # the pit's commands, not what the controller published
                payload = message.payload
                text = payload.decode() if isinstance(payload, bytes) else str(payload)
                if not text:
                    continue  # a retained message cleared (the fault topic after a fault)
                body, seal = split(text.encode())  # the chain member (docs/record.md)
                parsed = json.loads(body)
                if seal is not None:
                    self.seals.append((parsed.get("seq"), seal))
                self.received.append((str(message.topic), parsed))
                self._changed.set()

    async def wait_for(self, condition: Callable[[Recorder], bool], within: float) -> None:
        """Until ``condition(self)`` holds, at most ``within`` seconds.

        Then TimeoutError, with a summary of what arrived.
        """
        try:
            async with asyncio.timeout(within):
                while not condition(self):
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            kinds: dict[str, int] = {}
            for _, body in self.received:
                kinds[body.get("type", "?")] = kinds.get(body.get("type", "?"), 0) + 1
            alarms = self.bodies("alarm")[:3]
            faults = [b.get("text") for t, b in self.received if t.endswith("/fault")]
            seqs = [b["seq"] for _, b in self.received if isinstance(b.get("seq"), int)]
            raise TimeoutError(
                f"condition not met; received {kinds}; newest seq {max(seqs, default=None)};"
                f" faults: {faults}; first alarms: {alarms}"
            ) from None

    def bodies(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Bodies in arrival order (duplicates included), of one type if given."""
        return [b for _, b in self.received if kind is None or b.get("type") == kind]

    def by_seq(self) -> dict[int, dict[str, Any]]:
        """Engine messages by ``seq``; a duplicate must be identical (asserted)."""
        seen: dict[int, dict[str, Any]] = {}
        for _, body in self.received:
            seq = body.get("seq")
            if not isinstance(seq, int):
                continue
            if seq in seen:
                assert seen[seq] == body, f"seq {seq} published twice with different content"
            seen[seq] = body
        return seen

    def phase(self) -> str | None:
        """The phase in the newest shoe message."""
        shoes = self.bodies("shoe")
        return shoes[-1]["phase"] if shoes else None


async def retained_body(
    broker: Mosquitto, topic: str = "status", table: str = "T1"
) -> dict[str, Any] | None:
    """What a subscriber that connects now reads on ``topic`` (None: nothing retained)."""
    async with broker.client() as client:
        await client.subscribe(f"baccarat/{table}/{topic}", qos=1)
        try:
            async with asyncio.timeout(2.0):
                async for message in client.messages:
                    assert isinstance(message.payload, bytes)
                    body: dict[str, Any] = json.loads(split(message.payload)[0])
                    return body
        except TimeoutError:
            return None
    return None


def replay_journal(daemon: Daemon, profile_toml: Path | None = None) -> list[dict[str, Any]]:
    """The messages the journal's inputs give, as bodies.

    ``baccarat journal show --replay`` of the newest journal file, piped into
    ``baccarat replay``.
    """
    out: list[dict[str, Any]] = []
    for path in daemon.journal_files()[-1:]:
        lines = subprocess.run(
            [sys.executable, "-m", "baccarat.cli", "journal", "show", str(path), "--replay"],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout
        args = ["--profile", str(profile_toml)] if profile_toml else []
        proc = subprocess.run(
            [sys.executable, "-m", "baccarat.cli", "replay", "-", *args],
            input=lines, capture_output=True, text=True, timeout=60, check=False,
        )
        out += [json.loads(line) for line in proc.stdout.splitlines()]
    return out
