"""examples/mosquitto: a real mosquitto runs the example configuration and ACL.

Only ports and file paths are changed, the way Debian would load the file: its own
mosquitto.conf (persistence_location, log_dest) and then the example from conf.d. The
accounts are those the example's ACL names, with passwords made up here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from baccarat.boards.accept import TOPIC_TYPES
from baccarat.boards.web_server import page_config
from baccarat.messages.catalog import BROKER_MAX_PACKET
from baccarat.pit.server import PitServer
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto, MosquittoFactory
from support.mqtt5 import Mqtt5

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mosquitto"
CONTROLLER, OTHER_CONTROLLER = "baccarat-T07", "baccarat-T08"  # tables T07 and T08
CONTROLLER_ID = "baccarat-T07"  # the daemon's client id for T07: "baccarat-" + table
BOARD, OTHER_BOARD, PIT_SCREEN = "board-T07", "board-T08", "board-pit"
PIT, OTHER_PIT = "pit-ana", "pit-ben"
PIT_BOARDS = ("board-pit-1", "board-pit-2", "board-pit-3")  # baccarat pit --board-accounts 3
SURVEILLANCE = "surveillance-eve"
USERS = {
    name: f"{name}-secret"
    for name in (CONTROLLER, OTHER_CONTROLLER, BOARD, OTHER_BOARD, PIT_SCREEN, *PIT_BOARDS, PIT,
                 OTHER_PIT, SURVEILLANCE)
}
LISTENERS: tuple[dict[str, bool], ...] = ({}, {"tls": True}, {"websockets": True})
MAX_PACKET = BROKER_MAX_PACKET  # max_packet_size in the example's mosquitto.conf
SUCCESS, NO_SUBSCRIBERS = 0x00, 0x10  # MQTT 5 reason codes: accepted
NOT_AUTHORIZED, PACKET_TOO_LARGE = 0x87, 0x95  # MQTT 5 reason codes: refused
WAIT = 5.0  # seconds for a message that should come
TAKEOVERS = 5  # connections with the controller's client id, per intruder and listener
SETTLE = 1.0  # seconds for a knocked-off controller to show it (offline, reconnected)
SUBSTITUTIONS = {
    "password_file /etc/mosquitto/passwd": "password_file {password_file}",
    "acl_file /etc/mosquitto/acl": "acl_file {acl_file}",
    "/etc/mosquitto/certs/ca.crt": "{ca_file}",
    "/etc/mosquitto/certs/server.crt": "{cert_file}",
    "/etc/mosquitto/certs/server.key": "{key_file}",
    "listener 1883 127.0.0.1\n": "listener {port} 127.0.0.1\n",
    "listener 8883\n": "listener {tls_port} 127.0.0.1\n",
    "listener 9001\n": "listener {websockets_port} 127.0.0.1\n",
}


def example_config() -> str:
    """Debian's main settings, then the example as conf.d would include it."""
    text = (EXAMPLES / "mosquitto.conf").read_text()
    for old, new in SUBSTITUTIONS.items():
        assert text.count(old) == 1, f"examples/mosquitto/mosquitto.conf: expected {old!r}"
        text = text.replace(old, new)
    debian = ["persistence_location {folder}/", "log_dest stderr"]
    if os.geteuid() == 0:
        debian.append("user root")  # our files are root's; Debian's broker runs as mosquitto
    return "\n".join([*debian, text])


