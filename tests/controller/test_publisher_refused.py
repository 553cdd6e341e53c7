"""Acceptance for issue 10, finding 4: a publish the broker refuses is seen and kept.

The controller's account may not write the table's ``shoe`` topic. The refusal must be
logged (once), raised as an alarm on a topic the account may write, and the message kept in
the outbox; once the ACL is fixed and mosquitto reloads it (SIGHUP), everything kept is
delivered in order.

It failed with aiomqtt 2.5.1, whose ``on_publish`` callback drops the PUBACK reason code
(0x87): the publisher now has its own client on paho (``baccarat.mqtt``).
Messages that were already in flight with the refused one when the refusal came back may
reach subscribers before it (the broker took them); everything produced later waits.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from baccarat.controller.config import BrokerConfig
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import parse_input
from baccarat.controller.outbox import Outbox, OutMessage
from baccarat.controller.publisher import Publisher
from baccarat.rules.profiles import load_profile
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto, MosquittoFactory

USERS = {"controller": "c-secret", "board": "b-secret", "pit": "p-secret"}
READERS = "user board\ntopic read baccarat/#\nuser pit\ntopic readwrite baccarat/+/cmd/#\n"
DENIED = "user controller\ntopic deny baccarat/T1/shoe\ntopic readwrite baccarat/#\n" + READERS
FIXED = "user controller\ntopic readwrite baccarat/#\n" + READERS


async def test_a_refused_publish_is_alarmed_kept_and_delivered_once_allowed(
    tmp_path: Path, mosquitto_factory: MosquittoFactory
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, acl=DENIED)
    daemon = Daemon(
        tmp_path, broker, broker_env=broker.env(username="controller", password="c-secret")
    )
    try:
        async with Recorder(broker, username="board", password="b-secret") as board:
            await asyncio.to_thread(daemon.start)
            async with broker.client(username="pit", password="p-secret") as pit:
                await pit.publish("baccarat/T1/cmd/shoe", b"{}", qos=1)
            await board.wait_for(lambda r: len(r.bodies("reply")) == 1, 10)
            await asyncio.sleep(2.0)
            assert board.bodies("shoe") == []
            assert "not authorized" in daemon.log().lower()
            assert daemon.log().lower().count("not authorized") == 1  # once, not per message
            await board.wait_for(lambda r: any("shoe" in a["text"] for a in r.bodies("alarm")), 10)
            async with broker.client(username="pit", password="p-secret") as pit:
                await pit.publish("baccarat/T1/cmd/demo", b'{"on": true}', qos=1)
            await board.wait_for(lambda r: len(r.bodies("reply")) == 2, 10)
            await asyncio.sleep(1.0)
            assert board.bodies("shoe") == []  # produced after the refusal: it waits

            broker.acl_file.write_text(FIXED)
            assert broker.pid is not None
            os.kill(broker.pid, signal.SIGHUP)
            await board.wait_for(lambda r: len(r.bodies("shoe")) == 2, 30)
            await board.wait_for(lambda r: len(r.bodies("alarm_cleared")) == 1, 10)
    finally:
        daemon.close()
    (alarm,) = board.bodies("alarm")
    assert alarm["kind"] == "publish_refused"
    assert board.bodies("alarm_cleared")[0]["id"] == alarm["id"]
    kept = [b["seq"] for b in board.bodies() if "seq" in b and b["type"] not in ("alarm", "alarms")]
    refused = board.bodies("shoe")[0]["seq"]
    before, after = kept[: kept.index(refused)], kept[kept.index(refused) :]
    assert all(seq < alarm["seq"] for seq in before)  # only what was on its way with it
    assert after == sorted(after)  # the rest waited behind it
    assert sorted(set(board.by_seq())) == list(range(1, max(board.by_seq()) + 1))


async def until(condition: Callable[[], bool], within: float) -> None:
    """Poll ``condition`` (a test's observation of a real broker) until true."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - polls what a subscriber received
            await asyncio.sleep(0.05)


TABLE_ACL = (
    "user controller\ntopic deny baccarat/T9/shoe\ntopic readwrite baccarat/#\n"
    "user board\ntopic read baccarat/#\n"
)


async def test_messages_behind_a_refused_one_wait_except_alarms_and_it_is_logged_once(
    mosquitto_factory: MosquittoFactory, caplog: pytest.LogCaptureFixture
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, acl=TABLE_ACL)
    outbox = Outbox()
    reports: list[str | None] = []
    publisher = Publisher(
        BrokerConfig(host=broker.host, port=broker.port, username="controller",
                     password="c-secret"),
        topic_base="baccarat/T9", table="T9", outbox=outbox, on_refusal=reports.append,
    )
    outbox.put(OutMessage("baccarat/T9/card", b"1", seq=1))
    outbox.put(OutMessage("baccarat/T9/shoe", b"2", retain=True, seq=2))
    got: list[tuple[str, int]] = []
    async with broker.client(username="board", password="b-secret") as board:
        await board.subscribe("baccarat/T9/+", qos=1)

        async def record() -> None:
            async for message in board.messages:
                assert isinstance(message.payload, bytes)
                if message.topic.value != "baccarat/T9/status":
                    got.append((message.topic.value, int(message.payload)))

        recorder = asyncio.create_task(record())
        task = asyncio.create_task(publisher.run())
        try:
            await until(lambda: bool(reports), 10)
            for seq in range(3, 103):  # produced after the refusal: they wait
                outbox.put(OutMessage("baccarat/T9/card", str(seq).encode(), seq=seq))
            outbox.put(OutMessage("baccarat/T9/alarm", b"103", seq=103, urgent=True))  # goes on
            await asyncio.sleep(3.0)  # several retries of the refused one
            assert got == [("baccarat/T9/card", 1), ("baccarat/T9/alarm", 103)]
            assert publisher.counters.refused >= 3
            assert reports == [
                "the broker refuses to publish on baccarat/T9/shoe (reason code 0x87): "
                "messages are kept"
            ]
            refusals = [r for r in caplog.records if "Not authorized" in r.getMessage()]
            assert len(refusals) == 1  # once, not per retry
            assert len(outbox) == 102  # 2..102 kept, 103 acknowledged out of order

            broker.acl_file.write_text(TABLE_ACL.replace("topic deny baccarat/T9/shoe\n", ""))
            assert broker.pid is not None
            os.kill(broker.pid, signal.SIGHUP)
            await until(lambda: len(got) >= 103 and len(outbox) == 0, 30)
        finally:
            publisher.stop()
            task.cancel()
            recorder.cancel()
            await asyncio.gather(task, recorder, return_exceptions=True)
    assert got[2:] == [("baccarat/T9/shoe", 2)] + [("baccarat/T9/card", s) for s in range(3, 103)]
    assert reports[-1] is None  # the refusal ended: the table clears its alarm
    assert outbox.acked_seq == 103


def table_publisher(broker: Mosquitto, outbox: Outbox, reports: list[str | None]) -> Publisher:
    return Publisher(
        BrokerConfig(host=broker.host, port=broker.port, username="controller",
                     password="c-secret"),
        topic_base="baccarat/T9", table="T9", outbox=outbox, on_refusal=reports.append,
    )


async def test_a_refused_reply_is_dropped_and_holds_nothing(
    mosquitto_factory: MosquittoFactory, caplog: pytest.LogCaptureFixture
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, acl=TABLE_ACL)
    outbox = Outbox()
    reports: list[str | None] = []
    publisher = table_publisher(broker, outbox, reports)
    outbox.put(OutMessage("pit/replies", b'{"ok":true}'))  # a response topic it may not write
    outbox.put(OutMessage("baccarat/T9/card", b"1", seq=1))
    task = asyncio.create_task(publisher.run())
    try:
        async with asyncio.timeout(10):
            await outbox.wait_empty()
    finally:
        publisher.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert outbox.acked_seq == 1
    assert reports == []  # no alarm: the table's messages pass
    (line,) = [r.getMessage() for r in caplog.records if "pit/replies" in r.getMessage()]
    assert "0x87 Not authorized: dropped" in line


async def test_after_a_restart_the_first_message_that_passes_ends_the_refusal(
    mosquitto_factory: MosquittoFactory,
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, acl=TABLE_ACL)
    outbox = Outbox()
    reports: list[str | None] = []
    publisher = table_publisher(broker, outbox, reports)
    publisher.refusal_left_open()  # the journal left the alarm open
    outbox.put(OutMessage("baccarat/T9/card", b"1", seq=1))
    task = asyncio.create_task(publisher.run())
    try:
        async with asyncio.timeout(10):
            await outbox.wait_empty()
    finally:
        publisher.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert reports == [None]


async def test_a_refusal_open_at_a_restart_clears_once_the_broker_accepts(
    tmp_path: Path, mosquitto_factory: MosquittoFactory
) -> None:
    broker = mosquitto_factory(anonymous=False, users=USERS, acl=DENIED)
    daemon = Daemon(
        tmp_path, broker, broker_env=broker.env(username="controller", password="c-secret")
    )
    try:
        async with Recorder(broker, username="board", password="b-secret") as board:
            await asyncio.to_thread(daemon.start)
            async with broker.client(username="pit", password="p-secret") as pit:
                await pit.publish("baccarat/T1/cmd/shoe", b"{}", qos=1)
            await board.wait_for(lambda r: len(r.bodies("alarm")) == 1, 10)
            assert await asyncio.to_thread(daemon.stop) == 0
            broker.acl_file.write_text(FIXED)
            assert broker.pid is not None
            os.kill(broker.pid, signal.SIGHUP)
            await asyncio.to_thread(daemon.start)
            await board.wait_for(lambda r: len(r.bodies("alarm_cleared")) == 1, 15)
            await board.wait_for(lambda r: len(r.bodies("shoe")) == 1, 10)
    finally:
        daemon.close()
    alarms = {a["id"]: a for a in board.bodies("alarm")}  # sent again after the restart
    assert [a["kind"] for a in alarms.values()] == ["publish_refused"]
    assert [c["id"] for c in board.bodies("alarm_cleared")] == list(alarms)
    assert sorted(board.by_seq()) == list(range(1, max(board.by_seq()) + 1))


def test_the_engine_keeps_one_publish_refused_alarm_until_publishing_works() -> None:
    engine = Engine(load_profile("macau", burn="none"))
    engine.feed(parse_input("shoe"))
    raised = engine.feed(parse_input("device publish_refused on baccarat/T1/shoe")).messages
    assert [(m.type, m.kind, m.text) for m in raised if m.type == "alarm"] == [  # type: ignore[attr-defined]
        ("alarm", "publish_refused", "on baccarat/T1/shoe")
    ]
    assert [a.kind for a in engine.open_alarms()] == ["publish_refused"]  # retained, listed
    assert engine.publish_refused
    assert engine.feed(parse_input("device publish_refused again")).messages == []
    cleared = engine.feed(parse_input("device publish_accepted")).messages
    assert [(m.type, m.by) for m in cleared if m.type == "alarm_cleared"] == [  # type: ignore[attr-defined]
        ("alarm_cleared", "publish_accepted")
    ]
    assert engine.open_alarms() == []
    assert not engine.publish_refused
    assert engine.feed(parse_input("device publish_accepted")).messages == []
