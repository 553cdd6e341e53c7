"""A board's feed from the broker, and the live terminal board drawn from it.

Subscribes to each of ``{prefix}/{table}/``'s board topics (``accept.BOARD_TOPICS``: all
but the surveillance topics, the live ``edge``) and redraws as messages arrive; an
``advantage`` notice on ``alarm`` is not folded. Every body is checked against its topic
(:mod:`baccarat.boards.accept`) before it is folded: the controller's messages, the
retained ``status`` (online/offline) and the pit's ``limits``. Commands
(``cmd/...``) and replies are not for boards and are skipped; a body that is refused is
counted and shown, never fatal.

The broker link (the package's client, :mod:`baccarat.mqtt`, MQTT 3.1.1 so that any broker
will do, the demo's amqtt too) reconnects on its own (:class:`baccarat.backoff.Backoff`,
capped at :data:`RECONNECT_DELAY_MAX`); the header shows the link's state all along.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from baccarat.backoff import Backoff
from baccarat.boards.accept import (
    BOARD_TOPICS,
    ControllerStatus,
    Fault,
    Refused,
    accept,
    skipped,
)
from baccarat.boards.state import (
    BoardState,
    fold,
    with_controller_status,
    with_limits,
    with_link,
)
from baccarat.messages.bodies import SURVEILLANCE_KINDS, AlarmMessage, EdgeMessage
from baccarat.messages.limits import LimitsMessage
from baccarat.mqtt import MqttClient, MqttError, MqttSettings
from baccarat.reconnect import LinkState, Lost, Reconnector

DEFAULT_PORT: Final = 1883
RECONNECT_DELAY_MIN: Final = 0.5
"""Seconds before the first reconnection attempt."""
RECONNECT_DELAY_MAX: Final = 10.0
"""Cap of the doubling reconnection delay, in seconds."""
CONNECT_TIMEOUT: Final = 5.0
"""Seconds to wait for the broker's CONNACK."""
REFRESHES_PER_SECOND: Final = 8
"""At most this many redraws a second; the board redraws only when its state or the
terminal's size changed (an idle board draws nothing)."""
SIZE_CHECK: Final = 1.0
"""Seconds between two looks at the terminal's size while nothing arrives."""
NOTHING_HEARD_AFTER: Final = 3.0
"""Seconds after subscribing with nothing from the table before the board says what it
waits for (a table that ever ran has a retained status, which comes at once)."""