@pytest.fixture
def floor(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    """A mosquitto with the example's configuration, ACL and accounts."""
    return mosquitto_factory(
        users=USERS, acl=EXAMPLES / "acl", tls=True, websockets=True, config=example_config()
    )


def login(broker: Mosquitto, user: str, **options: Any) -> aiomqtt.Client:
    """A client of the broker logged in as one of the accounts."""
    return broker.client(username=user, password=USERS.get(user, "x"), **options)


def controller_daemon(folder: Path, broker: Mosquitto) -> Daemon:
    """``baccarat run`` for table T07, logged in with the example's account for T07."""
    env = broker.env(username=CONTROLLER, password=USERS[CONTROLLER])
    return Daemon(folder, broker, table="T07", broker_env=env)


def controller_connections(broker: Mosquitto) -> int:
    """How many connections the broker logged with the T07 controller's client id.

    The daemon's look at the table's retained seqs at its start (seq_promise) is a
    connection of its own, closed before the publisher's; the broker's
    ``use_username_as_clientid`` gives it the controller's id too: it is not counted.
    """
    connected = rf"New client connected from \S+ as {CONTROLLER_ID} "
    return max(0, len(re.findall(connected, broker.log())) - START_LOOKS)


START_LOOKS = 1
"""Connections of a daemon's start before its publisher's (the retained seqs' look)."""


async def first_payload(client: aiomqtt.Client) -> bytes:
    """The payload of the next message the client receives."""
    async with asyncio.timeout(WAIT):
        message = await anext(client.messages)
    assert isinstance(message.payload, bytes)
    return message.payload


def mqtt5(broker: Mosquitto, user: str, **options: Any) -> Mqtt5:
    """A paho MQTT 5 client logged in as one of the accounts (not connected: use ``with``)."""
    return Mqtt5(broker, user, USERS.get(user, "x"), **options)


def test_the_tests_know_every_account_of_the_acl() -> None:
    text = (EXAMPLES / "acl").read_text()
    assert re.findall(r"^user (\S+)$", text, flags=re.MULTILINE) == list(USERS)
    assert not re.findall(r"^pattern ", text, flags=re.MULTILINE)


def test_the_readmes_loop_writes_the_acls_controller_sections() -> None:
    """README.md's shell loop for new tables gives sections like T07's and T08's here."""
    readme = (EXAMPLES / "README.md").read_text()
    loop = re.search(r"\n(for t in .*?\ndone) \| sudo tee -a /etc/mosquitto/acl\n", readme, re.S)
    assert loop is not None, "examples/mosquitto/README.md: the loop for new tables"
    script = re.sub(r"^for t in [^;]*;", "for t in T07 T08;", loop.group(1))
    made = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    acl = (EXAMPLES / "acl").read_text()
    sections = re.findall(r"^user baccarat-.*?\n\n", acl, flags=re.MULTILINE | re.DOTALL)
    assert made == "".join(sections)


async def test_every_listener_of_the_example_works(floor: Mosquitto) -> None:
    for options in LISTENERS:
        async with login(floor, PIT, **options) as pit:
            await pit.subscribe("baccarat/#", qos=1)
            await pit.publish(f"baccarat/T07/cmd/open/{PIT}", b"{}", qos=1)
            assert await first_payload(pit) == b"{}"


async def test_no_anonymous_clients_and_no_wrong_passwords(floor: Mosquitto) -> None:
    with pytest.raises(aiomqtt.MqttError):
        async with floor.client():
            pass
    with pytest.raises(aiomqtt.MqttError):
        async with floor.client(username=PIT, password=USERS[BOARD]):
            pass


async def test_the_controller_publishes_and_its_readers_read(floor: Mosquitto) -> None:
    async with (
        login(floor, CONTROLLER) as controller,
        login(floor, BOARD) as board,
        login(floor, OTHER_BOARD) as other_board,
        login(floor, PIT) as pit,
    ):
        for reader in (board, other_board, pit):
            await reader.subscribe("baccarat/#", qos=1)
        for topic in ("status", "card", "result", "alarm", "reply", "reply/console-3/17"):
            await controller.publish(f"baccarat/T07/{topic}", topic.encode(), qos=1)
            assert await first_payload(board) == topic.encode()
            assert await first_payload(pit) == topic.encode()
        # T08's board reads T08 only: the first thing it gets is T08's.
        async with login(floor, OTHER_CONTROLLER) as other_controller:
            await other_controller.publish("baccarat/T08/status", b"T08", qos=1)
        assert await first_payload(other_board) == b"T08"


async def test_only_surveillance_reads_the_live_edge(floor: Mosquitto) -> None:
    """Issue 33: boards, the pit's screen and the operators never get it; surveillance does."""
    async with (
        login(floor, CONTROLLER) as controller,
        login(floor, BOARD) as board,
        login(floor, PIT_SCREEN) as screen,
        login(floor, PIT) as pit,
        login(floor, SURVEILLANCE) as surveillance,
    ):
        for reader in (board, screen, pit, surveillance):
            await reader.subscribe("baccarat/#", qos=1)
        await controller.publish("baccarat/T07/edge", b"tie favours the bettor", qos=1)
        assert await first_payload(surveillance) == b"tie favours the bettor"
        await controller.publish("baccarat/T07/card", b"a card", qos=1)
        for reader in (board, screen, pit):  # the edge never came before it
            assert await first_payload(reader) == b"a card"
        assert await first_payload(surveillance) == b"a card"


async def test_the_broker_logs_who_subscribed_to_the_edge_and_when(floor: Mosquitto) -> None:
    async with login(floor, SURVEILLANCE, identifier=SURVEILLANCE) as surveillance:
        await surveillance.subscribe("baccarat/T07/edge", qos=1)
        await asyncio.sleep(0.5)
    log = floor.log()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
    who = rf"as {SURVEILLANCE} .*u'{SURVEILLANCE}'"
    assert re.search(rf"{stamp}: New client connected from \S+ {who}", log), log
    assert re.search(rf"{stamp}: {SURVEILLANCE} 1 baccarat/T07/edge", log), log


async def test_only_the_pit_sends_commands(floor: Mosquitto) -> None:
    async with (
        login(floor, CONTROLLER) as controller,
        login(floor, BOARD) as board,
        login(floor, PIT) as pit,
    ):
        await controller.subscribe("baccarat/T07/cmd/#", qos=1)
        await pit.subscribe("baccarat/#", qos=1)
        # Refused publishes are acknowledged and dropped: the pit's marker arrives first.
        await board.publish(f"baccarat/T07/cmd/void/{BOARD}", b"from the board", qos=1)
        await controller.publish(
            f"baccarat/T07/cmd/void/{CONTROLLER}", b"from the controller", qos=1
        )
        await pit.publish(f"baccarat/T07/cmd/void/{PIT}", b"from the pit", qos=1)
        assert await first_payload(pit) == b"from the pit"
        assert await first_payload(controller) == b"from the pit"


async def test_an_operator_sends_commands_in_its_own_name_only(floor: Mosquitto) -> None:
    """The last level of a command's topic is the operator: the broker refuses a forgery."""
    async with login(floor, CONTROLLER) as controller:
        await controller.subscribe("baccarat/T07/cmd/#", qos=1)
        with mqtt5(floor, PIT) as pit:
            for forged in (
                f"baccarat/T07/cmd/void/{OTHER_PIT}",  # another operator's name
                "baccarat/T07/cmd/void",  # no name at all
                f"baccarat/T07/cmd/void/{PIT}/{OTHER_PIT}",  # a level more
                f"baccarat/T07/cmd/{PIT}",
            ):
                assert pit.publish(forged, b"forged") == NOT_AUTHORIZED, forged
            assert pit.publish(f"baccarat/T07/cmd/void/{PIT}", b"mine") == SUCCESS
        assert await first_payload(controller) == b"mine"  # and no forgery before it
        with mqtt5(floor, OTHER_PIT) as other:  # the same rule for every operator
            assert other.publish(f"baccarat/T08/cmd/open/{PIT}", b"forged") == NOT_AUTHORIZED
            assert other.publish(f"baccarat/T08/cmd/open/{OTHER_PIT}", b"{}") == NO_SUBSCRIBERS


TABLE_TOPICS = (
    *sorted(TOPIC_TYPES), "reply", f"reply/{PIT}", "cmd/void", f"cmd/void/{OTHER_PIT}",
    f"cmd/void/{PIT}/x", "card/extra", "widgets",
)
"""Every topic of a table (boards/accept.py's table, and more) an operator may not write
but ``limits``; its own commands, ``cmd/{command}/{its name}``, are the only others."""


def operator_may_write(topic: str) -> bool:
    own_command = re.fullmatch(rf"baccarat/[^/]+/cmd/[^/]+/{PIT}", topic)
    return topic.endswith("/limits") or own_command is not None


async def test_an_operator_writes_on_a_table_only_the_limits_and_its_own_commands(
    floor: Mosquitto,
) -> None:
    with mqtt5(floor, PIT) as pit:
        for kind in (*TABLE_TOPICS, f"cmd/void/{PIT}"):
            topic = f"baccarat/T07/{kind}"
            code = pit.publish(topic, b'{"type": "alarms", "seq": 900}', retain=True)
            wanted = (SUCCESS, NO_SUBSCRIBERS) if operator_may_write(topic) else (NOT_AUTHORIZED,)
            assert code in wanted, (topic, code)


async def test_operators_set_the_limits_and_nobody_else(floor: Mosquitto) -> None:
    async with login(floor, OTHER_PIT) as watcher:  # one connection per account: not those below
        await watcher.subscribe("baccarat/T07/limits", qos=1)
        for user in (BOARD, PIT_SCREEN, OTHER_CONTROLLER):
            with mqtt5(floor, user) as refused:
                code = refused.publish("baccarat/T07/limits", user.encode(), retain=True)
                assert code == NOT_AUTHORIZED, user
        with mqtt5(floor, PIT) as pit:
            assert pit.publish("baccarat/T07/limits", b"by the pit", retain=True) == SUCCESS
        assert await first_payload(watcher) == b"by the pit"


async def test_the_pit_screen_reads_every_table_and_writes_nothing(floor: Mosquitto) -> None:
    async with login(floor, PIT) as watcher:
        await watcher.subscribe("baccarat/#", qos=1)
        with mqtt5(floor, PIT_SCREEN) as writer:
            for topic in ("baccarat/T07/result", f"baccarat/T07/cmd/void/{PIT_SCREEN}"):
                assert writer.publish(topic, b"from the screen") == NOT_AUTHORIZED, topic
        async with login(floor, OTHER_CONTROLLER) as t08:
            await t08.publish("baccarat/T08/result", b"T08 result", qos=1)
        assert await first_payload(watcher) == b"T08 result"  # nothing of the screen's before
    async with login(floor, PIT_SCREEN) as screen:
        await screen.subscribe("baccarat/#", qos=1)
        async with login(floor, CONTROLLER) as t07:
            await t07.publish("baccarat/T07/result", b"T07 result", qos=1)
        assert await first_payload(screen) == b"T07 result"


async def test_boards_write_nothing_and_the_controller_nothing_deeper(floor: Mosquitto) -> None:
    async with (
        login(floor, CONTROLLER) as controller,
        login(floor, BOARD) as board,
        login(floor, PIT) as pit,
    ):
        await pit.subscribe("baccarat/#", qos=1)
        await board.publish("baccarat/T07/result", b"fake result", qos=1)
        await board.publish("baccarat/T07/status", b"offline", qos=1, retain=True)
        await controller.publish("baccarat/T07/card/extra", b"deeper", qos=1)
        await controller.publish("other/T07/result", b"elsewhere", qos=1)
        await controller.publish("baccarat/T07/result", b"real result", qos=1)
        assert await first_payload(pit) == b"real result"


async def test_a_board_is_told_it_may_not_write(floor: Mosquitto) -> None:
    async with login(floor, PIT) as pit:
        await pit.subscribe("baccarat/#", qos=1)
        with mqtt5(floor, BOARD) as board:
            for topic in ("baccarat/T07/result", "baccarat/T07/status", "baccarat/T07/cmd/void"):
                code = board.publish(topic, b"from the board", retain=True)
                assert code == NOT_AUTHORIZED, topic
        async with login(floor, CONTROLLER) as controller:
            await controller.publish("baccarat/T07/result", b"marker", qos=1)
        assert await first_payload(pit) == b"marker"


async def test_a_controller_cannot_write_another_tables_topics(floor: Mosquitto) -> None:
    async with login(floor, PIT) as pit:
        await pit.subscribe("baccarat/#", qos=1)
        with mqtt5(floor, CONTROLLER) as controller:
            for topic in ("status", "result", "card", "alarm", "roads", "reply/console-3/1"):
                code = controller.publish(f"baccarat/T08/{topic}", b"not my table", retain=True)
                assert code == NOT_AUTHORIZED, topic
            assert controller.publish("baccarat/T07/result", b"my table") == SUCCESS
        assert await first_payload(pit) == b"my table"  # and nothing of T08 before it


async def test_a_controller_reads_only_its_own_tables_commands(floor: Mosquitto) -> None:
    async with login(floor, CONTROLLER) as t07, login(floor, PIT) as pit:
        await t07.subscribe("baccarat/+/cmd/#", qos=1)
        await pit.publish(f"baccarat/T08/cmd/void/{PIT}", b"for T08", qos=1)
        await pit.publish(f"baccarat/T07/cmd/void/{PIT}", b"for T07", qos=1)
        assert await first_payload(t07) == b"for T07"


async def test_an_oversized_message_is_refused(floor: Mosquitto) -> None:
    roads_sized = b"r" * 128 * 1024  # the roads' limit: twice a 12-deck shoe's roads
    just_fits = b"f" * (MAX_PACKET - 1024)  # the topic and headers take the rest
    async with login(floor, CONTROLLER) as controller, login(floor, BOARD) as board:
        await controller.subscribe("baccarat/T07/cmd/#", qos=1)
        await board.subscribe("baccarat/T07/#", qos=1)
        await controller.publish("baccarat/T07/roads", roads_sized, qos=1, retain=True)
        assert await first_payload(board) == roads_sized
        with mqtt5(floor, PIT) as pit:
            assert pit.publish(f"baccarat/T07/cmd/void/{PIT}", b"x" * MAX_PACKET) is None
            assert pit.disconnect_reason is not None
            assert pit.disconnect_reason.value == PACKET_TOO_LARGE, pit.disconnect_reason
        with mqtt5(floor, PIT) as pit:
            assert pit.publish(f"baccarat/T07/cmd/void/{PIT}", just_fits) == SUCCESS
        assert await first_payload(controller) == just_fits  # the oversized one never came


def replies(recorder: Recorder, request_id: str) -> list[dict[str, Any]]:
    """The replies to the request ``request_id`` the recorder received."""
    return [body for body in recorder.bodies("reply") if body.get("id") == request_id]


async def test_the_daemon_publishes_with_the_examples_account(
    floor: Mosquitto, tmp_path: Path
) -> None:
    daemon = controller_daemon(tmp_path, floor)
    try:
        async with Recorder(floor, table="T07", username=BOARD, password=USERS[BOARD]) as board:
            await asyncio.to_thread(daemon.start)
            async with login(floor, PIT) as pit:
                await pit.publish(f"baccarat/T07/cmd/shoe/{PIT}", b'{"id": "first"}', qos=1)
                await board.wait_for(lambda r: len(replies(r, "first")) == 1, WAIT * 2)
    finally:
        daemon.close()
    assert replies(board, "first")[0]["ok"] is True
    kinds = {topic.removeprefix("baccarat/T07/") for topic, _ in board.received}
    assert {"status", "shoe", "reply"} <= kinds
    assert controller_connections(floor) == 1  # as baccarat-T07, its account and client id


async def test_nobody_takes_the_controllers_session(
    floor: Mosquitto, tmp_path: Path
) -> None:
    intruders = (BOARD, OTHER_BOARD, PIT, OTHER_CONTROLLER)
    daemon = controller_daemon(tmp_path, floor)
    try:
        async with Recorder(
            floor, table="T07", username=OTHER_PIT, password=USERS[OTHER_PIT]
        ) as watcher:
            await asyncio.to_thread(daemon.start)
            for options in LISTENERS:
                for user in intruders:
                    for _ in range(TAKEOVERS):
                        async with login(floor, user, identifier=CONTROLLER_ID, **options):
                            await asyncio.sleep(0.02)
                with pytest.raises(aiomqtt.MqttError):  # the account, with a wrong password
                    async with floor.client(
                        username=CONTROLLER, password="guess", identifier=CONTROLLER_ID, **options
                    ):
                        pass
            await asyncio.sleep(SETTLE)
            assert controller_connections(floor) == 1, floor.log()  # no reconnection
            assert "offline" not in [body["state"] for body in watcher.bodies("status")]
            async with login(floor, PIT) as pit:  # the controller still answers
                await pit.publish(f"baccarat/T07/cmd/shoe/{PIT}", b'{"id": "still"}', qos=1)
                await watcher.wait_for(lambda r: len(replies(r, "still")) == 1, WAIT * 2)
    finally:
        daemon.close()
    log = floor.log()
    assert "already connected, closing old connection" not in log
    for user in intruders:  # each intruder got its own account's client id
        assert f" as {user} " in log


async def http_body(port: int, path: str) -> bytes:
    """The body of a GET on the local web server."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer.partition(b"\r\n\r\n")[2]


async def test_three_live_boards_from_the_console_each_keep_their_connection(
    floor: Mosquitto,
) -> None:
    """Issue 32: two boards of the board-pit account evicted each other (13 times in 25 s).

    The console hands each board it opens the next of its accounts (--board-accounts 3:
    /board/config.json names board-pit-1, -2, -3 in turn); three boards connected at once
    over the WebSocket listener, as the page does, each asking for the same client id,
    keep their connections and all get a table's message. board-pit twice, as before,
    does not.
    """
    console = page_config(floor.host, floor.websockets_port, None, "baccarat")
    board = page_config(floor.host, floor.websockets_port, None, "baccarat",
                        username=PIT_SCREEN, password="screen-pass")
    async with PitServer(console, board, board_accounts=len(PIT_BOARDS)) as server:
        configs = [json.loads(await http_body(server.port, "/board/config.json"))
                   for _ in range(len(PIT_BOARDS) + 1)]
    names = [c["username"] for c in configs]
    assert names == [*PIT_BOARDS, PIT_BOARDS[0]]  # in turn
    async with contextlib.AsyncExitStack() as stack:
        boards = [await stack.enter_async_context(
            login(floor, name, websockets=True, identifier="baccarat-board-same"))
            for name in PIT_BOARDS]
        for client in boards:
            await client.subscribe("baccarat/T07/result", qos=1)
        await asyncio.sleep(SETTLE)
        async with login(floor, CONTROLLER) as controller:
            await controller.publish("baccarat/T07/result", b"{}", qos=1)
        for client in boards:
            assert await first_payload(client) == b"{}"  # none was knocked off
    assert "already connected" not in floor.log()
    async with login(floor, PIT_SCREEN, websockets=True) as first:
        await first.subscribe("baccarat/T07/result", qos=1)
        async with login(floor, PIT_SCREEN, websockets=True):
            await asyncio.sleep(SETTLE)
    assert "already connected" in floor.log()  # the shared account: the first was evicted
