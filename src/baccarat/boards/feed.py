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

from dataclasses import replace
from typing import Final

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
        self.state = BoardState(table=table)
        self.backoff = Backoff(first=RECONNECT_DELAY_MIN, cap=RECONNECT_DELAY_MAX)
        self.link = Reconnector(
            self._attempt, backoff=self.backoff, errors=(MqttError,),
            on_lost=self._on_lost, on_state=self._on_state,
        )

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
            async for message in client.messages():
                self.feed(message.topic, message.payload)

    def _on_state(self, state: LinkState) -> None:
        if state is LinkState.CONNECTING:
            self.state = with_link(self.state, "connecting")

    def _on_lost(self, lost: Lost) -> None:
        self.state = with_link(self.state, f"lost ({lost.reason}); retry in {lost.delay:.0f} s")

    def feed(self, topic: str, payload: bytes) -> None:
        """Fold one received message into the state."""
        self.state = receive(self.state, self.base, topic, payload)


async def show(feed: BoardFeed) -> None:
    """Run the feed and redraw the whole screen from its state several times a second."""
    from rich.console import Console, RenderableType
    from rich.live import Live

    from baccarat.boards.terminal import render

    console = Console()

    def picture() -> RenderableType:
        width, height = console.size
        return render(feed.state, width, height, coloured=console.color_system is not None)

    with Live(
        get_renderable=picture,
        console=console,
        screen=True,
        refresh_per_second=REFRESHES_PER_SECOND,
        redirect_stdout=False,
        redirect_stderr=False,
    ):
        await feed.run()