def parse_broker(text: str) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6 address]:port`` -> (host, port)."""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise ValueError(f"no host in {text!r}")
    if not port:
        return host, DEFAULT_PORT
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"bad port in {text!r}")
    return host, int(port)


def receive(state: BoardState, base: str, topic: str, payload: bytes) -> BoardState:
    """The state after one MQTT message on ``topic`` under ``base`` (``prefix/table``).

    Every body is checked against its topic first (:func:`baccarat.boards.accept.accept`):
    one that is refused is counted in ``rejected`` and changes nothing else.
    """
    kind = topic.removeprefix(base + "/") if topic.startswith(base + "/") else None
    if kind is None or skipped(kind) or not payload:
        return state  # the pit's commands, the answers, a retained message cleared
    body = accept(kind, payload, state.table or base.rpartition("/")[2])
    match body:
        case Refused():
            return replace(state, rejected=state.rejected + 1, refused_why=body.reason)
        case ControllerStatus():
            return with_controller_status(state, body.state.encode())
        case Fault():
            return state  # the journal fault: the retained status says offline, and why
        case LimitsMessage():
            return with_limits(state, body)
        case EdgeMessage():
            return state  # not subscribed: for the house's eyes only
        case AlarmMessage() if body.kind in SURVEILLANCE_KINDS:
            return state  # an advantage notice: players never see it
    return fold(state, body)


class BoardFeed:
    """The board's state, fed by its MQTT subscription (one task)."""

    def __init__(
        self, host: str, port: int, prefix: str, table: str, *,
        username: str | None = None, password: str | None = None,
    ) -> None:
        """``username`` and ``password``: the board's broker account, if it has one."""
        self.host, self.port = host, port
        self.username, self.password = username, password
        self.base = f"{prefix}/{table}"
        self._state = BoardState(table=table)
        self.changed = asyncio.Event()
        """Set when :attr:`state` is replaced; the drawer clears it."""
        self.heard = False
        """Something came on the table's topics since the start."""
        self.nothing_heard_after = NOTHING_HEARD_AFTER
        self.backoff = Backoff(first=RECONNECT_DELAY_MIN, cap=RECONNECT_DELAY_MAX)
        self.link = Reconnector(
            self._attempt, backoff=self.backoff, errors=(MqttError,),
            on_lost=self._on_lost, on_state=self._on_state,
        )

    @property
    def state(self) -> BoardState:
        """What the board draws (replaced, never changed in place)."""
        return self._state

    @state.setter
    def state(self, state: BoardState) -> None:
        if state is not self._state:
            self._state = state
            self.changed.set()

    async def run(self) -> None:
        """Subscribe, fold every message into :attr:`state`, reconnect for ever."""
        await self.link.run()

    async def _attempt(self) -> None:
        async with MqttClient(MqttSettings(
            self.host, self.port, client_id="", version="3.1.1",
            username=self.username, password=self.password,
            connect_timeout=CONNECT_TIMEOUT,
        )) as client:  # client id "": the broker gives one
            self.link.connected()
            # topic by topic, not {base}/#: never the surveillance topics (edge)
            await client.subscribe(*(f"{self.base}/{t}" for t in BOARD_TOPICS), qos=1)
            self.state = with_link(self.state, "connected")
            timer = asyncio.get_running_loop().call_later(
                self.nothing_heard_after, self._nothing_heard)
            try:
                async for message in client.messages():
                    self.feed(message.topic, message.payload)
            finally:
                timer.cancel()

    def _nothing_heard(self) -> None:
        """Nothing from the table since subscribing: say what the board waits for."""
        if self.heard:
            return
        table = self.state.table
        self.state = replace(self.state, waiting=(
            f"nothing heard from table {table} in {self.nothing_heard_after:.0f} s: no"
            f" controller has published under {self.base}/ on {self.host}:{self.port}."
            f" Is {table} the table's id (--table), and is its controller running on this"
            " broker?"
        ))

    def _on_state(self, state: LinkState) -> None:
        if state is LinkState.CONNECTING:
            self.state = with_link(self.state, "connecting")

    def _on_lost(self, lost: Lost) -> None:
        self.state = with_link(self.state, f"lost ({lost.reason}); retry in {lost.delay:.0f} s")

    def feed(self, topic: str, payload: bytes) -> None:
        """Fold one received message into the state."""
        state = receive(self.state, self.base, topic, payload)
        if not self.heard:
            self.heard = True
            if state.waiting:
                state = replace(state, waiting="")
        self.state = state


async def show(feed: BoardFeed) -> None:
    """Run the feed and redraw the screen from its state when it changes, and only then.

    At most :data:`REFRESHES_PER_SECOND` redraws a second (a burst of messages is drawn
    once); a change of the terminal's size redraws too. An idle board writes nothing.
    """
    from rich.console import Console
    from rich.live import Live

    console = Console()
    with Live(
        picture(feed, console),
        console=console,
        screen=True,
        auto_refresh=False,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as live:
        feeding = asyncio.create_task(feed.run(), name="board-feed")
        try:
            await redraw_on_change(feed, console, live.update)
        finally:
            feeding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await feeding


def picture(feed: BoardFeed, console: Any) -> Any:
    """The board's screen for the feed's state at the console's size."""
    from baccarat.boards.terminal import render

    width, height = console.size
    return render(feed.state, width, height, coloured=console.color_system is not None)


async def redraw_on_change(
    feed: BoardFeed, console: Any, update: Callable[..., None]
) -> None:
    """Call ``update(picture, refresh=True)`` when the state or the size changes; for ever."""
    size = console.size
    while True:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SIZE_CHECK):
                await feed.changed.wait()
        if not feed.changed.is_set() and console.size == size:
            continue
        feed.changed.clear()
        size = console.size
        update(picture(feed, console), refresh=True)
        await asyncio.sleep(1 / REFRESHES_PER_SECOND)  # a burst is drawn once
