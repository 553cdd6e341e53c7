"""The recorder's broker watchdog: a connection that delivers nothing is said and left.

A connection to the floor broker can look well (pings answered, PUBACKs taken) while the
broker delivers nothing to the recorder's session; keepalive does not see that. So the
recorder publishes a probe to itself every :data:`PROBE_EVERY` seconds (QoS 1, on
``{prefix}/floor/probe``, which its own subscription brings back; no table is named
``floor``), and the probe goes through the session's queue like any table's message. If,
while a probe is due back, nothing at all has come from the broker for ``timeout``
seconds, and the recorder holds nothing the broker could be waiting for (everything it
received stored and acknowledged, its database up), the connection is stalled:
the recorder logs an error, counts it (``baccarat_recorder_broker_stalls_total``) and drops
the connection. It then reconnects as after any loss, and its persistent session gives
back every message it had not acknowledged: nothing is lost.

A broker that refuses the probe (its ACL: ``topic write baccarat/floor/probe`` for the
recorder's account) leaves the connection without a watchdog, said once as an error. A
broker that closes the connection instead (mosquitto 2.0.11 does so for a denied publish
when ``max_queued_messages`` is 0) does it :data:`STRIKES` times in a row while a probe
awaits its PUBACK, and the watchdog is off from then on, said once as an error: the
recorder records without it rather than reconnecting for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable
from typing import Final

from baccarat.mqtt import MqttClient, PublishRefusedError

log = logging.getLogger(__name__)

TOPIC: Final = "floor/probe"
"""Under the prefix: the recorder's probes to itself."""
PROBE_EVERY: Final = 10.0
"""Seconds between a probe's return and the next probe (at most a third of the timeout)."""
TIMEOUT: Final = 60.0
"""Seconds of silence with a probe due back before the connection is called stalled."""
TICK: Final = 0.5
"""Seconds between the watchdog's looks at the connection."""
STRIKES: Final = 2
"""Connections in a row lost while a probe awaited its PUBACK before the watchdog stops."""


class BrokerWatchdog:
    """Probes one recorder's broker connections; counts the stalls it found."""

    def __init__(
        self, prefix: str, recorder_id: str, timeout: float, can_receive: Callable[[], bool],
    ) -> None:
        """``can_receive``: whether the broker has no reason to hold back its deliveries."""
        self.topic = f"{prefix}/{TOPIC}"
        self.timeout = timeout
        self.stalls = 0
        self._can_receive = can_receive
        self._recorder = recorder_id
        self._run = secrets.token_hex(4)
        """This process's probes, not those an earlier one left in the session's queue."""
        self._count = 0
        self._due: int | None = None
        self._heard = 0.0
        self._acked = False
        """Whether the last probe's PUBACK came."""
        self._unanswered = 0
        """Connections lost in a row while a probe awaited its PUBACK."""
        self._off = False

    @property
    def back(self) -> bool:
        """Whether the last probe came back (or none was sent)."""
        return self._due is None

    def heard(self, topic: str, payload: bytes) -> bool:
        """Note a message from the broker (any); whether it is a probe (a recorder's).

        A probe of ours that was due is back.
        """
        self._heard = asyncio.get_running_loop().time()
        if topic != self.topic:
            return False
        if self._due is None:
            return True
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            body = json.loads(payload)
            if (body.get("recorder"), body.get("run"), body.get("probe")) == (
                self._recorder, self._run, self._due
            ):
                self._due = None
                self._unanswered = 0
        return True

    async def watch(self, client: MqttClient, where: str) -> None:
        """Probe this connection until it stalls, then drop it (its owner reconnects)."""
        loop = asyncio.get_running_loop()
        every = min(PROBE_EVERY, self.timeout / 3)
        if self._gave_up():
            return
        while True:
            self._count += 1
            self._due = self._count
            body = {"recorder": self._recorder, "run": self._run, "probe": self._count}
            sent = loop.time()
            self._acked = False
            publishing = asyncio.ensure_future(
                client.publish(self.topic, json.dumps(body).encode(), qos=1)
            )
            publishing.add_done_callback(self._answered)
            try:
                while not self.back:
                    await asyncio.sleep(TICK)
                    if _refused(publishing, self.topic):
                        return
                    now = loop.time()
                    if not self._can_receive():
                        self._heard = now  # the broker rightly holds back
                    quiet = now - max(self._heard, sent)
                    if quiet >= self.timeout:
                        self._stalled(client, where, quiet)
                        return
            except asyncio.CancelledError:  # the connection is gone (not dropped by us)
                if not self._acked and not self.back:
                    self._unanswered += 1
                raise
            finally:
                publishing.cancel()  # its PUBACK is not needed: the probe came back, or not
            await asyncio.sleep(every)

    def _answered(self, publishing: asyncio.Future[None]) -> None:
        """A probe's publish ended: its PUBACK came, or it was refused, lost or cancelled."""
        if not publishing.cancelled() and publishing.exception() is None:
            self._acked = True
            self._unanswered = 0

    def _gave_up(self) -> bool:
        """Whether the broker closed too many connections while a probe awaited its PUBACK."""
        if self._unanswered >= STRIKES and not self._off:
            self._off = True
            log.error("the floor broker closed the connection %d times in a row while the"
                      " recorder's probe on %s awaited its PUBACK: no broker watchdog from"
                      " now on (the broker's ACL must let the recorder write %s; mosquitto"
                      " drops a client whose publish it denies when max_queued_messages is"
                      " 0)", self._unanswered, self.topic, self.topic)
        return self._off

    def _stalled(self, client: MqttClient, where: str, quiet: float) -> None:
        self.stalls += 1
        log.error("floor broker %s: nothing delivered for %.0f s though the recorder's probe"
                  " is due back (%d stall(s) so far); reconnecting: the session gives back"
                  " what was not acknowledged", where, quiet, self.stalls)
        client.drop(f"the broker delivered nothing for {quiet:.0f} s (watchdog)")


def _refused(publishing: asyncio.Future[None], topic: str) -> bool:
    """Whether the broker refused the probe (logged); a lost connection is the owner's."""
    if not publishing.done() or publishing.cancelled():
        return False
    error = publishing.exception()
    if isinstance(error, PublishRefusedError):
        log.error("%s: no broker watchdog on this connection (the broker's ACL must let the"
                  " recorder write %s)", error, topic)
        return True
    return False
