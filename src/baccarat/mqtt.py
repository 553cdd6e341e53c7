"""The package's one MQTT client: paho's public API, driven by the asyncio event loop.

paho documents how to run its client from an outside event loop: it says when its socket
opens and closes and when it has bytes to write (``on_socket_*`` callbacks), and the loop
calls ``loop_read()`` when the socket is readable, ``loop_write()`` when it is writable
and ``loop_misc()`` (keepalive) every second. This module does that with
``add_reader``/``add_writer``, so every packet is read and written on the event loop.
Only paho's ``connect()``, which blocks in DNS, TCP and TLS, runs in a worker thread;
the socket is attached to the loop once it returns.

What it adds to paho: :meth:`MqttClient.publish` returns when the broker acknowledged
the message (QoS 1), and raises :class:`PublishRefusedError` with the PUBACK's reason code
when the broker refused it (MQTT 5; under 3.1.1 a broker cannot say so); a refused
connection is a :class:`ConnectRefusedError` with the CONNACK's reason code; a lost
connection is a :class:`LinkError` raised from every pending call and from the
:meth:`MqttClient.messages` iterator.

One object is one connection: whoever reconnects makes a new one, waiting
:class:`baccarat.backoff.Backoff` delays between them (paho's own reconnection is off).
Its users: the table's publisher (:mod:`baccarat.controller.publisher`), the floor recorder
(:mod:`baccarat.floor.recorder`: a persistent MQTT 5 session, ``manual_ack``, each PUBACK
sent by :meth:`MqttClient.ack` once the database has committed the message), the board's
feed, the pit console's login check (over WebSocket) and ``history --check``'s read of
the retained messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import AsyncIterator
from dataclasses import KW_ONLY, dataclass, field
from types import TracebackType
from typing import Any, Final, Literal

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from baccarat.errors import BaccaratError

log = logging.getLogger(__name__)

MqttVersion = Literal["5", "3.1.1"]
PROTOCOLS: Final[dict[MqttVersion, MQTTProtocolVersion]] = {
    "5": MQTTProtocolVersion.MQTTv5,
    "3.1.1": MQTTProtocolVersion.MQTTv311,
}
MISC_INTERVAL: Final = 1.0
"""Seconds between calls of paho's ``loop_misc`` (keepalive pings and their timeout)."""
CLOSE_TIMEOUT: Final = 2.0
"""Seconds to wait for the DISCONNECT packet to leave on a deliberate close."""
MAX_BUFFERED: Final = 8 * 1024 * 1024
"""Bytes of received messages that wait for the owner (:meth:`MqttClient.messages`) at most.

Over it the client stops reading its socket until the owner has taken half of them: the
broker's TCP window fills and the broker keeps the rest in the client's queue (its
``max_queued_messages`` / ``max_queued_bytes``, where QoS 0 is dropped first), so memory
does not grow with what the broker sends. An owner that takes nothing for longer than the
keepalive loses the connection (its ping unanswered) and reconnects."""
UNDECODABLE_TOPIC: Final = "(a topic that is not UTF-8)"
"""The topic of a received message whose topic is not UTF-8 (a broker should not pass one)."""

Retained = Literal["always", "if_new", "never"]
"""Which retained messages a subscription gets: all, only if the subscription is new in the
session (MQTT 5), or none (MQTT 5)."""
_RETAIN_HANDLING: Final[dict[Retained, int]] = {
    "always": SubscribeOptions.RETAIN_SEND_ON_SUBSCRIBE,
    "if_new": SubscribeOptions.RETAIN_SEND_IF_NEW_SUB,
    "never": SubscribeOptions.RETAIN_DO_NOT_SEND,
}


class MqttError(BaccaratError):
    """An error of the MQTT client: a lost link, or a request the broker refused.

    The two kinds: :class:`LinkError` (the connection could not be made, or was lost;
    whoever owns the connection makes a new one) and :class:`BrokerRefusedError` (the
    broker answered with a failure reason code; the connection lives on).
    """


class LinkError(MqttError):
    """The connection could not be made, or it was lost."""


class ConnectRefusedError(LinkError):
    """The broker's CONNACK refused the connection (bad login, not authorized, ...)."""

    def __init__(self, code: int, name: str) -> None:
        super().__init__(f"connection refused by the broker: {name}")
        self.code = code
        self.name = name


