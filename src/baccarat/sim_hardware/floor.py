"""``baccarat sim floor --tables N``: a floor of simulated tables, for tests and demonstrations.

Each table is what a real one is: a ``baccarat run`` daemon in a process of its own, with
its own configuration file and journal, reading a virtual framed shoe on a pty; this
process holds the N shoes and deals on each, shoe after shoe, ``pace`` seconds between
cards, the shoe of the rule ``profile`` each daemon is configured with
(:meth:`~baccarat.sim_hardware.dealer.Dealer.for_profile`), with mistakes at
``misdeal_rate`` per round. A dealer stops while his table has an alarm open that waits
for a person (the daemon tells the shoe), until the pit settles it, unless
``dealer_ignores_alarms``. The daemons publish to the broker given (a floor broker, or
each to the same mosquitto), as the table's account ``username`` (``{table}`` in it is the
table's name).

Tables are named ``T01``, ``T02``, ... (``T001`` ... from 100 tables on). Everything of a
table lives in ``folder/T01/``: ``table.toml``, ``journal/``, ``daemon.log`` and the
shoe's symlink ``shoe``.

SIGTERM or SIGINT (Ctrl-C) stops the dealing, then every daemon (SIGTERM, then SIGKILL
after :data:`STOP_TIMEOUT`), then the shoes. A daemon that will not start, or that stops
by itself, stops the whole floor with its log's last lines and exit status 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TextIO

from pydantic import ValidationError

from baccarat.drivers.events import CardDrawn
from baccarat.errors import BaccaratError
from baccarat.rules.profiles import Profile, ProfileError, load_profile
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe

READY_TIMEOUT: Final = 60.0
READY_PER_TABLE: Final = 3.0
"""Seconds the daemons may take to say they are ready: READY_TIMEOUT, and READY_PER_TABLE
more per table (they all start at once, and a busy machine starts a hundred slowly)."""
STOP_TIMEOUT: Final = 15.0
"""Seconds a daemon gets to stop after SIGTERM."""
READY_LINE: Final = "ready: table"
"""What the daemon logs once it serves its table."""
BAUD: Final = 115200
LOG_TAIL: Final = 20
HELD_EVERY: Final = 10.0
"""Seconds between two looks at how many tables wait on the pit (said when it changes)."""
"""Lines of a failed daemon's log to show."""


class FloorError(BaccaratError):
    """A table of the simulated floor could not start or stopped by itself."""


@dataclass(frozen=True)
class FloorPlan:
    """What to simulate: how many tables, where, dealing how, publishing where."""

    tables: int
    folder: Path
    broker_host: str = "127.0.0.1"
    broker_port: int = 1883
    username: str | None = None
    """The tables' broker account; ``{table}`` is replaced by each table's name."""
    password_file: Path | None = None
    topic_prefix: str = "baccarat"
    pace: float = 0.2
    """Seconds between cards at each table."""
    decks: int | None = None
    """Decks in each shoe; ``None``: the profile's."""
    seed: int = 1
    profile: str = "macau"
    """The rule profile of every table (a name, or a profile TOML file's absolute path)."""
    misdeal_rate: float = 0.0
    """The dealers' mistakes per round."""
    dealer_ignores_alarms: bool = False
    fsync: bool = True
    log_level: str = "INFO"
    python: str = sys.executable

    def table_names(self) -> list[str]:
        """``T01``..``TNN``: two digits at least, more for 100 tables or more."""
        width = max(2, len(str(self.tables)))
        return [f"T{n:0{width}d}" for n in range(1, self.tables + 1)]


@dataclass
class SimTable:
    """One table of the floor: its folder, its shoe and its daemon."""

    name: str
    folder: Path
    number: int
    shoe: VirtualShoe | None = None
    process: asyncio.subprocess.Process | None = None
    shoes_dealt: int = 0
    cards_dealt: int = 0
    stopped_status: int | None = field(default=None)

    @property
    def shoe_link(self) -> Path:
        return self.folder / "shoe"

    @property
    def config_file(self) -> Path:
        return self.folder / "table.toml"

    @property
    def log_file(self) -> Path:
        return self.folder / "daemon.log"

    def log_tail(self, lines: int = LOG_TAIL) -> str:
        """The last lines of the daemon's log."""
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def floor_profile(plan: FloorPlan) -> Profile:
    """The profile the tables play and the dealers deal; :class:`FloorError` if bad."""
    try:
        return load_profile(plan.profile, decks=plan.decks)
    except (ProfileError, ValidationError, OSError, ValueError) as exc:
        raise FloorError(f"--profile {plan.profile}: {exc}") from exc


