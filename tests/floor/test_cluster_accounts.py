"""The cluster's accounts refuse what the mosquitto ACLs refuse (docs/cluster.md, accounts).

Three real nats-server nodes; clients connect to different nodes, and the server that
holds the connection refuses the publish ("Permissions Violation"), so nothing reaches
the stream or another client.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats.errors

from baccarat.floor.cluster import ClusterAddress, connect, ensure_stream, stream_config
from baccarat.floor.nodes import PASSWORD
from support.nats import TEST_BYTES, start_cluster


async def _client(urls: list[str], user: str, errors: list[str]):  # type: ignore[no-untyped-def]
    async def error(exc: Exception) -> None:
        errors.append(str(exc).lower())  # nats-py gives the server's text in lower case

    return await connect(ClusterAddress(tuple(urls), user, PASSWORD, user), error_cb=error)


async def test_a_table_writes_only_its_subjects_and_an_operator_only_in_its_name(
    tmp_path: Path,
) -> None:
    cluster = start_cluster(tmp_path, tables=["T07", "T08"], operators=["ana", "ben"])
    try:
        urls = cluster.urls
        recorder = await _client(urls, "recorder", [])
        js = recorder.jetstream(timeout=5)
        await ensure_stream(js, stream_config(max_bytes=TEST_BYTES))
        heard: list[str] = []

        async def keep(message: nats.aio.msg.Msg) -> None:
            heard.append(message.subject)

        await recorder.subscribe("baccarat.>", cb=keep)
        await recorder.flush()

        t07_errors: list[str] = []
        t07 = await _client(urls[1:], "relay-T07", t07_errors)  # on another node
        t07_js = t07.jetstream(timeout=2)
        ack = await t07_js.publish("baccarat.T07.card", b'{"seq":1}',
                                   headers={"Nats-Msg-Id": "T07:1"})
        assert ack.stream == "BACCARAT"
        try:  # another table's subject: refused by the server, no ack ever comes
            await t07_js.publish("baccarat.T08.card", b'{"seq":1}')
            raise AssertionError("relay-T07 published on T08's subject")
        except nats.errors.Error:
            pass
        await t07.publish("baccarat.T07.cmd.void.ana", b"{}")  # a command, as if an operator
        await t07.flush()

        ana_errors: list[str] = []
        ana = await _client(urls[2:], "pit-ana", ana_errors)
        await ana.publish("baccarat.T08.cmd.void.ana", b"{}")  # its own name: allowed
        await ana.publish("baccarat.T08.cmd.void.ben", b"{}")  # another's name: refused
        await ana.publish("baccarat.T08.card", b'{"seq":9}')  # a table's subject: refused
        await ana.flush()

        board_errors: list[str] = []
        board = await _client(urls, "board", board_errors)
        await board.publish("baccarat.T07.limits", b"{}")  # readers write nothing
        await board.flush()
        await asyncio.sleep(0.5)  # the servers' -ERR comes after the flush's PONG at worst

        assert any('publish to "baccarat.t08.card"' in e for e in t07_errors), t07_errors
        assert any('publish to "baccarat.t07.cmd.void.ana"' in e for e in t07_errors)
        assert any('publish to "baccarat.t08.cmd.void.ben"' in e for e in ana_errors), ana_errors
        assert any('publish to "baccarat.t08.card"' in e for e in ana_errors)
        assert not any("cmd.void.ana" in e for e in ana_errors)
        assert any('publish to "baccarat.t07.limits"' in e for e in board_errors)
        assert heard == ["baccarat.T07.card", "baccarat.T08.cmd.void.ana"]
        info = await js.stream_info("BACCARAT")
        assert info.state.messages == 1  # T07's own card alone reached the stream
        for client in (t07, ana, board, recorder):
            await client.close()
    finally:
        cluster.close()


async def test_a_board_reads_current_state_but_not_the_edge(tmp_path: Path) -> None:
    cluster = start_cluster(tmp_path, tables=["T07"])
    try:
        recorder = await _client(cluster.urls, "recorder", [])
        await ensure_stream(recorder.jetstream(timeout=5), stream_config(max_bytes=TEST_BYTES))
        t07 = await _client(cluster.urls, "relay-T07", [])
        js = t07.jetstream(timeout=5)
        for seq, kind in enumerate(["roads", "edge", "roads"], start=1):
            await js.publish(f"baccarat.T07.{kind}", f'{{"seq":{seq}}}'.encode())
        board = await _client(cluster.urls, "board", [])
        from baccarat.floor.cluster import current

        got = await current(board.jetstream(timeout=2), "T07", ("roads",))
        assert got == {"roads": b'{"seq":3}'}  # the last one, without replaying the stream
        try:
            await current(board.jetstream(timeout=1), "T07", ("edge",))
            raise AssertionError("a board read the live edge")
        except nats.errors.Error:
            pass
        ana = await _client(cluster.urls, "pit-ana", [])  # an operator: not surveillance
        try:
            await current(ana.jetstream(timeout=1), "T07", ("edge",))
            raise AssertionError("an operator read the live edge")
        except nats.errors.Error:
            pass
        eve = await _client(cluster.urls, "surveillance", [])
        got = await current(eve.jetstream(timeout=2), "T07", ("edge",))
        assert got == {"edge": b'{"seq":2}'}  # surveillance reads it
        for client in (t07, board, ana, eve, recorder):
            await client.close()
    finally:
        cluster.close()