class BrokerRefusedError(MqttError):
    """The broker answered a request with a failure reason code (>= 0x80)."""

    def __init__(self, what: str, code: int, name: str) -> None:
        super().__init__(f"{what} refused by the broker: 0x{code:02X} {name}")
        self.code = code
        self.name = name


class PublishRefusedError(BrokerRefusedError):
    """The broker's PUBACK refused a message (for example 0x87 Not authorized by the ACL)."""

    def __init__(self, topic: str, code: int, name: str) -> None:
        super().__init__(f"publish on {topic}", code, name)
        self.topic = topic


@dataclass(frozen=True, slots=True)
class Will:
    """The last will the broker publishes if the connection dies."""

    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = False


@dataclass(frozen=True, slots=True)
class Received:
    """A message from a subscription."""

    topic: str
    payload: bytes
    retain: bool
    response_topic: str | None
    """The MQTT 5 response topic, if the sender gave one."""
    mid: int = 0
    """The packet identifier, for :meth:`MqttClient.ack` (QoS 1 and 2)."""
    qos: int = 0


@dataclass(frozen=True, slots=True)
class _Pending:
    """A request waiting for the broker's answer."""

    what: str
    future: asyncio.Future[None]
    topic: str = ""
    """The topic of a publish."""


@dataclass(frozen=True, slots=True)
class MqttSettings:
    """What one connection is: the broker, the login, and the CONNECT's fields.

    ``clean_start=False`` resumes the session the broker keeps for ``client_id``;
    ``session_expiry`` (seconds) and ``receive_maximum`` (messages delivered and not yet
    acknowledged) are MQTT 5 CONNECT properties (a ``ValueError`` under 3.1.1).
    ``manual_ack``: a QoS 1 message is acknowledged only by :meth:`MqttClient.ack`.
    ``max_inflight``: QoS 1 publishes waiting for their PUBACK at most (paho holds the
    rest). ``connect_timeout``: seconds for the TCP/TLS connect and the CONNACK.
    ``websocket_path``: MQTT over WebSocket at that path.
    """

    host: str
    port: int
    _: KW_ONLY
    client_id: str
    version: MqttVersion = "5"
    keepalive: int = 60
    will: Will | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls_context: ssl.SSLContext | None = None
    max_inflight: int = 20
    connect_timeout: float = 10.0
    clean_start: bool = True
    session_expiry: int | None = None
    receive_maximum: int | None = None
    manual_ack: bool = False
    websocket_path: str | None = None
    max_buffered: int = MAX_BUFFERED
    """Bytes of received payloads the owner has not taken at most: past it the client
    stops reading its socket (the broker keeps the rest) until half is taken."""

    def __post_init__(self) -> None:
        if self.version != "5" and (
            self.session_expiry is not None or self.receive_maximum is not None
        ):
            raise ValueError("session expiry and receive maximum are MQTT 5 properties")

    def connect_properties(self) -> Properties | None:
        """The MQTT 5 CONNECT properties these settings ask for, or None."""
        if self.session_expiry is None and self.receive_maximum is None:
            return None
        properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        if self.session_expiry is not None:
            properties.SessionExpiryInterval = self.session_expiry
        if self.receive_maximum is not None:
            properties.ReceiveMaximum = self.receive_maximum
        return properties


def _paho_client(settings: MqttSettings) -> paho.Client:
    """The paho client for ``settings``, its own reconnection off, callbacks not yet set."""
    v5 = settings.version == "5"
    client = paho.Client(
        CallbackAPIVersion.VERSION2,
        client_id=settings.client_id,
        clean_session=None if v5 else settings.clean_start,
        protocol=PROTOCOLS[settings.version],
        transport="tcp" if settings.websocket_path is None else "websockets",
        reconnect_on_failure=False,
        manual_ack=settings.manual_ack,
    )
    client.enable_logger(log)
    client.max_inflight_messages_set(settings.max_inflight)
    client.connect_timeout = settings.connect_timeout
    if settings.websocket_path is not None:
        client.ws_set_options(path=settings.websocket_path)
    if settings.username is not None:
        client.username_pw_set(settings.username, settings.password)
    if settings.will is not None:
        will = settings.will
        client.will_set(will.topic, will.payload, will.qos, will.retain)
    if settings.tls_context is not None:
        client.tls_set_context(settings.tls_context)
    return client


