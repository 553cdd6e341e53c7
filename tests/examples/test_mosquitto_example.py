"""examples/mosquitto: a real mosquitto runs the example configuration and ACL.

Only ports and file paths are changed, the way Debian would load the file: its own
mosquitto.conf (persistence_location, log_dest) and then the example from conf.d.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import aiomqtt
import pytest

from support.mosquitto import Mosquitto, MosquittoFactory

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mosquitto"
USERS = {"controller": "c-secret", "board": "b-secret", "pit": "p-secret"}
WAIT = 5.0  # seconds for a message that should come
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


def per_table_acl() -> str:
    """The ACL's documented variant: the pattern lines instead of the controller account."""
    text = (EXAMPLES / "acl").read_text()
    text, found = re.subn(r"^user controller\n(topic .*\n)+", "", text, flags=re.MULTILINE)
    assert found == 1
    text, found = re.subn(r"^#(pattern .*)$", r"\1", text, flags=re.MULTILINE)
    assert found == 3
    return text


@pytest.fixture
def floor(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    """A mosquitto with the example's configuration, ACL and three accounts."""
    return mosquitto_factory(
        users=USERS, acl=EXAMPLES / "acl", tls=True, websockets=True, config=example_config()
    )


def login(broker: Mosquitto, user: str, **options: object) -> aiomqtt.Client:
    """A client of the broker logged in as one of the accounts."""
    return broker.client(username=user, password=USERS.get(user, "x"), **options)  # type: ignore[arg-type]


async def first_payload(client: aiomqtt.Client) -> bytes:
    """The payload of the next message the client receives."""
    async with asyncio.timeout(WAIT):
        message = await anext(client.messages)
    assert isinstance(message.payload, bytes)
    return message.payload


async def test_every_listener_of_the_example_works(floor: Mosquitto) -> None:
    for options in ({}, {"tls": True}, {"websockets": True}):
        async with login(floor, "pit", **options) as pit:
            await pit.subscribe("baccarat/#", qos=1)
            await pit.publish("baccarat/T07/cmd/open", b"{}", qos=1)
            assert await first_payload(pit) == b"{}"


async def test_no_anonymous_clients_and_no_wrong_passwords(floor: Mosquitto) -> None:
    with pytest.raises(aiomqtt.MqttError):
        async with floor.client():
            pass
    with pytest.raises(aiomqtt.MqttError):
        async with floor.client(username="pit", password="b-secret"):
            pass


async def test_the_controller_publishes_and_everyone_reads(floor: Mosquitto) -> None:
    async with (
        login(floor, "controller") as controller,
        login(floor, "board") as board,
        login(floor, "pit") as pit,
    ):
        await board.subscribe("baccarat/#", qos=1)
        await pit.subscribe("baccarat/#", qos=1)
        for topic in ("status", "card", "result", "alarm", "reply", "reply/console-3/17"):
            await controller.publish(f"baccarat/T07/{topic}", topic.encode(), qos=1)
            assert await first_payload(board) == topic.encode()
            assert await first_payload(pit) == topic.encode()


async def test_only_the_pit_sends_commands(floor: Mosquitto) -> None:
    async with (
        login(floor, "controller") as controller,
        login(floor, "board") as board,
        login(floor, "pit") as pit,
    ):
        await controller.subscribe("baccarat/T07/cmd/+", qos=1)
        await pit.subscribe("baccarat/#", qos=1)
        # Refused publishes are acknowledged and dropped: the pit's marker arrives first.
        await board.publish("baccarat/T07/cmd/void", b"from the board", qos=1)
        await controller.publish("baccarat/T07/cmd/void", b"from the controller", qos=1)
        await pit.publish("baccarat/T07/cmd/void", b"from the pit", qos=1)
        assert await first_payload(pit) == b"from the pit"
        assert await first_payload(controller) == b"from the pit"


async def test_boards_write_nothing_and_the_controller_nothing_deeper(floor: Mosquitto) -> None:
    async with (
        login(floor, "controller") as controller,
        login(floor, "board") as board,
        login(floor, "pit") as pit,
    ):
        await pit.subscribe("baccarat/#", qos=1)
        await board.publish("baccarat/T07/result", b"fake result", qos=1)
        await board.publish("baccarat/T07/status", b"offline", qos=1, retain=True)
        await controller.publish("baccarat/T07/card/extra", b"deeper", qos=1)
        await controller.publish("other/T07/result", b"elsewhere", qos=1)
        await controller.publish("baccarat/T07/result", b"real result", qos=1)
        assert await first_payload(pit) == b"real result"


async def test_the_per_table_variant(mosquitto_factory: MosquittoFactory) -> None:
    users = {"T07": "t7", "T08": "t8", "pit": "p-secret"}
    broker = mosquitto_factory(anonymous=False, users=users, acl=per_table_acl())
    async with (
        broker.client(username="T07", password="t7") as t07,
        broker.client(username="pit", password="p-secret") as pit,
    ):
        await t07.subscribe("baccarat/+/cmd/+", qos=1)
        await pit.subscribe("baccarat/+/result", qos=1)
        await t07.publish("baccarat/T08/result", b"not my table", qos=1)
        await t07.publish("baccarat/T07/result", b"my table", qos=1)
        assert await first_payload(pit) == b"my table"
        await pit.publish("baccarat/T08/cmd/void", b"for T08", qos=1)
        await pit.publish("baccarat/T07/cmd/void", b"for T07", qos=1)
        assert await first_payload(t07) == b"for T07"
