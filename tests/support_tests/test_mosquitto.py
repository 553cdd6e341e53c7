"""tests/support/mosquitto.py against a real aiomqtt 2.x client."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from pathlib import Path

import aiomqtt
import pytest

from support.mosquitto import Mosquitto, MosquittoError, MosquittoFactory

WAIT = 5.0  # seconds for a message that should come


async def next_message(client: aiomqtt.Client, within: float = WAIT) -> aiomqtt.Message:
    """The next message the client receives, or TimeoutError."""
    async with asyncio.timeout(within):
        return await anext(client.messages)


async def round_trip(broker: Mosquitto, topic: str = "t/1", **client_options: object) -> bytes:
    """Publish through the broker to a subscriber, both made with ``client_options``."""
    async with broker.client(**client_options) as sub:  # type: ignore[arg-type]
        await sub.subscribe(topic, qos=1)
        async with broker.client(**client_options) as pub:  # type: ignore[arg-type]
            await pub.publish(topic, b"hello", qos=1)
        message = await next_message(sub)
    assert str(message.topic) == topic
    assert isinstance(message.payload, bytes)
    return message.payload


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (and is not a zombie of ours)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_publish_subscribe_round_trip(mosquitto: Mosquitto) -> None:
    assert mosquitto.running
    assert await round_trip(mosquitto) == b"hello"


async def test_retained_message_reaches_a_late_subscriber(mosquitto: Mosquitto) -> None:
    async with mosquitto.client() as pub:
        await pub.publish("baccarat/T07/status", b"online", qos=1, retain=True)
    async with mosquitto.client() as sub:
        await sub.subscribe("baccarat/T07/status")
        message = await next_message(sub)
    assert message.retain
    assert message.payload == b"online"


async def test_password_accepted_and_wrong_password_refused(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(anonymous=False, users={"pit": "s3cret"})
    assert await round_trip(broker, username="pit", password="s3cret") == b"hello"
    with pytest.raises(aiomqtt.MqttError, match=r"[Nn]ot authori[sz]ed"):
        async with broker.client(username="pit", password="wrong"):
            pass
    with pytest.raises(aiomqtt.MqttError, match=r"[Nn]ot authori[sz]ed"):
        async with broker.client():  # anonymous
            pass


async def test_acl_board_cannot_publish_commands(mosquitto_factory: MosquittoFactory) -> None:
    acl = "\n".join(
        [
            "user board",
            "topic read baccarat/#",
            "user pit",
            "topic readwrite baccarat/#",
        ]
    )
    users = {"board": "b", "pit": "p"}
    broker = mosquitto_factory(anonymous=False, users=users, acl=acl)
    async with (
        broker.client(username="pit", password="p") as pit,
        broker.client(username="board", password="b") as board,
    ):
        await pit.subscribe("baccarat/#", qos=1)
        await board.subscribe("baccarat/#", qos=1)
        # The broker acknowledges a refused QoS 1 publish and drops it (MQTT 3.1.1).
        await board.publish("baccarat/T07/cmd/void", b'{"by": "board"}', qos=1)
        await pit.publish("baccarat/T07/cmd/void", b'{"by": "pit"}', qos=1)
        assert (await next_message(pit)).payload == b'{"by": "pit"}'
        assert (await next_message(board)).payload == b'{"by": "pit"}'  # boards may read


async def test_tls_with_the_throwaway_ca(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(tls=True)
    assert broker.ca_file.is_file()
    assert await round_trip(broker, tls=True) == b"hello"
    untrusting = ssl.create_default_context()  # the system's CAs, not ours
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client(broker.host, broker.tls_port, tls_context=untrusting):
            pass


async def test_tls_parameters_as_the_daemon_passes_them(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(tls=True, anonymous=False, users={"controller": "c"})
    params = aiomqtt.TLSParameters(ca_certs=str(broker.ca_file))
    async with aiomqtt.Client(
        "localhost", broker.tls_port, username="controller", password="c", tls_params=params
    ) as client:
        await client.publish("baccarat/T07/status", b"online", qos=1)


async def test_client_certificate_required(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(require_certificate=True)
    assert await round_trip(broker, certificate="controller") == b"hello"
    with pytest.raises(aiomqtt.MqttError):
        async with broker.client(tls=True, timeout=1):  # no certificate
            pass


async def test_websockets_listener(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(websockets=True)
    assert await round_trip(broker, websockets=True) == b"hello"


async def test_stop_and_start_on_the_same_port(mosquitto: Mosquitto) -> None:
    port, first_pid = mosquitto.port, mosquitto.pid
    async with mosquitto.client() as client:
        await client.subscribe("t/#")
        mosquitto.stop()
        assert not mosquitto.running
        with pytest.raises(aiomqtt.MqttError):
            await next_message(client)
    with pytest.raises(aiomqtt.MqttError):
        async with mosquitto.client():
            pass
    mosquitto.start()
    assert mosquitto.port == port
    assert mosquitto.pid != first_pid
    assert await round_trip(mosquitto) == b"hello"
    assert mosquitto.starts == 2


async def test_async_stop_for_a_while_then_start(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(tls=True, websockets=True)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async with asyncio.TaskGroup() as group:
        ticker = group.create_task(tick(), name="ticker")
        await broker.stop_async()
        await asyncio.sleep(0.3)
        await broker.start_async()
        ticker.cancel()
    assert ticks >= 10  # the loop kept running while the broker was down
    assert await round_trip(broker, tls=True) == b"hello"
    assert await round_trip(broker, websockets=True) == b"hello"


async def test_retained_messages_survive_a_restart_only_with_persistence(
    mosquitto_factory: MosquittoFactory,
) -> None:
    for persistence in (False, True):
        broker = mosquitto_factory(persistence=persistence)
        async with broker.client() as pub:
            await pub.publish("baccarat/T07/shoe", b"shoe 3", qos=1, retain=True)
        broker.stop()
        broker.start()
        async with broker.client() as sub:
            await sub.subscribe("baccarat/T07/shoe")
            if persistence:
                assert (await next_message(sub)).payload == b"shoe 3"
            else:
                with pytest.raises(TimeoutError):
                    await next_message(sub, within=0.3)


# MQTT 3.1.1 CONNECT (clean session, keepalive 60 s, client id "x") and its CONNACK.
CONNECT = bytes([0x10, 13, 0, 4, *b"MQTT", 4, 0x02, 0, 60, 0, 1, *b"x"])
CONNACK_ACCEPTED = bytes([0x20, 2, 0, 0])


def test_pause_and_resume(mosquitto: Mosquitto) -> None:
    mosquitto.pause()
    with socket.create_connection((mosquitto.host, mosquitto.port), timeout=0.3) as sock:
        sock.sendall(CONNECT)  # the kernel queues it; the frozen broker does not answer
        with pytest.raises(TimeoutError):
            sock.recv(4)
        mosquitto.resume()
        sock.settimeout(WAIT)
        assert sock.recv(4) == CONNACK_ACCEPTED


async def test_kill_and_start_again(mosquitto: Mosquitto) -> None:
    pid = mosquitto.pid
    assert pid is not None
    mosquitto.kill()
    assert not alive(pid)
    assert not mosquitto.running
    mosquitto.start()
    assert await round_trip(mosquitto) == b"hello"


def test_close_leaves_no_process(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path).start()
    pid = broker.pid
    assert pid is not None
    assert alive(pid)
    broker.pause()  # even a frozen broker goes
    broker.close()
    broker.close()  # idempotent
    assert not alive(pid)
    assert broker.pid is None


def test_context_manager(tmp_path: Path) -> None:
    with Mosquitto(tmp_path) as broker:
        pid = broker.pid
        assert pid is not None
    assert not alive(pid)


def test_a_broker_that_cannot_start_says_why(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path, extra_config="no_such_option 1")
    with pytest.raises(MosquittoError, match="no_such_option"):
        broker.start()
    assert not broker.running


def squatter(port: int) -> socket.socket:
    """A socket listening on the loopback port, as another program would."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_port_taken_before_the_first_start_is_replaced(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path)
    taken = broker.port
    with squatter(taken), broker:
        assert broker.port != taken
        assert "Address already in use" in broker.log()
        assert broker.running