class MqttClient:
    """One MQTT connection, used as ``async with MqttClient(settings) as client``."""

    def __init__(self, settings: MqttSettings) -> None:
        self.settings = settings
        self.session_present = False
        """Whether the broker resumed a session it kept (the CONNACK's flag)."""
        self._properties = settings.connect_properties()
        self._v5 = settings.version == "5"
        self._paho = _paho_client(settings)
        self._paho.on_connect = self._on_connect
        self._paho.on_disconnect = self._on_disconnect
        self._paho.on_publish = self._on_publish
        self._paho.on_subscribe = self._on_subscribe
        self._paho.on_message = self._on_message
        self._paho.on_socket_open = self._on_socket_open
        self._paho.on_socket_close = self._on_socket_close
        self._paho.on_socket_register_write = self._on_socket_register_write
        self._paho.on_socket_unregister_write = self._on_socket_unregister_write
        self._loop: asyncio.AbstractEventLoop | None = None
        self._fd: int | None = None
        self._attached = False  # reader and writer are on the event loop
        self._connack: asyncio.Future[None] | None = None
        self._pending: dict[int, _Pending] = {}
        self._received: asyncio.Queue[Received | LinkError] = asyncio.Queue()
        self._buffered = 0
        """Bytes of the payloads in ``_received``."""
        self._max_buffered = settings.max_buffered
        self._paused = False
        """The socket is off the loop's readers: the owner has too much waiting."""
        self.pauses = 0
        """Times the client stopped reading for the owner (:data:`MAX_BUFFERED`)."""
        self._lost: LinkError | None = None
        self._closing = False
        self._closed = asyncio.Event()
        self._misc: asyncio.Task[None] | None = None

    # ---------------------------------------------------------------- connection

    async def __aenter__(self) -> MqttClient:
        """Connect and wait for the broker's CONNACK; :class:`LinkError` if it fails."""
        self._loop = asyncio.get_running_loop()
        self._connack = self._loop.create_future()
        try:
            async with asyncio.timeout(self.settings.connect_timeout):
                await asyncio.to_thread(self._connect)
                self._attach()
                await self._connack
        except TimeoutError:
            self._close_socket()
            raise LinkError(f"no CONNACK within {self.settings.connect_timeout:.0f} s") from None
        except BaseException:
            self._close_socket()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Disconnect cleanly (the broker then drops the will), or just close if lost.

        An exception other than a cancellation leaves by :meth:`abandon`: the program
        failed, and the broker must publish the will.
        """
        self._closing = True
        if exc_type is not None and not issubclass(exc_type, asyncio.CancelledError):
            self.abandon()
        if self._lost is None and self._paho.is_connected():
            self._paho.disconnect()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT):
                    await self._closed.wait()
        self._close_socket()

    def abandon(self) -> None:
        """Close the connection without a DISCONNECT, so that the broker publishes the will.

        For an owner that fails (an exception, a task cancelled because another failed),
        whose subscribers must hear that it is gone. Harmless on a connection already lost.
        """
        self.drop("connection abandoned: the program failed")

    def drop(self, reason: str) -> None:
        """Close the connection at once, without a DISCONNECT, as lost for ``reason``.

        Every waiting call and the message iterator raise :class:`LinkError` with it.
        """
        self._closing = True
        self._lose(LinkError(reason))
        self._close_socket()

    def _connect(self) -> None:
        """Run paho's blocking connect (in a worker thread): socket, TLS, CONNECT queued."""
        where = self.settings
        try:
            if self._v5:
                rc = self._paho.connect(
                    where.host, where.port, where.keepalive,
                    clean_start=where.clean_start, properties=self._properties,
                )
            else:
                rc = self._paho.connect(where.host, where.port, where.keepalive)
        except (OSError, ValueError) as exc:
            raise LinkError(f"cannot connect to {where.host}:{where.port}: {exc}") from exc
        if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            raise LinkError(
                f"cannot connect to {where.host}:{where.port}: {paho.error_string(rc)}"
            )

    def _attach(self) -> None:
        """Hand the connected socket to the event loop (in the loop's thread)."""
        assert self._loop is not None
        assert self._fd is not None
        self._attached = True
        if not self._paused:
            self._loop.add_reader(self._fd, self._readable)
        if self._paho.want_write():
            self._loop.add_writer(self._fd, self._writable)
        self._misc = self._loop.create_task(self._keepalive(), name="mqtt-keepalive")

    def _close_socket(self) -> None:
        """Take the socket off the loop and close it, if paho has not already."""
        if self._misc is not None:
            self._misc.cancel()
        self._detach()
        sock = self._paho.socket()
        if sock is not None:
            sock.close()

    def _detach(self) -> None:
        if self._attached and self._loop is not None and self._fd is not None:
            self._loop.remove_reader(self._fd)
            self._loop.remove_writer(self._fd)
        self._attached = False

    def _lose(self, error: LinkError) -> None:
        """The connection is gone: every waiting call and the message iterator raise."""
        if self._lost is not None:
            return
        self._lost = error
        if self._connack is not None and not self._connack.done():
            self._connack.set_exception(error)
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(error)
        self._pending.clear()
        self._received.put_nowait(error)
        self._closed.set()

    async def _keepalive(self) -> None:
        """Call paho's ``loop_misc`` every second: pings, and their timeout."""
        while self._paho.loop_misc() == MQTTErrorCode.MQTT_ERR_SUCCESS:  # noqa: ASYNC110
            await asyncio.sleep(MISC_INTERVAL)  # a clock, not a wait for an event

    # ---------------------------------------------------------------- requests

    async def publish(
        self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False
    ) -> None:
        """Publish and return when the broker has it (its PUBACK, at QoS 1).

        The message is handed to paho before the first ``await``: publishes leave in the
        order of the calls. Raises :class:`PublishRefusedError` if the broker refused it and
        :class:`LinkError` if the connection is lost first.
        """
        self._check_connected()
        info = self._paho.publish(topic, payload, qos=qos, retain=retain)
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_QUEUE_SIZE):
            raise LinkError(f"publish on {topic}: {paho.error_string(info.rc)}")
        if qos == 0:
            return
        await self._answer(info.mid, f"publish on {topic}", topic)

    async def subscribe(
        self, *topics: str, qos: int = 1, retained: Retained = "always"
    ) -> None:
        """Subscribe to the topics (one SUBSCRIBE); :class:`BrokerRefusedError` if one is refused.

        The refusal is the SUBACK's reason code. ``retained`` other than ``"always"`` is an
        MQTT 5 subscription option.
        """
        self._check_connected()
        if not topics:
            raise ValueError("subscribe to no topic")
        if retained == "always":
            rc, mid = self._paho.subscribe([(topic, qos) for topic in topics])
        else:
            if not self._v5:
                raise ValueError(f"retained={retained!r} needs MQTT 5")
            options = SubscribeOptions(qos=qos, retainHandling=_RETAIN_HANDLING[retained])
            rc, mid = self._paho.subscribe([(topic, options) for topic in topics])
        what = f"subscription to {', '.join(topics)}"
        if rc != MQTTErrorCode.MQTT_ERR_SUCCESS or mid is None:
            raise LinkError(f"{what}: {paho.error_string(rc)}")
        await self._answer(mid, what)

    def ack(self, mid: int, qos: int) -> bool:
        """Acknowledge a message received with ``manual_ack`` (its PUBACK); whether it went.

        ``mid`` and ``qos`` are the :class:`Received` message's. On a connection lost or
        closing nothing is sent: the broker delivers the message again on the session's
        next connection, and it is acknowledged there.
        """
        if qos == 0 or self._lost is not None or self._closing:
            return False
        return self._paho.ack(mid, qos) == MQTTErrorCode.MQTT_ERR_SUCCESS

    async def messages(self) -> AsyncIterator[Received]:
        """The messages of the subscriptions, in order; :class:`LinkError` once lost."""
        while True:
            item = await self._received.get()
            if isinstance(item, LinkError):
                self._received.put_nowait(item)  # for any other reader
                raise item
            self._buffered -= len(item.payload)
            if self._paused and self._buffered <= self._max_buffered // 2:
                self._resume()
            yield item

    def _check_connected(self) -> None:
        if self._lost is not None:
            raise self._lost
        if self._closing:
            raise LinkError("the connection is closing")

    async def _answer(self, mid: int, what: str, topic: str = "") -> None:
        assert self._loop is not None
        future: asyncio.Future[None] = self._loop.create_future()
        self._pending[mid] = _Pending(what, future, topic)
        try:
            await future
        finally:
            self._pending.pop(mid, None)

    # ---------------------------------------------------------------- paho callbacks

    def _on_connect(
        self, client: paho.Client, userdata: Any, flags: Any, reason: ReasonCode,
        properties: Any,
    ) -> None:
        if self._connack is None or self._connack.done():
            return
        if reason.is_failure:
            self._connack.set_exception(ConnectRefusedError(reason.value, str(reason)))
        else:
            self.session_present = bool(getattr(flags, "session_present", False))
            self._connack.set_result(None)

    def _on_disconnect(
        self, client: paho.Client, userdata: Any, flags: Any, reason: ReasonCode,
        properties: Any,
    ) -> None:
        self._lose(LinkError(f"connection lost: {reason}"))  # a deliberate close too

    def _on_publish(
        self, client: paho.Client, userdata: Any, mid: int, reason: ReasonCode,
        properties: Any,
    ) -> None:
        pending = self._pending.pop(mid, None)
        if pending is None or pending.future.done():
            return
        if reason.is_failure:
            refused = PublishRefusedError(pending.topic, reason.value, reason.getName())
            pending.future.set_exception(refused)
        else:
            pending.future.set_result(None)

    def _on_subscribe(
        self, client: paho.Client, userdata: Any, mid: int, reasons: list[ReasonCode],
        properties: Any,
    ) -> None:
        pending = self._pending.pop(mid, None)
        if pending is None or pending.future.done():
            return
        refused = next((r for r in reasons if r.is_failure), None)
        if refused is not None:
            error = BrokerRefusedError(pending.what, refused.value, refused.getName())
            pending.future.set_exception(error)
        else:
            pending.future.set_result(None)

    def _on_message(self, client: paho.Client, userdata: Any, message: paho.MQTTMessage) -> None:
        try:
            topic = message.topic
        except UnicodeDecodeError:  # the owner decides what to do with it; never raised here
            topic = UNDECODABLE_TOPIC
        self._buffered += len(message.payload)
        if self._buffered > self._max_buffered and not self._paused:
            self._pause()
        response = getattr(message.properties, "ResponseTopic", None)
        self._received.put_nowait(Received(
            topic, bytes(message.payload), bool(message.retain), response,
            message.mid, message.qos,
        ))

    def _pause(self) -> None:
        """Stop reading: the owner has :data:`MAX_BUFFERED` bytes of messages waiting."""
        self._paused = True
        self.pauses += 1
        if self._attached and self._loop is not None and self._fd is not None:
            self._loop.remove_reader(self._fd)
        log.debug("mqtt %s:%d: %d bytes of messages wait for their reader: not reading"
                  " until it takes them", self.settings.host, self.settings.port, self._buffered)

    def _resume(self) -> None:
        self._paused = False
        if self._attached and self._loop is not None and self._fd is not None:
            self._loop.add_reader(self._fd, self._readable)
            self._loop.call_soon(self._readable)  # bytes may wait in a TLS buffer

    def _on_socket_open(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        # Called in the connect thread: only note the socket; _attach registers it.
        # A card must not wait for the broker's delayed ACK of the previous large body
        # (Nagle's algorithm): see docs/benchmarks.md. (paho's WebSocket wrapper has no
        # setsockopt: its socket keeps the default.)
        if isinstance(sock, socket.socket):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._fd = sock.fileno()

    def _on_socket_close(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        self._detach()

    def _on_socket_register_write(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        if self._attached and self._loop is not None and self._fd is not None:
            self._loop.add_writer(self._fd, self._writable)

    def _on_socket_unregister_write(
        self, client: paho.Client, userdata: Any, sock: Any
    ) -> None:
        if self._attached and self._loop is not None and self._fd is not None:
            self._loop.remove_writer(self._fd)

    # ---------------------------------------------------------------- socket events

    def _readable(self) -> None:
        try:
            self._paho.loop_read()
            sock = self._paho.socket()
            # An SSL socket may hold decrypted bytes that select() does not see.
            while (not self._paused and sock is not None and hasattr(sock, "pending")
                   and sock.pending() > 0):
                self._paho.loop_read()
                sock = self._paho.socket()
        except (OSError, ValueError) as exc:
            self._failed(exc)

    def _writable(self) -> None:
        try:
            self._paho.loop_write()
        except (OSError, ValueError) as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        self._lose(LinkError(f"connection lost: {type(exc).__name__}: {exc}"))
        self._close_socket()