def table_config(plan: FloorPlan, table: SimTable) -> str:
    """The ``table.toml`` of one simulated table: the plan's profile, its decks if given."""

    def toml(value: object) -> str:
        return json.dumps(value)  # a JSON string or number is a TOML one

    decks = floor_profile(plan).decks
    lines = [
        f"table = {toml(table.name)}",
        f"topic_prefix = {toml(plan.topic_prefix)}",
        f"profile = {toml(plan.profile)}",
        f"allow_test_decks = {toml(decks < 6)}",
        "[rules]",
        *([f"decks = {plan.decks}"] if plan.decks is not None else []),
        "[device]",
        'kind = "serial"',
        f"path = {toml(str(table.shoe_link))}",
        'protocol = "framed"',
        f"baud = {BAUD}",
        "[broker]",
        f"host = {toml(plan.broker_host)}",
        f"port = {plan.broker_port}",
    ]
    if plan.username is not None:
        lines.append(f"username = {toml(plan.username.replace('{table}', table.name))}")
    if plan.password_file is not None:
        lines.append(f"password_file = {toml(str(plan.password_file.resolve()))}")
    lines += [
        "[journal]",
        f"folder = {toml(str(table.folder / 'journal'))}",
        f"fsync = {toml(plan.fsync)}",
    ]
    return "\n".join(lines) + "\n"


