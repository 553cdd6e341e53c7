"""The publisher speaks MQTT 5: a command's response topic reaches the reply.

A pit client (MQTT 5) sends a command with a Response Topic property to the real daemon;
the reply must come back on that topic. Under MQTT 3.1.1 the broker cannot hand the
property to the controller, and the reply went to ``{prefix}/{table}/reply`` instead.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from support.daemon import Daemon
from support.mosquitto import Mosquitto


async def test_reply_goes_to_the_commands_response_topic(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    daemon = Daemon(tmp_path, mosquitto)
    try:
        await asyncio.to_thread(daemon.start)
        async with mosquitto.client(protocol=aiomqtt.ProtocolVersion.V5) as pit:
            await pit.subscribe("pit/replies/#", qos=1)
            await pit.subscribe("baccarat/T1/reply", qos=1)
            properties = Properties(PacketTypes.PUBLISH)
            properties.ResponseTopic = "pit/replies/42"
            await pit.publish(
                "baccarat/T1/cmd/shoe", b'{"id": "r42"}', qos=1, properties=properties
            )
            async with asyncio.timeout(10):
                message = await anext(aiter(pit.messages))
    finally:
        daemon.close()
    assert str(message.topic) == "pit/replies/42"
    assert isinstance(message.payload, bytes)
    reply = json.loads(message.payload)
    assert reply["id"] == "r42"
    assert reply["ok"] is True
