"""The screen every body from the broker passes, and its tables tied to the catalogue."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baccarat.controller.commands import Reply
from baccarat.controller.faults import FAULT_TOPIC, fault_alarm
from baccarat.controller.publisher import status_payload
from baccarat.floor.bodies import (
    BODY_TYPES,
    FIELDS,
    MAX_BYTES,
    MAX_DEPTH,
    TOPIC_MAX_BYTES,
    TOPIC_TYPES,
    BodyRefusedError,
    screen,
)
from baccarat.messages import catalog
from baccarat.messages.bodies import Message, json_schema, type_name
from baccarat.messages.catalog import SCHEMA_TYPES

STORE_FIELDS = ("seq", "ts", "shoe", "round")
"""What the store reads of every engine message."""


def schema_kinds(schema: dict[str, Any]) -> frozenset[str]:
    """The JSON types a property's schema allows, as JSON Schema names them."""
    if "anyOf" in schema:
        return frozenset().union(*(schema_kinds(s) for s in schema["anyOf"]))
    if "$ref" in schema:
        return frozenset({"object"})
    return frozenset({schema["type"]})


def test_the_topic_table_is_the_catalogues() -> None:
    catalogued = {type_name(cls): cls for cls in SCHEMA_TYPES}
    for name, cls in catalogued.items():
        assert BODY_TYPES[name].topics == (cls.topic,), name
        assert BODY_TYPES[name].sequenced == issubclass(cls, Message), name
    # the daemon's own bodies, which the catalogue does not hold
    assert json.loads(status_payload("online", "T1"))["type"] == "status"
    assert BODY_TYPES["status"].topics == ("status",)
    assert fault_alarm("x", table="T1", shoe=None, round_number=None, ts=1.0)["type"] == "fault"
    assert set(BODY_TYPES["fault"].topics) == {"alarm", FAULT_TOPIC}
    assert Reply(command="void", ok=True).type == "reply"
    assert set(BODY_TYPES) == {*catalogued, "status", "fault", "reply"}
    assert not any(BODY_TYPES[name].sequenced for name in ("status", "fault", "reply"))


def test_the_field_table_is_the_schemas() -> None:
    sequenced = {type_name(cls): cls for cls in SCHEMA_TYPES if issubclass(cls, Message)}
    assert set(FIELDS) == set(sequenced)
    for name, cls in sequenced.items():
        properties = json_schema(cls)["properties"]
        for field, kinds in FIELDS[name].items():
            assert field in properties, (name, field)
            assert kinds == schema_kinds(properties[field]), (name, field)
        for field in STORE_FIELDS:  # whatever the store reads is checked
            assert field not in properties or field in FIELDS[name], (name, field)


def card(**changes: Any) -> bytes:
    body = {"schema": 1, "type": "card", "seq": 7, "ts": 1.5, "shoe": 1, "round": 2,
            "position": "P1", "card": "9S"} | changes
    return json.dumps(body).encode()


def test_a_good_body_passes() -> None:
    screened = screen("card", card())
    assert screened.sequenced
    assert screened.body["seq"] == 7
    assert screen("status", b'{"type": "status", "state": "online"}').sequenced is False


HOSTILE = [
    ("limits", b'{"type":"limits","seq":1180591620717411303424}', "outside 64 bits"),
    ("card", card(seq=2**63), "outside 64 bits"),
    ("card", card(shoe=-(2**63) - 1), "outside 64 bits"),
    ("card", card(text=[1, 2, 10**30]), "outside 64 bits"),
    ("card", b'{"type":"\\ud800","seq":1}', "lone surrogate"),
    ("card", card()[:-1] + b', "x": {"\\udfff": 1}}', "lone surrogate"),
    ("card", card(seq="1"), "seq is string"),
    ("card", card(seq=1.0), "seq is number"),
    ("card", card(seq=True), "seq is boolean"),
    ("card", card(shoe="x"), "shoe is string"),
    ("card", card(round=[1]), "round is array"),
    ("card", card(ts="noon"), "ts is string"),
    ("card", card(position=None), "position is null"),
    ("card", card(seq=-1), "negative"),
    ("card", json.dumps({"type": "card"}).encode(), "no seq"),
    ("card", card(type="result"), "a result body on a card topic"),
    ("limits", card(type="limits"), "no seq"),
    ("status", b'{"type":"status","seq":3}', "no seq"),
    ("card", b'{"type":"nonsense","seq":1}', "unknown type"),
    ("card", b'{"seq":1}', "unknown type"),
    ("widgets", card(), "unknown topic"),
    ("card", b"", "not JSON"),
    ("card", b"\xff\xfe\x00", "not UTF-8"),
    ("card", b"hello", "not JSON"),
    ("card", b"[1, 2]", "not a JSON object"),
    ("card", b'{"type":"card","seq":1,"ts":NaN}', "not JSON"),
    ("card", b'{"type":"card","seq":1,"ts":1e400}', "not finite"),
    ("roads", b'{"type":"roads","seq":' + b"9" * 5000 + b"}", "not JSON"),
    ("roads", b"[" * 60_000 + b"]" * 60_000, "nested deeper"),  # within roads' length
    ("card", b"[" * 100_000 + b"]" * 100_000, "over the 1024"),
    ("card", card(x=json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))), "nested"),
    ("card", card(text="x" * (4 * 1024 * 1024)), "over the"),
]


@pytest.mark.parametrize(("kind", "payload", "reason"), HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_body_is_refused_with_its_reason(kind: str, payload: bytes, reason: str) -> None:
    with pytest.raises(BodyRefusedError, match=reason) as refused:
        screen(kind, payload)
    assert str(refused.value).isascii()
    assert len(str(refused.value)) < 200


def test_every_topic_has_its_types() -> None:
    assert TOPIC_TYPES["alarm"] == {"alarm", "alarm_cleared", "fault"}
    assert TOPIC_TYPES["limits"] == {"limits"}


def test_size_limits_are_the_catalogues() -> None:
    assert dict(TOPIC_MAX_BYTES) == dict(catalog.TOPIC_MAX_BYTES)
    assert MAX_BYTES == catalog.MAX_BODY_BYTES
    assert MAX_DEPTH == catalog.MAX_DEPTH


@pytest.mark.parametrize("kind", sorted(TOPIC_TYPES))
def test_a_body_one_byte_over_its_topics_limit_is_refused_unread(kind: str) -> None:
    most = TOPIC_MAX_BYTES[kind]
    too_long = f"body of {most + 1} bytes, over the {most}"
    with pytest.raises(BodyRefusedError, match=too_long) as refused:
        screen(kind, b"\xff" * (most + 1))  # not UTF-8: refused by its length, not decoded
    assert refused.value.cause == "size"
