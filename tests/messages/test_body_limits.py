"""Every topic's size limit holds the largest body a real table makes, with a margin.

The bodies are made by the engine from seeded 8- and 12-deck shoes (and the worst cases a
shoe allows: every card of a 12-deck shoe held aside by one alarm, a page of roads with the
most rounds a shoe can have), by the daemon's own functions for its status, fault and
replies; the brokers' configurations in ``examples/mosquitto`` are read and compared with
the catalogue's figures.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from baccarat.cards import shuffled_shoe
from baccarat.controller.commands import CommandError, Reply, parse_command
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import DrawCard, NewShoe
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.controller.faults import encoded, fault_alarm
from baccarat.controller.publisher import status_payload
from baccarat.messages import catalog
from baccarat.messages.bodies import AlarmMessage, AlarmsMessage, Message
from baccarat.messages.limits import BetLimit, LimitsMessage
from baccarat.rules.profiles import MAX_DECKS, MAX_ROADS_ROUNDS, load_profile

EXAMPLES = Path(__file__).parents[2] / "examples" / "mosquitto"
MARGIN = 2
"""A body class's limit is at least this many times the largest body measured."""


def largest_bodies(decks: int, seeds: range, profile: str = "macau") -> dict[str, tuple[int, int]]:
    """Per message type: the largest body of the shoes, and the results when it was made."""
    largest: dict[str, tuple[int, int]] = {}
    for seed in seeds:
        engine = Engine(load_profile(profile))
        results = 0
        for inp in shoe_inputs(decks, seed):
            for message in engine.feed(inp).messages:
                results += message.type == "result"
                size = len(message.to_bytes())
                if size > largest.get(message.type, (0, 0))[0]:
                    largest[message.type] = (size, results)
    return largest


@pytest.mark.parametrize("decks", [8, MAX_DECKS])
def test_every_body_of_real_shoes_is_within_half_its_limit(decks: int) -> None:
    largest = largest_bodies(decks, range(12))
    limits = {type_name: cls.max_bytes for cls in catalog.MESSAGE_TYPES
              for type_name in [cls.__dataclass_fields__["type"].default]}
    assert {"card", "result", "round", "shoe", "roads", "recall"} <= set(largest)
    for name, (size, _) in largest.items():
        if name == "roads":
            continue  # grows with the rounds: below
        assert size * MARGIN <= limits[name], (name, size)


def test_a_page_of_roads_with_the_most_rounds_a_shoe_has_fits_its_limit() -> None:
    """The roads body grows with the rounds: its bytes per round, at the most rounds."""
    largest = largest_bodies(MAX_DECKS, range(12))
    size, results = largest["roads"]
    per_round = size / results
    worst = per_round * MAX_ROADS_ROUNDS
    from baccarat.messages.roads import RoadsMessage

    assert worst * 1.5 <= RoadsMessage.max_bytes, (size, results, worst)


def test_an_alarm_holding_a_whole_12_deck_shoe_fits_its_limit() -> None:
    """Cards dealt with no round open (explicit opening) are held aside by one alarm."""
    profile = load_profile("macau").model_copy(update={"open_mode": "explicit"})
    engine = Engine(profile)
    engine.feed(NewShoe(decks=MAX_DECKS))
    alarms: list[Message] = []
    for card in shuffled_shoe(MAX_DECKS, 3):
        alarms += [m for m in engine.feed(DrawCard(card)).messages
                   if isinstance(m, AlarmMessage | AlarmsMessage)]
    open_list = [m for m in alarms if isinstance(m, AlarmsMessage)]
    assert open_list, "no alarm held the cards"
    held = max(len(a.cards) for m in open_list for a in m.alarms)
    assert held >= 100  # the cards were coalesced into the alarm
    for message in alarms:
        size = len(message.to_bytes())
        assert size * MARGIN <= type(message).max_bytes, (message.type, size, held)


