"""tests/support/operator_relay.py: it copies commands only for a controller that needs it.

A controller that reads ``cmd/{name}/{operator}`` answers the relay's probe, and then the
relay must copy nothing (a command would run twice); one that reads ``cmd/{name}`` only
does not, and then each operator command reaches it once, with its response topic. The
"controllers" here are plain MQTT clients standing for the two kinds of daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import aiomqtt
import pytest

from support.mosquitto import Mosquitto, MosquittoFactory
from support.operator_relay import RELAY_ACL, RELAY_PASSWORD, RELAY_USER, OperatorRelay

OPERATOR, PASSWORD = "pit-ana", "ana-secret"
ACL = f"""user {OPERATOR}
topic read baccarat/#
topic write baccarat/+/cmd/+/{OPERATOR}

user controller
topic write baccarat/T1/+
topic write baccarat/T1/reply/#
topic read baccarat/T1/cmd/#
""" + RELAY_ACL
USERS = {OPERATOR: PASSWORD, "controller": "c", RELAY_USER: RELAY_PASSWORD}


@pytest.fixture
def broker(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    return mosquitto_factory(anonymous=False, users=USERS, acl=ACL)


@contextlib.asynccontextmanager
async def controller(broker: Mosquitto, topics: str, seen: list[str]) -> AsyncIterator[None]:
    """A stand-in controller that answers every command it reads on ``topics``."""

    async def serve() -> None:
        async with broker.client(
            username="controller", password="c", protocol=aiomqtt.ProtocolVersion.V5
        ) as client:
            await client.subscribe(topics, qos=1)
            ready.set()
            async for message in client.messages:
                seen.append(str(message.topic))
                payload = message.payload if isinstance(message.payload, bytes) else b"{}"
                request = json.loads(payload)
                response = getattr(message.properties, "ResponseTopic", None)
                body = json.dumps({"type": "reply", "id": request.get("id"), "ok": True})
                await client.publish(response or "baccarat/T1/reply", body, qos=1)

    ready = asyncio.Event()
    task = asyncio.create_task(serve())
    async with asyncio.timeout(10):
        await ready.wait()
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def send(broker: Mosquitto) -> None:
    async with broker.client(username=OPERATOR, password=PASSWORD) as pit:
        await pit.publish(f"baccarat/T1/cmd/open/{OPERATOR}", b'{"id": 1}', qos=1)
    await asyncio.sleep(1.0)  # time for a copy, if one were made


async def test_a_controller_that_reads_operator_topics_gets_no_copy(broker: Mosquitto) -> None:
    seen: list[str] = []
    async with (
        controller(broker, "baccarat/T1/cmd/#", seen),
        OperatorRelay(broker, "T1", OPERATOR, PASSWORD) as relay,
    ):
        assert relay.needed is False
        await send(broker)
    assert seen == [f"baccarat/T1/cmd/probe/{OPERATOR}", f"baccarat/T1/cmd/open/{OPERATOR}"]
    assert relay.relayed == 0


async def test_a_controller_of_the_old_form_gets_each_command_once(broker: Mosquitto) -> None:
    seen: list[str] = []
    async with (
        controller(broker, "baccarat/T1/cmd/+", seen),
        OperatorRelay(broker, "T1", OPERATOR, PASSWORD) as relay,
    ):
        assert relay.needed is True
        await send(broker)
    assert seen == ["baccarat/T1/cmd/open"]
    assert relay.relayed == 1