def test_a_port_taken_before_a_restart_is_reported(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path).start()
    broker.stop()
    with squatter(broker.port), pytest.raises(MosquittoError, match="Address already in use"):
        broker.start()
    assert not broker.running


async def test_own_configuration_with_placeholders(mosquitto_factory: MosquittoFactory) -> None:
    config = "\n".join(
        [
            "persistence false",
            "allow_anonymous true",
            "user root" if os.geteuid() == 0 else "",
            "listener {port} 127.0.0.1",
            "listener {websockets_port} 127.0.0.1",
            "protocol websockets",
        ]
    )
    broker = mosquitto_factory(config=config)
    assert await round_trip(broker) == b"hello"
    assert await round_trip(broker, websockets=True) == b"hello"


def test_env_points_the_daemon_at_the_broker(mosquitto_factory: MosquittoFactory) -> None:
    broker = mosquitto_factory(tls=True)
    env = broker.env(username="controller", password="c", tls=True)
    assert env == {
        "BACCARAT_BROKER__HOST": "127.0.0.1",
        "BACCARAT_BROKER__PORT": str(broker.tls_port),
        "BACCARAT_BROKER__USERNAME": "controller",
        "BACCARAT_BROKER__PASSWORD": "c",
        "BACCARAT_BROKER__TLS": "true",
        "BACCARAT_BROKER__CA_FILE": str(broker.ca_file),
    }
