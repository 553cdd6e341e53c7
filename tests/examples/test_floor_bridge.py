"""examples/mosquitto: a table's broker bridged to the floor broker, as the examples say.

Two real mosquittos: the table's, with the example's mosquitto.conf, acl and bridge.conf,
and the floor's, with floor.conf and floor-acl (ports, file paths and passwords changed,
nothing else). The real daemon publishes on the table's broker; its board reads there;
the pit and the recorder read on the floor broker, across the bridge (TLS, MQTT 5, QoS 1).
The uplink is cut by freezing the floor broker (SIGSTOP): to the bridge it is a link that
went silent, as with a pulled cable, and the bridge notices only by its keepalive.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from baccarat.boards.accept import TOPIC_TYPES
from baccarat.boards.feed import receive
from baccarat.boards.state import BoardState
from baccarat.floor.store import open_store
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from boards.forged_bodies import AUDIT_SHOE, audit_alarms, limits_body
from support.daemon import Daemon
from support.mosquitto import Mosquitto, MosquittoFactory, _die_with_parent
from support.mqtt5 import NO_SUBSCRIBERS, NOT_AUTHORIZED, SUCCESS, Mqtt5

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mosquitto"
TABLE = "T07"
TABLE_USERS = {
    "baccarat-T07": "controller-secret", "board-T07": "board-secret",
    "pit-ben": "table-pit-secret",
}
FLOOR_USERS = {
    "bridge-T07": "bridge-secret", "bridge-T08": "bridge-8-secret",
    "baccarat-recorder": "recorder-secret", "board-pit": "screen-secret",
    "pit-ana": "pit-secret", "pit-ben": "other-pit-secret",
}
BRIDGE_STATE = "$SYS/broker/connection/bridge-T07/state"
DECKS = 4
"""A shoe of four decks: about 200 cards, some 50 s at PACE; the cut is in its middle."""
PACE = 0.2
"""Seconds between cards: 5 cards a second, ten times a real table's pace."""
OUTAGE = float(os.environ.get("BACCARAT_TEST_UPLINK_OUTAGE", "30"))
"""Seconds the uplink is cut."""
CUT_AFTER = 5.0
"""Seconds of dealing before the cut."""
BOARD_GAP = 1.0
"""The longest the board may wait for the next card while the shoe deals (PACE apart)."""
WAIT = 10.0
CATCH_UP = 30.0
"""Seconds the floor may take to get the backlog once the uplink is back."""
RETAINED_TOPICS = {"shoe", "round", "roads", "alarm", "limits", "recall"}
"""The table's topics published retained (besides status, which has no seq)."""

TABLE_SUBSTITUTIONS = {
    "password_file /etc/mosquitto/passwd": "password_file {password_file}",
    "acl_file /etc/mosquitto/acl": "acl_file {acl_file}",
    "/etc/mosquitto/certs/ca.crt": "{ca_file}",
    "/etc/mosquitto/certs/server.crt": "{cert_file}",
    "/etc/mosquitto/certs/server.key": "{key_file}",
    "listener 1883 127.0.0.1\n": "listener {port} 127.0.0.1\n",
    "listener 8883\n": "listener {tls_port} 127.0.0.1\n",
    "listener 9001\n": "listener {websockets_port} 127.0.0.1\n",
}
FLOOR_SUBSTITUTIONS = TABLE_SUBSTITUTIONS


def substituted(name: str, substitutions: dict[str, str]) -> str:
    """An example file with each of ``substitutions`` made (each must occur once)."""
    text = (EXAMPLES / name).read_text()
    for old, new in substitutions.items():
        assert text.count(old) == 1, f"examples/mosquitto/{name}: expected {old!r} once"
        text = text.replace(old, new)
    return text


def debian_preamble() -> list[str]:
    """What Debian's own mosquitto.conf sets before it includes conf.d."""
    lines = ["persistence_location {folder}/", "log_dest stderr"]
    if os.geteuid() == 0:
        lines.append("user root")  # our files are root's; Debian's broker runs as mosquitto
    return lines


