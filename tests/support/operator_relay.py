"""A stand-in for the controller's side of operator identity, only while it does not exist.

The pit console sends commands on ``{prefix}/{table}/cmd/{name}/{operator}`` (the broker's
ACL ties the last level to the operator's account: examples/mosquitto/acl). The
controller that reads that form is being built on another branch at the same time; until
it is merged, the daemon here reads ``cmd/{name}`` only. This relay is the one thing the
tests put in its place, because it cannot exist here yet: it first asks the daemon
directly (an unknown command, ``cmd/probe/{operator}``, which any controller answers and
none carries out), and only if no answer comes does it copy each operator command to
``cmd/{name}``, with its MQTT 5 response topic. Once the controller reads the operator's
form the probe is answered and the relay copies nothing, so no command runs twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from support.mosquitto import Mosquitto

RELAY_USER = "operator-relay"
RELAY_PASSWORD = "relay-secret"
RELAY_ACL = f"""
user {RELAY_USER}
topic read baccarat/+/cmd/#
topic write baccarat/+/cmd/+
"""
"""The relay's section, appended to the example's ACL by the tests that use it."""
PROBE_WAIT = 4.0  # seconds for a controller that reads operator topics to answer the probe


class OperatorRelay:
    """``async with OperatorRelay(broker, table, operator, password)``: see the module doc."""

    def __init__(self, broker: Mosquitto, table: str, operator: str, password: str) -> None:
        self.broker = broker
        self.table = table
        self.operator = operator
        self.password = password
        self.needed: bool | None = None
        self.relayed = 0
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()

    async def __aenter__(self) -> OperatorRelay:
        self.needed = not await self._controller_answers()
        if self.needed:
            self._task = asyncio.create_task(self._run())
            async with asyncio.timeout(10):
                await self._subscribed.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _controller_answers(self) -> bool:
        reply_topic = f"baccarat/{self.table}/reply/{self.operator}"
        properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        properties.ResponseTopic = reply_topic
        async with self.broker.client(
            username=self.operator, password=self.password, protocol=aiomqtt.ProtocolVersion.V5
        ) as client:
            await client.subscribe(reply_topic, qos=1)  # the response topic, and the default
            await client.subscribe(f"baccarat/{self.table}/reply", qos=1)
            await client.publish(
                f"baccarat/{self.table}/cmd/probe/{self.operator}",
                json.dumps({"id": "relay-probe"}), qos=1, properties=properties,
            )
            try:
                async with asyncio.timeout(PROBE_WAIT):
                    async for message in client.messages:
                        payload = message.payload
                        if isinstance(payload, bytes) and b"relay-probe" in payload:
                            return True
            except TimeoutError:
                return False
        return False

    async def _run(self) -> None:
        while True:
            try:
                await self._session()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.2)

    async def _session(self) -> None:
        async with self.broker.client(
            username=RELAY_USER, password=RELAY_PASSWORD, protocol=aiomqtt.ProtocolVersion.V5
        ) as client:
            await client.subscribe("baccarat/+/cmd/+/+", qos=1)
            self._subscribed.set()
            async for message in client.messages:
                topic = str(message.topic).rsplit("/", 1)[0]
                properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
                response = getattr(message.properties, "ResponseTopic", None)
                if response:
                    properties.ResponseTopic = response
                payload = message.payload if isinstance(message.payload, bytes) else b""
                await client.publish(topic, payload, qos=1, properties=properties)
                self.relayed += 1
