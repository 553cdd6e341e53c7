"""The one reconnection loop of the package, and the one vocabulary of a link's states.

A link that must come back by itself (the shoe's serial port, the USB shuffler, a board's
feed, the table's publisher, the recorder's floor broker) is a
:class:`Reconnector`: it is given, when it is made, what one attempt does and what to
say when one fails, and nobody sets its fields after (aioesphomeapi's ``ReconnectLogic``
is the model). Each attempt connects and serves until the link is lost; between two, the
package's one :class:`~baccarat.backoff.Backoff` decides the wait. The attempt tells the
reconnector when the link is up (:meth:`Reconnector.connected`): the backoff starts again
from its shortest delay, and the count of failed attempts from zero.

The states (:class:`LinkState`) are the ones the daemon's metrics
(``baccarat_link_state``) and the sources' status show, whatever the link.
"""

from __future__ import annotations

import asyncio
import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from baccarat.backoff import Backoff


class LinkState(enum.Enum):
    """Where a link is, the same words for every link of the package."""

    IDLE = "idle"
    """Not started."""
    CONNECTING = "connecting"
    """An attempt is under way: opening the port, looking for the USB device, connecting."""
    OPEN = "open"
    """Connected, but the other end has not shown it is there (no valid frame yet, or its
    heartbeat is missing)."""
    UP = "up"
    """Connected, and the other end is there."""
    WAITING = "waiting"
    """Between a failed or lost attempt and the next one."""
    FAILED = "failed"
    """Gave up after the configured number of attempts."""
    STOPPED = "stopped"
    """Stopped by its owner."""


@dataclass(frozen=True, slots=True)
class Lost:
    """One attempt that ended: what its owner logs, counts and shows."""

    reason: BaseException | str
    """The error that ended it, or the reason the attempt returned."""
    was_up: bool
    """The attempt had connected (:meth:`Reconnector.connected`): a link lost, not a
    connection that could not be made."""
    failures: int
    """Attempts in a row that could not connect, this one included (0 for a link lost)."""
    outage: int
    """Attempts ended since the link was last up (or since the start), this one included."""
    delay: float | None
    """Seconds before the next attempt; None: the reconnector gives up."""

    @property
    def first(self) -> bool:
        """The first failure of an outage (the loss, or the first failed attempt).

        Its owner says it loudly, and the rest of the outage quietly.
        """
        return self.outage == 1


NO_LIMIT: Final = None


class Reconnector:
    """Attempt, and attempt again after the backoff's delay, until cancelled or given up.

    ``attempt``: connect and serve until the link is lost (a coroutine function for
    :meth:`run`, a plain one for :meth:`run_blocking`): raise one of ``errors``, or return
    (a returned string is the reason the link was lost).
    ``errors``: what a lost or failed attempt raises (anything else is a bug, and ends the
    loop); ``give_up_on``: what ends the loop at once (``FAILED``: no attempt can work,
    such as a missing USB backend). ``on_lost``: called with every :class:`Lost` before
    the wait (log, count, tell the consumer). ``on_state``: called with every change of
    :attr:`state`.
    ``max_attempts``: failed attempts in a row before the state is ``FAILED`` and the loop
    ends (None: for ever).
    """

    def __init__(
        self,
        attempt: Callable[..., Any],
        *,
        backoff: Backoff,
        errors: tuple[type[BaseException], ...],
        give_up_on: tuple[type[BaseException], ...] = (),
        on_lost: Callable[[Lost], None],
        on_state: Callable[[LinkState], None] | None = None,
        max_attempts: int | None = NO_LIMIT,
    ) -> None:
        self._attempt = attempt
        self._backoff = backoff
        self._errors = errors
        self._give_up_on = give_up_on
        self._on_lost = on_lost
        self._on_state = on_state
        self._max_attempts = max_attempts
        self._state = LinkState.IDLE
        self._failures = 0
        self._outage = 0
        self._up = False

    @property
    def state(self) -> LinkState:
        """Where the link is."""
        return self._state

    def set_state(self, state: LinkState) -> None:
        """The attempt's own news within a connection (``OPEN`` <-> ``UP``)."""
        if state is not self._state:
            self._state = state
            if self._on_state is not None:
                self._on_state(state)

    def connected(self, state: LinkState = LinkState.UP) -> None:
        """The attempt got through: the next failure waits the shortest delay again."""
        self._up = True
        self._failures = 0
        self._outage = 0
        self._backoff.reset()
        self.set_state(state)

    def stopped(self) -> None:
        """The owner stopped the link (a link that gave up stays ``FAILED``)."""
        if self._state is not LinkState.FAILED:
            self.set_state(LinkState.STOPPED)

    async def run(self) -> None:
        """Attempt until cancelled, or until ``max_attempts`` failed in a row."""
        while True:
            self._start()
            fatal = False
            try:
                reason = await self._attempt()
            except self._give_up_on as exc:
                reason, fatal = exc, True
            except self._errors as exc:
                reason = exc
            lost = self._lost(reason, fatal=fatal)
            if lost.delay is None:
                return
            await asyncio.sleep(lost.delay)

    async def until_done(self, *args: Any) -> Any:
        """Attempt with ``args`` until an attempt returns; what it returned.

        For an operation retried while its link is down (the recorder's write to a
        database that is unavailable): a failed attempt is a :class:`Lost` and the
        backoff's wait, as in :meth:`run`. The error of an attempt after which the
        reconnector gives up is raised.
        """
        while True:
            self._start()
            try:
                return await self._attempt(*args)
            except self._errors as exc:
                lost = self._lost(exc)
                if lost.delay is None:
                    raise
            await asyncio.sleep(lost.delay)

    def run_blocking(self, stop: threading.Event) -> None:
        """:meth:`run` in a worker thread, until ``stop`` is set (its wait cut short)."""
        while not stop.is_set():
            self._start()
            fatal = False
            try:
                reason = self._attempt()
            except self._give_up_on as exc:
                reason, fatal = exc, True
            except self._errors as exc:
                reason = exc
            if stop.is_set():
                return
            lost = self._lost(reason, fatal=fatal)
            if lost.delay is None or stop.wait(lost.delay):
                return

    def _start(self) -> None:
        self._up = False
        self.set_state(LinkState.CONNECTING)

    def _lost(self, reason: object, *, fatal: bool = False) -> Lost:
        if not self._up:
            self._failures += 1
        self._outage += 1
        limit = self._max_attempts
        give_up = fatal or (not self._up and limit is not None and self._failures >= limit)
        lost = Lost(
            reason if isinstance(reason, BaseException | str) else "the link ended",
            was_up=self._up,
            failures=self._failures,
            outage=self._outage,
            delay=None if give_up else self._backoff.next_delay(),
        )
        # the state first: what on_lost tells a consumer in another thread finds it said
        self.set_state(LinkState.FAILED if give_up else LinkState.WAITING)
        self._on_lost(lost)
        return lost