def floor_config() -> str:
    """The floor broker: Debian's main file, then floor.conf."""
    return "\n".join([*debian_preamble(), substituted("floor.conf", FLOOR_SUBSTITUTIONS)])


def table_config(floor: Mosquitto) -> str:
    """The table's broker: Debian's main file, then mosquitto.conf and bridge.conf.

    The bridge points at ``floor``'s TLS listener and trusts its CA; braces are doubled
    where the text is a template for the table's own broker.
    """
    bridge = substituted("bridge.conf", {
        "address floor-broker.example:8883": f"address 127.0.0.1:{floor.tls_port}",
        "/etc/mosquitto/certs/floor-ca.crt": str(floor.ca_file),
        "remote_password the-bridge-password": f"remote_password {FLOOR_USERS['bridge-T07']}",
    })
    table = substituted("mosquitto.conf", TABLE_SUBSTITUTIONS)
    return "\n".join([*debian_preamble(), table, bridge.replace("{", "{{").replace("}", "}}")])


class Listener:
    """A subscriber that keeps every message with the time it arrived."""

    def __init__(
        self, broker: Mosquitto, user: str, password: str, topics: tuple[str, ...]
    ) -> None:
        self.broker, self.user, self.password, self.topics = broker, user, password, topics
        self.received: list[tuple[float, str, bytes]] = []
        self.connects = 0
        self._changed = asyncio.Event()
        self._subscribed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Listener:
        self._task = asyncio.create_task(self._run())
        async with asyncio.timeout(WAIT):
            await self._subscribed.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        while True:
            try:
                async with self.broker.client(
                    username=self.user, password=self.password, clean_session=False,
                    identifier=self.user, keepalive=120,
                ) as client:
                    for topic in self.topics:
                        await client.subscribe(topic, qos=1)
                    self.connects += 1
                    self._subscribed.set()
                    async for message in client.messages:
                        assert isinstance(message.payload, bytes)
                        self.received.append(
                            (time.time(), str(message.topic), message.payload)
                        )
                        self._changed.set()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.2)

    def bodies(self) -> list[tuple[float, dict[str, Any]]]:
        """The JSON bodies of the table's messages (not the bridge's state), with times."""
        return [
            (at, json.loads(payload)) for at, topic, payload in self.received
            if topic.startswith("baccarat/") and payload
        ]

    def seqs(self) -> list[int]:
        """The ``seq`` of every engine message, in arrival order, duplicates included."""
        return [body["seq"] for _, body in self.bodies() if isinstance(body.get("seq"), int)]

    def payloads(self, topic: str) -> list[bytes]:
        return [payload for _, t, payload in self.received if t == topic]

    async def wait_for(self, condition: Callable[[], bool], within: float) -> None:
        async with asyncio.timeout(within):
            while not condition():
                self._changed.clear()
                await self._changed.wait()


