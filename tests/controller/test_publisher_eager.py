"""The publisher's eager writes (publisher.send_eagerly) against a real mosquitto."""

from __future__ import annotations

import asyncio
import hashlib

import aiomqtt

from baccarat.controller.publisher import send_eagerly
from support.mosquitto import Mosquitto

WAIT = 10.0


async def test_a_publish_is_on_the_socket_when_publish_returns(mosquitto: Mosquitto) -> None:
    async with mosquitto.client() as client:
        paho = client._client  # the one private name send_eagerly relies on
        stock = paho.on_socket_register_write
        info = paho.publish("t/stock", b"x", qos=1)
        assert paho.want_write()  # stock aiomqtt: queued, written two loop turns later
        await asyncio.sleep(0.05)
        assert not paho.want_write()
        assert info.rc == 0

        send_eagerly(client)
        assert paho.on_socket_register_write is not stock
        info = paho.publish("t/eager", b"y", qos=1)
        assert not paho.want_write()  # written before publish() returned
        assert info.rc == 0


async def test_bodies_larger_than_the_socket_takes_at_once_arrive_whole_and_in_order(
    mosquitto: Mosquitto,
) -> None:
    bodies = [bytes([n]) * size for n, size in enumerate((16_000_000, 10, 16_000_000, 5))]
    async with mosquitto.client() as sub:
        await sub.subscribe("t/big", qos=1)
        async with mosquitto.client() as pub:
            send_eagerly(pub)
            paho = pub._client
            # Back to back: more than the socket takes at once, so the rest is left for the
            # loop's writer, as aiomqtt does it.
            infos = [paho.publish("t/big", body, qos=1) for body in bodies]
            assert paho.want_write()
            received: list[bytes] = []
            async with asyncio.timeout(WAIT):
                async for message in sub.messages:
                    assert isinstance(message.payload, bytes)
                    received.append(message.payload)
                    if len(received) == len(bodies):
                        break
            async with asyncio.timeout(WAIT):  # and the broker acknowledged every one
                while not all(info.is_published() for info in infos):  # noqa: ASYNC110 - paho sets no event
                    await asyncio.sleep(0.01)
    assert [hashlib.sha256(b).hexdigest() for b in received] == [
        hashlib.sha256(b).hexdigest() for b in bodies
    ]


async def test_a_dropped_connection_still_fails_the_session(mosquitto: Mosquitto) -> None:
    client = mosquitto.client(timeout=2)
    failed = False
    try:
        async with client:
            send_eagerly(client)
            mosquitto.kill()
            for _ in range(50):
                await client.publish("t/gone", b"z" * 100_000, qos=1)
                await asyncio.sleep(0.02)
    except aiomqtt.MqttError:
        failed = True
    assert failed


async def _nothing_within(sub: aiomqtt.Client, seconds: float) -> bool:
    try:
        async with asyncio.timeout(seconds):
            await anext(sub.messages)
    except TimeoutError:
        return True
    return False


async def test_held_writes_wait_for_release(mosquitto: Mosquitto) -> None:
    async with mosquitto.client() as sub:
        await sub.subscribe("t/held", qos=1)
        async with mosquitto.client() as pub:
            writer = send_eagerly(pub)
            paho = pub._client
            writer.hold()
            info = paho.publish("t/held", b"after the flush", qos=1)
            assert info.rc == 0
            assert paho.want_write()  # made, kept in paho's queue
            writer.release()
            assert not paho.want_write()  # on the socket before release() returned
            async with asyncio.timeout(WAIT):
                message = await anext(sub.messages)
            assert message.payload == b"after the flush"
            # a hold across turns of the loop keeps aiomqtt's own writer away too
            writer.hold()
            paho.publish("t/held", b"second", qos=1)
            assert await _nothing_within(sub, 0.3)
            writer.release()
            async with asyncio.timeout(WAIT):
                message = await anext(sub.messages)
            assert message.payload == b"second"


async def test_an_aborted_hold_never_sends_and_fails_the_session(mosquitto: Mosquitto) -> None:
    async with mosquitto.client() as sub:
        await sub.subscribe("t/lost", qos=1)
        pub = mosquitto.client(timeout=2)
        failed = False
        try:
            async with pub:
                writer = send_eagerly(pub)
                writer.hold()
                pub._client.publish("t/lost", b"must never arrive", qos=1)
                writer.abort()
                writer.release()
                for _ in range(50):  # the connection is gone: the session notices
                    await pub.publish("t/lost", b"nor this", qos=1)
                    await asyncio.sleep(0.05)
        except aiomqtt.MqttError:
            failed = True
        assert failed
        assert await _nothing_within(sub, 0.5)