class Floor:
    """The simulated floor: start it, deal until stopped, stop it."""

    def __init__(self, plan: FloorPlan, out: TextIO = sys.stdout) -> None:
        if plan.tables < 1:
            raise FloorError(f"--tables must be 1 or more, not {plan.tables}")
        if plan.pace < 0:
            raise FloorError(f"--pace must be 0 or more seconds, not {plan.pace}")
        if not 0 <= plan.misdeal_rate <= 1:
            raise FloorError(f"--misdeal-rate must be 0..1, not {plan.misdeal_rate}")
        self.profile = floor_profile(plan)
        self.plan = plan
        self.out = out
        self.tables = [
            SimTable(name, plan.folder / name, number)
            for number, name in enumerate(plan.table_names(), start=1)
        ]

    async def run(self, stop: asyncio.Event) -> int:
        """Start every table, deal until ``stop`` is set or a daemon ends; the exit status."""
        try:
            await self._start()
            self.say(
                f"floor: {len(self.tables)} tables ready on {self.plan.broker_host}:"
                f"{self.plan.broker_port}, a card every {self.plan.pace:g} s at each; "
                "Ctrl-C to stop"
            )
            return await self._deal_until(stop)
        except FloorError as exc:
            self.say(f"floor: {exc}")
            return 1
        finally:
            await self._stop()

    async def _start(self) -> None:
        for table in self.tables:
            table.folder.mkdir(parents=True, exist_ok=True)
            table.shoe = VirtualShoe(
                table.shoe_link, "framed", baud=BAUD,
                dealer_ignores_alarms=self.plan.dealer_ignores_alarms,
            )
            await table.shoe.start()
            table.config_file.write_text(table_config(self.plan, table))
            with table.log_file.open("ab") as log:
                table.process = await asyncio.create_subprocess_exec(
                    self.plan.python, "-m", "baccarat.cli", "run",
                    "--config", str(table.config_file), "--log-level", self.plan.log_level,
                    stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
                )
            self.say(
                f"{table.name}: baccarat run pid {table.process.pid}, shoe {table.shoe_link} "
                f"-> {table.shoe.device_name}, log {table.log_file}"
            )
        await asyncio.gather(*(self._ready(table) for table in self.tables))

    async def _ready(self, table: SimTable) -> None:
        """Until the daemon logs that it is ready; FloorError if it ends or takes too long."""
        assert table.process is not None
        loop = asyncio.get_running_loop()
        timeout = READY_TIMEOUT + READY_PER_TABLE * len(self.tables)
        deadline = loop.time() + timeout
        while READY_LINE not in table.log_tail(lines=200):
            if table.process.returncode is not None:
                raise FloorError(
                    f"{table.name}: baccarat run exited with status "
                    f"{table.process.returncode} before it was ready; its log:\n"
                    f"{table.log_tail()}"
                )
            if loop.time() > deadline:
                raise FloorError(
                    f"{table.name}: baccarat run not ready after {timeout:g} s; its log:\n"
                    f"{table.log_tail()}"
                )
            await asyncio.sleep(0.2)

    async def _deal_until(self, stop: asyncio.Event) -> int:
        dealers = [asyncio.create_task(self._deal(table)) for table in self.tables]
        watchers = [asyncio.create_task(self._exited(table)) for table in self.tables]
        stopped = asyncio.create_task(stop.wait())
        if self.plan.misdeal_rate > 0 and not self.plan.dealer_ignores_alarms:
            dealers.append(asyncio.create_task(self._tell_held()))
        try:
            done, _ = await asyncio.wait(
                [stopped, *watchers, *dealers], return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for task in [stopped, *watchers, *dealers]:
                task.cancel()
            await asyncio.gather(stopped, *watchers, *dealers, return_exceptions=True)
        if stop.is_set():
            return 0  # a daemon may have seen the terminal's Ctrl-C too, and stopped first
        for task in done:
            if task is not stopped and not task.cancelled() and task.exception() is not None:
                raise FloorError(str(task.exception()))
        return 0

    async def _exited(self, table: SimTable) -> None:
        """Returns (as an error) when the daemon ends by itself."""
        assert table.process is not None
        status = await table.process.wait()
        raise FloorError(
            f"{table.name}: baccarat run stopped by itself (status {status}); its log:\n"
            f"{table.log_tail()}"
        )

    async def _deal(self, table: SimTable) -> None:
        """Shoe after shoe; tables start at different moments, as on a floor."""
        assert table.shoe is not None
        rng = random.Random(self.plan.seed * 1000 + table.number)
        await asyncio.sleep(rng.random() * self.plan.pace)
        while True:
            dealer = Dealer.for_profile(
                self.profile, seed=rng.randrange(2**32), mistake_rate=self.plan.misdeal_rate
            )
            for event in dealer.events():
                await table.shoe.dealer_ready(event)
                table.shoe.send(event)
                if isinstance(event, CardDrawn):
                    table.cards_dealt += 1
                    if self.plan.pace:
                        await asyncio.sleep(self.plan.pace)
            await table.shoe.drain()
            table.shoes_dealt += 1

    def held_line(self) -> str | None:
        """How many tables wait on the pit, and the option that lets them deal on; or None."""
        held = sum(1 for t in self.tables if t.shoe is not None and t.shoe.dealer_paused)
        if not held:
            return None
        return (
            f"floor: {held} of {len(self.tables)} tables wait for the pit to settle an alarm"
            f" (with --misdeal-rate {self.plan.misdeal_rate:g} a dealer's mistake holds its"
            " table until the pit settles it: baccarat pit); --dealer-ignores-alarms lets"
            " the dealers deal on"
        )

    async def _tell_held(self) -> None:
        """Say, when it changes, how many tables a mistake holds (for ever, until cancelled)."""
        said = 0
        while True:
            await asyncio.sleep(HELD_EVERY)
            held = sum(1 for t in self.tables if t.shoe is not None and t.shoe.dealer_paused)
            line = self.held_line()
            if held != said and line is not None:
                self.say(line)
            said = held

    async def _stop(self) -> None:
        """Every daemon, then every shoe."""
        await asyncio.gather(*(self._stop_daemon(table) for table in self.tables))
        for table in self.tables:
            if table.shoe is not None:
                await table.shoe.stop()
        dealt = sum(table.cards_dealt for table in self.tables)
        failed = [f"{t.name} ({t.stopped_status})" for t in self.tables if t.stopped_status]
        self.say(
            f"floor: stopped; {dealt} cards dealt at {len(self.tables)} tables"
            + (f"; daemons that exited with an error status: {', '.join(failed)}" if failed else "")
        )

    async def _stop_daemon(self, table: SimTable) -> None:
        process = table.process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(STOP_TIMEOUT):
                    await process.wait()
            except TimeoutError:
                self.say(f"{table.name}: no stop {STOP_TIMEOUT:g} s after SIGTERM: SIGKILL")
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        table.stopped_status = process.returncode

    def say(self, text: str) -> None:
        """Print a line now."""
        print(text, file=self.out, flush=True)


async def run_floor(plan: FloorPlan, out: TextIO = sys.stdout) -> int:
    """Run a floor until SIGTERM or SIGINT; the exit status."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        floor = Floor(plan, out)
    except FloorError as exc:
        print(f"baccarat sim floor: {exc}", file=sys.stderr)
        return 2
    try:
        return await floor.run(stop)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