@pytest.fixture
def floor(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    """The floor broker, as floor.conf and floor-acl configure it."""
    return mosquitto_factory(
        users=FLOOR_USERS, acl=EXAMPLES / "floor-acl", tls=True, websockets=True,
        config=floor_config(),
    )


@pytest.fixture
def table_broker(mosquitto_factory: MosquittoFactory, floor: Mosquitto) -> Mosquitto:
    """The table's broker, as mosquitto.conf, acl and bridge.conf configure it."""
    return mosquitto_factory(
        users=TABLE_USERS, acl=EXAMPLES / "acl", tls=True, websockets=True,
        config=table_config(floor),
    )


def controller(folder: Path, broker: Mosquitto, device: str | None = None) -> Daemon:
    """``baccarat run`` for T07 on the table's broker, with the example's account."""
    env = broker.env(username="baccarat-T07", password=TABLE_USERS["baccarat-T07"])
    return Daemon(folder, broker, table=TABLE, device=device, broker_env=env,
                  rules={"decks": DECKS})


def pit(floor: Mosquitto) -> Listener:
    return Listener(floor, "pit-ana", FLOOR_USERS["pit-ana"],
                    ("baccarat/#", "$SYS/broker/connection/+/state"))


def start_recorder(folder: Path, floor: Mosquitto) -> subprocess.Popen[bytes]:
    """``baccarat record`` on the floor broker, with floor-acl's recorder account."""
    password = folder / "recorder-password"
    password.write_text(FLOOR_USERS["baccarat-recorder"] + "\n")
    return subprocess.Popen(
        [sys.executable, "-m", "baccarat.cli", "record", "--broker",
         f"127.0.0.1:{floor.port}", "--db", str(folder / "floor.db"),
         "--username", "baccarat-recorder", "--password-file", str(password),
         "--client-id", "baccarat-recorder"],
        stdout=(folder / "recorder.log").open("wb"), stderr=subprocess.STDOUT,
        preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
    )


async def recorder_subscribed(folder: Path, recorder: subprocess.Popen[bytes]) -> None:
    """Until the recorder says it has subscribed (it records what is published after).

    A message the table publishes before that is not queued for the recorder's session:
    only the retained topics' newest would reach it (seen once under load: seq 3 missing).
    """
    log = folder / "recorder.log"
    for _ in range(600):
        if "recording baccarat/+/#" in log.read_text(errors="replace"):
            return
        assert recorder.poll() is None, log.read_text(errors="replace")
        await asyncio.sleep(0.1)
    raise AssertionError(f"the recorder never subscribed: {log.read_text(errors='replace')}")


def stored_seqs(folder: Path) -> list[int]:
    """The seqs of T07's messages in the recorder's database, in seq order.

    Its facts, and the places of the derived views it keeps without their body.
    """
    store = open_store(str(folder / "floor.db"))
    try:
        return [seq for _, seq in store.seqs(TABLE)]
    finally:
        store.close()


def bridge_connections(table_broker: Mosquitto) -> int:
    """How many times the table's broker logged connecting its bridge to the floor."""
    return len(re.findall(r"Connecting bridge \(step 1\) floor ", table_broker.log()))


async def test_the_bridge_carries_the_tables_messages_and_the_pits_commands(
    floor: Mosquitto, table_broker: Mosquitto, tmp_path: Path
) -> None:
    """Status (retained) out, a command in, its MQTT 5 reply out; the uplink's state."""
    daemon = controller(tmp_path, table_broker)
    await asyncio.to_thread(daemon.start)
    try:
        async with pit(floor) as console:
            status = f"baccarat/{TABLE}/status"
            await console.wait_for(lambda: bool(console.payloads(status)), WAIT)
            assert json.loads(console.payloads(status)[-1])["state"] == "online"
            await console.wait_for(lambda: bool(console.payloads(BRIDGE_STATE)), WAIT)
            assert console.payloads(BRIDGE_STATE)[-1] == b"1"

            reply_topic = f"baccarat/{TABLE}/reply/pit-ana"
            properties = Properties(PacketTypes.PUBLISH)
            properties.ResponseTopic = reply_topic
            # Another operator's account: one account is one connection (use_username_as_
            # clientid), a second pit-ana would take the console's session.
            async with floor.client(username="pit-ben", password=FLOOR_USERS["pit-ben"],
                                    protocol=aiomqtt.ProtocolVersion.V5) as sender:
                await sender.publish(f"baccarat/{TABLE}/cmd/end/pit-ben", b'{"id": "q1"}',
                                     qos=1, properties=properties)
            # The reply, on the response topic or (a controller on MQTT 3.1.1 sees none)
            # on baccarat/T07/reply.
            await console.wait_for(lambda: bool(replies(console)), WAIT)
            assert replies(console)[0]["id"] == "q1"
    finally:
        daemon.stop()


def disorder(seqs: list[int]) -> str:
    """Where ``seqs`` first go backwards, with what came around it."""
    for i, (a, b) in enumerate(itertools.pairwise(seqs)):
        if b < a:
            return f"seq {b} came after {a}: ...{seqs[max(0, i - 5):i + 25]}..."
    return "in order"


def backlog_through(arrivals: list[tuple[float, int]]) -> float:
    """The last time the floor lacked a seq older than the newest it had (0.0: never)."""
    have: set[int] = set()
    last_gap = 0.0
    for at, seq in arrivals:
        have.add(seq)
        if len(have) != max(have) - min(have) + 1:
            last_gap = at
    return last_gap


def overtakers(listener: Listener) -> list[str]:
    """The topics of messages that came while an older one (by seq) had not yet come.

    A repeat of a message already received (QoS 1 is at least once) overtakes nothing.
    """
    have: set[int] = set()
    expected: int | None = None  # the oldest seq not yet received
    out = []
    for _, topic, payload in listener.received:
        body = json.loads(payload) if topic.startswith("baccarat/") and payload else {}
        seq = body.get("seq")
        if not isinstance(seq, int):
            continue
        if expected is not None and seq > expected and seq not in have:
            out.append(f"{topic.rsplit('/', 1)[-1]} {seq}")
        have.add(seq)
        expected = seq if expected is None else expected
        while expected in have:
            expected += 1
    return out


def replies(listener: Listener) -> list[dict[str, Any]]:
    return [body for _, body in listener.bodies() if body.get("type") == "reply"]


async def deal(shoe: VirtualShoe, dealt: list[float]) -> None:
    """One shoe at PACE, noting when each card left the shoe."""
    for event in Dealer(decks=DECKS, seed=7).events():
        shoe.send(event)
        if type(event).__name__ == "CardDrawn":
            dealt.append(time.time())
            await asyncio.sleep(PACE)
    await shoe.drain()


def longest_wait(times: list[float], start: float, end: float) -> float:
    """The longest time between consecutive ``times`` within [start, end]."""
    inside = [t for t in times if start <= t <= end]
    return max((b - a for a, b in itertools.pairwise(inside)), default=0.0)


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_the_board_never_stops_and_the_floor_gets_everything_through_a_cut_uplink(
    floor: Mosquitto, table_broker: Mosquitto, tmp_path: Path
) -> None:
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = controller(tmp_path, table_broker, device=shoe_path)
        recorder = start_recorder(tmp_path, floor)
        await recorder_subscribed(tmp_path, recorder)  # before the table's first message
        await asyncio.to_thread(daemon.start)
        try:
            board = Listener(table_broker, "board-T07", TABLE_USERS["board-T07"],
                             (f"baccarat/{TABLE}/#",))
            async with board, pit(floor) as console:
                await console.wait_for(lambda: bool(console.payloads(BRIDGE_STATE)), WAIT)
                connections = bridge_connections(table_broker)
                dealt: list[float] = []
                dealing = asyncio.create_task(deal(shoe, dealt))
                await asyncio.sleep(CUT_AFTER)
                os.kill(floor.pid, signal.SIGSTOP)
                cut = time.time()
                try:
                    await asyncio.sleep(OUTAGE)
                finally:
                    os.kill(floor.pid, signal.SIGCONT)
                restored = time.time()
                assert not dealing.done(), "the shoe ended before the uplink came back"
                await dealing
                await asyncio.sleep(2.0)  # the last round's result and roads
                last_seq = max(board.seqs())
                await console.wait_for(lambda: last_seq in console.seqs(), 120)
                await asyncio.sleep(1.0)  # any duplicates the bridge resends
                deadline = time.monotonic() + 60
                while stored_seqs(tmp_path)[-1:] != [last_seq]:
                    assert time.monotonic() < deadline, (tmp_path / "recorder.log").read_text()
                    await asyncio.sleep(0.5)
        finally:
            daemon.stop()
            recorder.terminate()
            recorder.wait(30)

    # The uplink really was cut: the bridge gave up on it and connected again.
    assert bridge_connections(table_broker) > connections, table_broker.log()
    assert console.payloads(BRIDGE_STATE)[-1] == b"1"

    # The floor: every message the board got, each body as the board got it; in order
    # before the cut and once the backlog is through. While it catches up (CATCH_UP at
    # most), mosquitto 2.0's bridge also sends the table's retained topics (its newest
    # shoe, round, roads...) ahead of and amid the backlog, which has the same messages
    # again in their place: consumers order by seq (the recorder does).
    floor_seqs = console.seqs()
    assert set(floor_seqs) >= set(board.seqs())
    board_bodies = {body["seq"]: body for _, body in board.bodies() if "seq" in body}
    for _, body in console.bodies():
        if "seq" in body and body["seq"] in board_bodies:
            assert body == board_bodies[body["seq"]]
    arrivals = [(at, body["seq"]) for at, body in console.bodies() if "seq" in body]
    before = [seq for at, seq in arrivals if at < cut]
    assert before == sorted(set(before)), disorder(before)
    through = backlog_through(arrivals)
    assert through - restored < CATCH_UP, f"the backlog took {through - restored:.1f} s"
    # (through is 0.0 when the floor never lacked an older seq: all of it came in order.)
    newest_by_then = max((seq for at, seq in arrivals if at <= through), default=-1)
    after = [seq for seq in dict.fromkeys(seq for at, seq in arrivals if at > through)
             if seq > newest_by_then]
    assert after == sorted(after), disorder(after)
    # What may come ahead of the backlog: the retained topics the bridge sends when it
    # subscribes again, and a message the table published after the uplink came back
    # (the board had it after SIGCONT), which the new subscription carries at once. A
    # message of the outage overtaking another one would be the bridge reordering its queue.
    live = {body["seq"] for at, body in board.bodies() if "seq" in body and at >= restored}
    early = [name for name in overtakers(console)
             if name.split()[0] not in RETAINED_TOPICS and int(name.split()[1]) not in live]
    assert not early, early

    # The table's board: every seq once, in order; every card within BOARD_GAP of the
    # input that made it (its ts), and no wait between cards beyond BOARD_GAP more than the
    # shoe itself took (on a loaded machine the test's own loop may stall), before, during
    # and after the cut.
    board_seqs = board.seqs()
    assert board_seqs == list(range(board_seqs[0], board_seqs[-1] + 1))
    cards = [(at, body) for at, body in board.bodies() if body.get("type") == "card"]
    card_times = [at for at, _ in cards]
    assert len([t for t in card_times if cut <= t <= restored]) > OUTAGE / PACE / 2
    latency = max(at - body["ts"] for at, body in cards)
    assert latency < BOARD_GAP, f"a card reached the board {latency:.2f} s after its input"
    shoe_wait = longest_wait(dealt, dealt[0], dealt[-1])
    board_wait = longest_wait(card_times, dealt[0], dealt[-1])
    assert board_wait < shoe_wait + BOARD_GAP, (board_wait, shoe_wait)

    # The recorder on the floor stored every message of the table once, in order.
    stored = stored_seqs(tmp_path)
    assert stored == list(range(stored[0], stored[-1] + 1))
    assert set(stored) >= set(board.seqs())

    # The floor saw the uplink go down (the bridge's last will) and come back.
    assert b"0" in console.payloads(BRIDGE_STATE), console.payloads(BRIDGE_STATE)


async def test_on_the_floor_a_tables_bridge_writes_only_that_tables_topics(
    floor: Mosquitto,
) -> None:
    """A table's computer taken over cannot pass for another table, nor the recorder write."""
    async with pit(floor) as console:
        async with floor.client(username="bridge-T07",
                                password=FLOOR_USERS["bridge-T07"]) as bridge:
            for topic in ("baccarat/T08/card", "baccarat/T08/status",
                          "$SYS/broker/connection/bridge-T08/state", "baccarat/T07/cmd/void"):
                await bridge.publish(topic, b'{"forged": true}', qos=1)
            await bridge.publish("baccarat/T07/card", b'{"seq": 1}', qos=1)
        async with floor.client(username="baccarat-recorder",
                                password=FLOOR_USERS["baccarat-recorder"]) as recorder:
            await recorder.publish("baccarat/T07/card", b'{"forged": true}', qos=1)
        await console.wait_for(lambda: bool(console.payloads("baccarat/T07/card")), WAIT)
        await asyncio.sleep(1.0)  # what was refused would have come by now
    topics = [topic for _, topic, _ in console.received]
    assert topics == ["baccarat/T07/card"], topics
    assert console.payloads("baccarat/T07/card") == [b'{"seq": 1}']


def test_the_tests_know_every_account_of_the_floor_acl() -> None:
    text = (EXAMPLES / "floor-acl").read_text()
    assert re.findall(r"^user (\S+)$", text, flags=re.MULTILINE) == list(FLOOR_USERS)
    assert not re.findall(r"^pattern ", text, flags=re.MULTILINE)


OPERATOR_TOPICS = (
    *sorted(TOPIC_TYPES), "reply", "reply/pit-ana", "cmd/void", "cmd/void/pit-ben",
    "cmd/void/pit-ana/x", "card/extra", "widgets", "cmd/void/pit-ana", "limits",
)
"""Every topic of a table; an operator (pit-ana) may write only the last two."""
ALLOWED = (SUCCESS, NO_SUBSCRIBERS)


def floor_login(floor: Mosquitto, user: str) -> Mqtt5:
    return Mqtt5(floor, user, FLOOR_USERS[user])


async def test_on_the_floor_an_operator_writes_only_limits_and_commands_in_its_name(
    floor: Mosquitto,
) -> None:
    """floor-acl holds operators to acl's rule; nobody else on the floor commands at all."""
    with floor_login(floor, "pit-ana") as operator:
        for kind in OPERATOR_TOPICS:
            code = operator.publish(f"baccarat/T07/{kind}", b"{}", retain=kind == "limits")
            wanted = ALLOWED if kind in ("cmd/void/pit-ana", "limits") else (NOT_AUTHORIZED,)
            assert code in wanted, (kind, code)
        # the console's permission probe: a command in its own name under no table
        assert operator.publish("baccarat/pit-console-probe/cmd/probe/pit-ana", b"{}") in ALLOWED
    for user in ("bridge-T07", "bridge-T08", "baccarat-recorder", "board-pit"):
        with floor_login(floor, user) as other:
            for table in ("T07", "T08"):
                for kind in (f"cmd/void/{user}", "cmd/void/pit-ana"):
                    code = other.publish(f"baccarat/{table}/{kind}", b"{}")
                    assert code == NOT_AUTHORIZED, (user, table, kind, code)
            if user.startswith("board") or user.endswith("recorder"):
                assert other.publish("baccarat/T07/limits", b"{}") == NOT_AUTHORIZED, user


async def test_the_pits_live_board_reads_every_table_on_the_floor(floor: Mosquitto) -> None:
    async with floor.client(username="board-pit", password=FLOOR_USERS["board-pit"]) as screen:
        await screen.subscribe("baccarat/#", qos=1)
        for bridge in ("bridge-T07", "bridge-T08"):
            async with floor.client(username=bridge, password=FLOOR_USERS[bridge]) as table:
                await table.publish(f"baccarat/{bridge[-3:]}/result", b"r", qos=1)
        got = []
        async with asyncio.timeout(WAIT):
            async for message in screen.messages:
                got.append(str(message.topic))
                if len(got) == 2:
                    break
        assert got == ["baccarat/T07/result", "baccarat/T08/result"]


async def test_no_forging_path_across_the_bridge(
    floor: Mosquitto, table_broker: Mosquitto
) -> None:
    """Every forging path is refused, on both brokers and across the bridge.

    Commands in another's name and every table topic but limits are refused on both
    brokers; limits cross both ways, once; a forged body on limits reaches the board, which
    shows nothing of it.
    """
    table_side = ("baccarat/T07/#",)
    async with (
        Listener(table_broker, "baccarat-T07", TABLE_USERS["baccarat-T07"],
                 ("baccarat/T07/cmd/#",)) as controller_in,
        Listener(table_broker, "board-T07", TABLE_USERS["board-T07"], table_side) as board,
        pit(floor) as console,
    ):
        await console.wait_for(lambda: console.payloads(BRIDGE_STATE)[-1:] == [b"1"], WAIT)
        forged_alarms = json.dumps(audit_alarms(TABLE)).encode()
        with floor_login(floor, "pit-ben") as operator:
            for kind in [k for k in OPERATOR_TOPICS if k not in ("limits", "cmd/void/pit-ben")]:
                code = operator.publish(f"baccarat/T07/{kind}", forged_alarms, retain=True)
                assert code == NOT_AUTHORIZED, ("floor", kind, code)
            assert operator.publish("baccarat/T07/cmd/void/pit-ana", b"{}") == NOT_AUTHORIZED
            assert operator.publish("baccarat/T07/limits", forged_alarms, retain=True) in ALLOWED
            assert operator.publish("baccarat/T07/cmd/open/pit-ben", b'{"id": 1}') in ALLOWED
        with Mqtt5(table_broker, "pit-ben", TABLE_USERS["pit-ben"]) as operator:
            for kind in ("result", "alarms", "shoe", "status", "cmd/void/pit-ana"):
                code = operator.publish(f"baccarat/T07/{kind}", forged_alarms, retain=True)
                assert code == NOT_AUTHORIZED, ("table", kind, code)
            assert operator.publish("baccarat/T07/limits", AUDIT_SHOE, retain=True) in ALLOWED
        await board.wait_for(lambda: len(board.payloads("baccarat/T07/limits")) >= 2, WAIT)
        await console.wait_for(lambda: len(console.payloads("baccarat/T07/limits")) >= 2, WAIT)
        await asyncio.sleep(2.0)  # a loop over the bridge, or a refused body, would show now

    commands = [topic for _, topic, _ in controller_in.received]
    assert commands == ["baccarat/T07/cmd/open/pit-ben"]  # the only one in its own name
    for listener in (board, console):  # each limits body once: nothing loops
        table_topics = [
            t for _, t, _ in listener.received
            if t.startswith("baccarat/T07/") and "/cmd/" not in t  # the command: not shown
        ]
        assert table_topics == ["baccarat/T07/limits"] * 2, table_topics
        assert listener.payloads("baccarat/T07/limits") == [forged_alarms, AUDIT_SHOE]
        state = BoardState(table=TABLE)  # what the terminal board makes of them
        for _, topic, payload in listener.received:
            state = receive(state, f"baccarat/{TABLE}", topic, payload)
        assert state.rejected == 2
        assert (state.alarms, state.shoe, state.limits) == ((), None, None)


async def test_limits_set_on_the_floor_reach_the_tables_boards(
    floor: Mosquitto, table_broker: Mosquitto
) -> None:
    async with (
        Listener(table_broker, "board-T07", TABLE_USERS["board-T07"],
                 ("baccarat/T07/limits",)) as board,
        pit(floor) as console,
    ):
        await console.wait_for(lambda: console.payloads(BRIDGE_STATE)[-1:] == [b"1"], WAIT)
        body = json.dumps(limits_body(TABLE)).encode()
        with floor_login(floor, "pit-ana") as operator:
            assert operator.publish("baccarat/T07/limits", body, retain=True) in ALLOWED
        await board.wait_for(lambda: bool(board.payloads("baccarat/T07/limits")), WAIT)
        state = receive(BoardState(table=TABLE), f"baccarat/{TABLE}", "baccarat/T07/limits",
                        board.payloads("baccarat/T07/limits")[-1])
        assert state.limits is not None
        assert state.limits.banker.max == 50000