def test_limits_with_every_field_at_its_longest_fit() -> None:
    most = BetLimit(min=10**12, max=10**12)
    body = LimitsMessage(table="T" * 64, banker=most, player=most, tie=most, pairs=most,
                         currency="X" * 8, by="o" * 64, ts=1.7e9 + 0.123456).to_bytes()
    assert len(body) * MARGIN <= LimitsMessage.max_bytes


def test_the_daemons_own_bodies_fit_their_topics() -> None:
    status = status_payload("offline", "T" * 64, fault="journal: " + "x" * 1000)
    assert len(status) <= catalog.TOPIC_MAX_BYTES["status"]
    fault = encoded(fault_alarm("journal: " + "x" * 1000, table="T" * 64, shoe=1,
                                round_number=80, ts=1.7e9))
    assert len(fault) <= catalog.TOPIC_MAX_BYTES["fault"]
    assert len(fault) <= catalog.TOPIC_MAX_BYTES["alarm"]
    worst_reply = 0
    for body in (b"{" * 4096, b'{"id":"' + b"x" * 4000 + b'"}', b'{"decks":"' + b"9" * 4000 + b'"}',
                 b"\xff" * 4096):
        try:
            parse_command("shoe", body)
        except CommandError as exc:
            reply = Reply(command="shoe", id="x" * 64, ok=False, error=str(exc))
            worst_reply = max(worst_reply, len(reply.to_json().encode()))
    assert 0 < worst_reply * MARGIN <= catalog.TOPIC_MAX_BYTES["reply"]


def test_a_command_over_its_limit_is_refused_unread() -> None:
    limit = catalog.TOPIC_MAX_BYTES["cmd"]
    with pytest.raises(CommandError, match=f"at most {limit}"):
        parse_command("void", b"\xff" * (limit + 1))


def config_values(path: Path) -> Counter[str]:
    """Each ``name value`` line of a mosquitto configuration (the last of each name)."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        found = re.match(r"^(\w+)\s+(\S+)", line)
        if found:
            values[found[1]] = found[2]
    return Counter({name: int(v) for name, v in values.items() if v.isdigit()})


@pytest.mark.parametrize("name", ["mosquitto.conf", "floor.conf"])
def test_the_example_brokers_take_the_largest_body_and_no_more(name: str) -> None:
    values = config_values(EXAMPLES / name)
    assert values["max_packet_size"] == catalog.BROKER_MAX_PACKET


def test_a_real_tables_mean_body_is_the_catalogues() -> None:
    count = size = 0
    for seed in range(6):
        engine = Engine(load_profile("macau"))
        for inp in shoe_inputs(MAX_DECKS, seed):
            for message in engine.feed(inp).messages:
                count += 1
                size += len(message.to_bytes())
    assert size / count <= catalog.MEAN_BODY_BYTES <= 1.5 * size / count


@pytest.mark.parametrize(("names"), [("mosquitto.conf", "bridge.conf"), ("floor.conf",)])
def test_each_brokers_queue_is_bounded_in_bytes_by_the_catalogue(names: tuple[str, ...]) -> None:
    """max_queued_bytes is what max_queued_messages of a real table's messages take."""
    values: Counter[str] = Counter()
    for name in names:  # bridge.conf is read after mosquitto.conf (conf.d): its values win
        values.update({k: v - values[k] for k, v in config_values(EXAMPLES / name).items()})
    assert values["max_queued_messages"] > 0
    assert values["max_queued_bytes"] == catalog.queue_bytes(values["max_queued_messages"])


def test_every_limit_is_below_the_brokers_packet() -> None:
    assert catalog.MAX_BODY_BYTES + catalog.PACKET_OVERHEAD == catalog.BROKER_MAX_PACKET
    assert all(v <= catalog.MAX_BODY_BYTES for v in catalog.TOPIC_MAX_BYTES.values())
    assert catalog.too_large("limits", 1025) is not None
    assert catalog.too_large("limits", 1024) is None
