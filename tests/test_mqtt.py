"""The package's MQTT client (paho on the event loop) against a real mosquitto.

Reason codes in PUBACKs, a lost connection noticed by every waiting call, the message
iterator with its MQTT 5 response topic, TLS, and 3.1.1 for brokers without MQTT 5; the
recorder's persistent session with acknowledgement by hand and its receive maximum, retained
messages left out of a resumed subscription, and MQTT over WebSocket (the pit's login check).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from baccarat.mqtt import (
    ConnectRefusedError,
    LinkError,
    MqttClient,
    MqttSettings,
    PublishRefusedError,
    Received,
    Will,
)
from support.mosquitto import Mosquitto, MosquittoFactory

USERS = {"table": "t-secret", "pit": "p-secret"}
ACL = (
    "user table\ntopic deny baccarat/T1/secret\ntopic readwrite baccarat/#\n"
    "user pit\ntopic readwrite baccarat/#\n"
)


def connect(host: str, port: int, **settings: Any) -> MqttClient:
    """A client of ``MqttSettings(host, port, **settings)``."""
    return MqttClient(MqttSettings(host, port, **settings))


def client(broker: Mosquitto, **options: object) -> MqttClient:
    settings: dict[str, object] = {"client_id": "baccarat-T1", "username": "table",
                                   "password": "t-secret", **options}
    return connect(broker.host, broker.port, **settings)


async def test_a_refused_publish_raises_with_its_reason_code(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, acl=ACL)
    async with client(broker) as mqtt:
        await mqtt.publish("baccarat/T1/card", b"allowed")
        with pytest.raises(PublishRefusedError) as refused:
            await mqtt.publish("baccarat/T1/secret", b"denied")
        assert refused.value.code == 0x87
        assert refused.value.name == "Not authorized"
        assert refused.value.topic == "baccarat/T1/secret"
        assert "0x87 Not authorized" in str(refused.value)
        await mqtt.publish("baccarat/T1/card", b"the connection stays up")


async def test_under_mqtt_3_1_1_the_broker_cannot_say_no(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, acl=ACL)
    async with client(broker, version="3.1.1") as mqtt:
        await mqtt.publish("baccarat/T1/secret", b"dropped, and acknowledged")


async def test_a_refused_connection_is_an_mqtt_error(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS)
    with pytest.raises(LinkError, match=r"Not authorized|Bad user name or password"):
        async with client(broker, password="wrong"):
            pass


async def test_no_broker_is_an_mqtt_error(mosquitto: Mosquitto) -> None:
    mosquitto.stop()
    with pytest.raises(LinkError, match="cannot connect"):
        async with connect(mosquitto.host, mosquitto.port, client_id="t"):
            pass


async def test_messages_carry_topic_payload_retain_and_response_topic(
    mosquitto: Mosquitto,
) -> None:
    async with mosquitto.client() as pit:
        await pit.publish("baccarat/T1/cmd/open", b"kept", qos=1, retain=True)
    async with connect(mosquitto.host, mosquitto.port, client_id="table") as mqtt:
        await mqtt.subscribe("baccarat/T1/cmd/+")
        async with mosquitto.client(protocol=aiomqtt.ProtocolVersion.V5) as pit:
            properties = Properties(PacketTypes.PUBLISH)
            properties.ResponseTopic = "pit/replies"
            await pit.publish("baccarat/T1/cmd/burn", b'{"count":2}', qos=1,
                              properties=properties)
        got = []
        async with asyncio.timeout(10):
            async for message in mqtt.messages():
                got.append(message)
                if len(got) == 2:
                    break
    assert [(m.topic, m.payload, m.retain, m.response_topic) for m in got] == [
        ("baccarat/T1/cmd/open", b"kept", True, None),  # from the broker's store
        ("baccarat/T1/cmd/burn", b'{"count":2}', False, "pit/replies"),
    ]


async def test_a_silent_broker_is_noticed_by_keepalive(mosquitto: Mosquitto) -> None:
    async with connect(mosquitto.host, mosquitto.port, client_id="t", keepalive=2) as mqtt:
        await mqtt.subscribe("baccarat/T1/cmd/+")
        mosquitto.pause()  # alive, silent: no PINGRESP
        try:
            with pytest.raises(LinkError, match="connection lost"):
                await asyncio.wait_for(_drain(mqtt), 20)
            with pytest.raises(LinkError, match="connection lost"):
                await mqtt.publish("baccarat/T1/card", b"after")
        finally:
            mosquitto.resume()


async def _drain(mqtt: MqttClient) -> None:
    async for _ in mqtt.messages():
        pass


async def test_a_broker_gone_fails_a_waiting_publish(mosquitto: Mosquitto) -> None:
    async with connect(mosquitto.host, mosquitto.port, client_id="t") as mqtt:
        mosquitto.pause()
        waiting = asyncio.create_task(mqtt.publish("baccarat/T1/card", b"no PUBACK"))
        await asyncio.sleep(0.2)
        mosquitto.kill()  # the socket closes under the waiting publish
        with pytest.raises(LinkError, match="connection lost"):
            async with asyncio.timeout(10):
                await waiting


async def test_a_clean_close_sends_no_will(mosquitto: Mosquitto) -> None:
    will = Will("baccarat/T1/status", b"offline", retain=True)
    async with connect(mosquitto.host, mosquitto.port, client_id="table", will=will):
        pass
    async with connect(mosquitto.host, mosquitto.port, client_id="reader") as reader:
        await reader.subscribe("baccarat/T1/status")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.0):
                await anext(aiter(reader.messages()))


async def test_tls_with_the_brokers_ca(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(tls=True)
    context = ssl.create_default_context(cafile=str(broker.ca_file))
    async with connect(broker.host, broker.tls_port, client_id="t",
                          tls_context=context) as mqtt:
        await mqtt.publish("baccarat/T1/card", b"over TLS")



# ---- what the recorder, the pit's login check and the boards need of the same client ----

SESSION = {"client_id": "recorder", "clean_start": False, "session_expiry": 600,
           "manual_ack": True}


async def _take(mqtt: MqttClient, count: int) -> list[Received]:
    got: list[Received] = []
    async with asyncio.timeout(10):
        async for message in mqtt.messages():
            got.append(message)
            if len(got) == count:
                return got
    return got


async def test_only_what_is_acknowledged_by_hand_is_not_delivered_again(
    mosquitto: Mosquitto,
) -> None:
    async with connect(mosquitto.host, mosquitto.port, **SESSION) as first:
        assert not first.session_present
        await first.subscribe("floor/#", qos=1)
        async with connect(mosquitto.host, mosquitto.port, client_id="table") as table:
            await table.publish("floor/a", b"stored")
            await table.publish("floor/b", b"not stored")
        stored, unstored = await _take(first, 2)
        assert first.ack(stored.mid, stored.qos)
    assert not first.ack(unstored.mid, unstored.qos)  # closed: nothing goes
    async with connect(mosquitto.host, mosquitto.port, **SESSION) as again:
        assert again.session_present
        async with connect(mosquitto.host, mosquitto.port, client_id="table") as table:
            await table.publish("floor/c", b"after")
        got = await _take(again, 2)
    assert [(m.topic, m.payload) for m in got] == [
        ("floor/b", b"not stored"),  # again: never acknowledged
        ("floor/c", b"after"),  # and not floor/a, which was
    ]


async def test_the_receive_maximum_holds_the_broker_until_a_message_is_acknowledged(
    mosquitto: Mosquitto,
) -> None:
    async with connect(mosquitto.host, mosquitto.port, client_id="r", receive_maximum=2,
                          manual_ack=True) as reader:
        await reader.subscribe("floor/#", qos=1)
        async with connect(mosquitto.host, mosquitto.port, client_id="table") as table:
            for n in range(3):
                await table.publish("floor/card", b"%d" % n)
        first, second = await _take(reader, 2)
        with pytest.raises(TimeoutError):  # the broker waits for a PUBACK
            async with asyncio.timeout(0.5):
                await anext(aiter(reader.messages()))
        reader.ack(first.mid, first.qos)
        (third,) = await _take(reader, 1)
    assert [first.payload, second.payload, third.payload] == [b"0", b"1", b"2"]


async def test_a_resumed_subscription_can_leave_the_retained_messages_out(
    mosquitto: Mosquitto,
) -> None:
    async with connect(mosquitto.host, mosquitto.port, client_id="table") as table:
        await table.publish("floor/shoe", b"retained", retain=True)
    seen = []
    for live in (b"first", b"second"):  # a new session, then the same one resumed
        async with connect(mosquitto.host, mosquitto.port, **SESSION) as reader:
            await reader.subscribe("floor/#", qos=1, retained="if_new")
            async with connect(mosquitto.host, mosquitto.port, client_id="table") as table:
                await table.publish("floor/card", live)
            got = await _take(reader, 1 if reader.session_present else 2)
            if reader.session_present:  # as a contrast, "always" gets it again
                await reader.subscribe("floor/#", qos=1)
                got += await _take(reader, 1)
            for message in got:
                reader.ack(message.mid, message.qos)
            seen.append([m.payload for m in got])
    assert seen == [[b"retained", b"first"], [b"second", b"retained"]]


async def test_over_websocket_a_refused_login_says_its_reason_code(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, websockets=True)

    def over_websocket(username: str, password: str) -> MqttClient:
        return connect(broker.host, broker.websockets_port, client_id=username,
                          username=username, password=password, websocket_path="/mqtt")

    with pytest.raises(ConnectRefusedError) as refused:
        async with over_websocket("table", "wrong"):
            pass
    assert refused.value.code in (0x86, 0x87)  # bad username or password / not authorized
    async with client(broker, client_id="pit", username="pit", password="p-secret") as pit:
        await pit.subscribe("baccarat/T1/#")
        async with over_websocket("table", "t-secret") as table:
            await table.publish("baccarat/T1/card", b"over WebSocket")
        (message,) = await _take(pit, 1)
    assert message.payload == b"over WebSocket"


async def test_one_subscribe_for_several_topics_and_a_dropped_connection_says_why(
    mosquitto: Mosquitto,
) -> None:
    async with client(mosquitto, client_id="board") as board:
        with pytest.raises(ValueError, match="no topic"):
            await board.subscribe()
        await board.subscribe("baccarat/T1/card", "baccarat/T1/result", qos=1)
        async with client(mosquitto, client_id="table") as table:
            for kind in ("card", "edge", "result"):  # edge is not subscribed
                await table.publish(f"baccarat/T1/{kind}", kind.encode())
        got = await _take(board, 2)
        board.drop("stalled: nothing delivered")
        with pytest.raises(LinkError, match="stalled: nothing delivered"):
            await anext(aiter(board.messages()))
        with pytest.raises(LinkError, match="stalled"):
            await board.publish("baccarat/T1/card", b"after the drop")
    assert [m.payload for m in got] == [b"card", b"result"]


def test_the_settings_are_checked_once_and_never_show_the_password() -> None:
    """One settings object, checked when made; its repr (a log line's) has no password."""
    with pytest.raises(ValueError, match="MQTT 5 properties"):
        MqttSettings("h", 1883, client_id="r", version="3.1.1", session_expiry=60)
    settings = MqttSettings("h", 1883, client_id="r", username="table", password="t-secret")
    assert "t-secret" not in repr(settings)
    assert "username='table'" in repr(settings)
    assert MqttClient(settings).settings is settings
