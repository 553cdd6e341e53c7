"""Topics to subjects and back, the relay's message ids, and the relay given hostile input.

The relay runs in this process against a real mosquitto and three real nats-server nodes:
what is not a table's message, or could not be a subject, or is over the stream's largest
body, is acknowledged and counted, never published; every table message reaches the
stream once, with its ``table:seq`` id, and a body sent twice is kept once.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import aiomqtt
from hypothesis import given
from hypothesis import strategies as st

from baccarat.floor.cluster import (
    MAX_MSG_SIZE,
    ClusterAddress,
    connect,
    ensure_stream,
    sequence_id,
    stream_config,
    subject,
    topic,
)
from baccarat.floor.nodes import PASSWORD
from baccarat.floor.recorder import BrokerAddress
from baccarat.floor.relay import Relay
from support.mosquitto import Mosquitto
from support.nats import TEST_BYTES, start_cluster

TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # the daemon's (config.TABLE_ID)


def test_a_table_topic_is_a_subject_and_back() -> None:
    assert subject("baccarat/T07/card") == "baccarat.T07.card"
    assert subject("casino/floor1/T07/card", "casino/floor1") == "casino.floor1.T07.card"
    assert subject("baccarat/pit.3.T07/card") == "baccarat.pit~3~T07.card"
    assert topic("baccarat.pit~3~T07.card") == "baccarat/pit.3.T07/card"


def test_what_cannot_be_a_table_subject_has_none() -> None:
    for bad in ["baccarat/T07", "baccarat/T07/cmd/void/ana", "other/T07/card",
                "baccarat/T*7/card", "baccarat/T>/card", "baccarat/T 7/card",
                "baccarat//card", "baccarat/T07/", "baccarat/T~7/card", "baccarat/T07/ca.rd"]:
        assert subject(bad) is None, bad
    assert topic("baccarat.T07") is None
    assert topic("other.T07.card") is None


@given(st.from_regex(TABLE_ID, fullmatch=True), st.from_regex(r"[a-z_]{1,20}", fullmatch=True))
def test_every_table_id_of_the_daemon_goes_and_comes_back(table: str, kind: str) -> None:
    name = subject(f"baccarat/{table}/{kind}")
    assert name is not None
    assert name.count(".") == 2
    assert topic(name) == f"baccarat/{table}/{kind}"


def test_the_message_id_is_the_table_and_its_seq() -> None:
    assert sequence_id("T07", b'{"seq":12,"type":"card"}') == "T07:12"
    for body in [b'{"type":"status"}', b'{"seq":true}', b'{"seq":"12"}', b'{"seq":1.5}',
                 b"[1]", b'{"seq":', b"\xff\xfe", b'"seq"', b"[" * 100_000 + b'"seq"']:
        assert sequence_id("T07", body) is None, body[:20]


async def test_the_relay_publishes_table_messages_once_and_drops_the_rest(
    tmp_path: Path, mosquitto: Mosquitto,
) -> None:
    cluster = start_cluster(tmp_path / "cluster")
    try:
        servers = tuple(cluster.urls)
        reader = await connect(ClusterAddress(servers, "recorder", PASSWORD, "reader"))
        js = reader.jetstream(timeout=5)
        await ensure_stream(js, stream_config(max_bytes=TEST_BYTES))
        relay = Relay(BrokerAddress(mosquitto.host, mosquitto.port, client_id="relay-test"),
                      ClusterAddress(servers, "relay-floor", PASSWORD, "relay"))
        stop = asyncio.Event()
        running = asyncio.create_task(relay.run(stop))
        await asyncio.wait_for(relay.connected.wait(), 20)
        card = json.dumps({"schema": 1, "seq": 5, "type": "card"}).encode()
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            await client.publish("baccarat/T07/card", card, qos=1)
            await client.publish("baccarat/T07/card", card, qos=1)  # again: kept once
            await client.publish("baccarat/T07/status", b'{"state":"online"}', qos=1)
            await client.publish("baccarat/T~7/card", card, qos=1)  # no subject for it
            await client.publish("baccarat/T07/card", b"x" * (MAX_MSG_SIZE + 1), qos=1)
            await client.publish("baccarat/pit.3/card", card, qos=1)
        for _ in range(200):
            if relay.counters.received >= 6:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        stop.set()
        await running
        counters = relay.counters
        assert (counters.received, counters.published, counters.duplicates, counters.skipped,
                counters.refused) == (6, 4, 1, 1, 1)
        info = await js.stream_info("BACCARAT")
        assert info.state.messages == 3
        last = await js.get_last_msg("BACCARAT", "baccarat.T07.card")
        assert last.data == card
        assert (last.headers or {}).get("Nats-Msg-Id") == "T07:5"
        assert (await js.get_last_msg("BACCARAT", "baccarat.pit~3.card")).data == card
        await reader.close()
    finally:
        cluster.close()


async def test_a_recorder_started_before_the_cluster_waits_for_it(tmp_path: Path) -> None:
    from baccarat.floor.cluster import ClusterRecorder
    from baccarat.floor.nodes import LocalCluster
    from baccarat.floor.store import open_store
    from support.mosquitto import _die_with_parent

    cluster = LocalCluster(tmp_path / "cluster")  # its ports chosen, nothing started yet
    cluster.preexec = _die_with_parent
    store = open_store(str(tmp_path / "floor.db"))
    recorder = ClusterRecorder(ClusterAddress(tuple(cluster.urls), "recorder", PASSWORD),
                               store, stream_max_bytes=TEST_BYTES)
    stop = asyncio.Event()
    running = asyncio.create_task(recorder.run(stop))
    try:
        await asyncio.sleep(1.5)
        assert not running.done()  # no cluster: it waits, it does not end
        await asyncio.to_thread(cluster.start)
        await asyncio.wait_for(recorder.connected.wait(), 30)
        relay = await connect(ClusterAddress(tuple(cluster.urls), "relay-floor", PASSWORD))
        body = b'{"schema":1,"seq":1,"ts":null,"type":"status_probe"}'
        await relay.jetstream(timeout=5).publish("baccarat.T07.alarm", body)
        await relay.close()
        for _ in range(100):
            if recorder.counters.received:
                break
            await asyncio.sleep(0.05)
        assert recorder.counters.received == 1
        assert recorder.counters.connects == 1
    finally:
        stop.set()
        await asyncio.gather(running, return_exceptions=True)
        store.close()
        cluster.close()


async def test_the_recorder_keeps_its_consumer_led_from_the_stream_leaders_node(
    tmp_path: Path,
) -> None:
    from baccarat.floor.cluster import ClusterRecorder
    from baccarat.floor.store import open_store

    cluster = start_cluster(tmp_path / "cluster")
    store = open_store(str(tmp_path / "floor.db"))
    address = ClusterAddress(tuple(cluster.urls), "recorder", PASSWORD)
    recorder = ClusterRecorder(address, store, stream_max_bytes=TEST_BYTES)
    stop = asyncio.Event()
    running = asyncio.create_task(recorder.run(stop))
    admin = await connect(address)
    try:
        await asyncio.wait_for(recorder.connected.wait(), 30)

        def leaders() -> tuple[int | None, int | None]:
            return (cluster.stream_leader("BACCARAT"),
                    cluster.stream_leader("BACCARAT", "recorder"))

        for _ in range(20):  # move the consumer's lead away from the stream's
            stream, consumer = await asyncio.to_thread(leaders)
            if None not in (stream, consumer) and stream != consumer:
                break
            await admin.request("$JS.API.CONSUMER.LEADER.STEPDOWN.BACCARAT.recorder", b"",
                                timeout=5)
            await asyncio.sleep(1.0)
        else:
            raise AssertionError("the consumer's lead could not be moved away")
        for _ in range(60):
            stream, consumer = await asyncio.to_thread(leaders)
            if stream is not None and stream == consumer:
                break
            await asyncio.sleep(0.5)
        assert stream == consumer
        assert recorder.stepdowns >= 1
    finally:
        await admin.close()
        stop.set()
        await asyncio.gather(running, return_exceptions=True)
        store.close()
        cluster.close()
