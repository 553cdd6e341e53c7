"""The retained limits body: parsed strictly, refused with the field that is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baccarat.messages.catalog import rendered_schemas
from baccarat.messages.limits import LimitsError, parse_limits


def body(**changes: Any) -> bytes:
    limits: dict[str, Any] = {
        "schema": 1, "type": "limits", "table": "T1", "currency": "HKD", "by": "pit-ana",
        "banker": {"min": 100, "max": 50000}, "player": {"min": 100, "max": 50000},
        "tie": {"min": 10, "max": 5000}, "pairs": {"min": 10, "max": 2500},
    }
    limits.update(changes)
    return json.dumps(limits).encode()


def test_a_limits_body_round_trips() -> None:
    limits = parse_limits(body())
    assert (limits.table, limits.banker.max, limits.pairs.min, limits.by) == (
        "T1", 50000, 10, "pit-ana",
    )
    assert json.loads(limits.to_bytes()) == {**json.loads(body()), "ts": None}


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"tie": {"min": 6000, "max": 5000}}, "tie: Value error, min 6000 is above max 5000"),
        ({"banker": {"min": "100", "max": 500}}, "banker.min: Input should be a valid integer"),
        ({"player": {"min": -1, "max": 500}}, "player.min: Input should be greater than"),
        ({"type": "card"}, "type: Input should be 'limits'"),
        ({"odds": 3}, "odds: Unexpected keyword argument"),
        ({"pairs": None}, "pairs: Input should be"),
    ],
)
def test_a_bad_limits_body_is_refused_saying_why(changes: dict[str, Any], said: str) -> None:
    with pytest.raises(LimitsError, match=r"^bad limits body: ") as caught:
        parse_limits(body(**changes))
    assert said in str(caught.value)


def test_not_json_is_refused_plainly() -> None:
    with pytest.raises(LimitsError, match="bad limits body: body: Invalid JSON"):
        parse_limits(b"limits!")


def test_the_limits_schema_is_exported() -> None:
    schema = json.loads(rendered_schemas()["limits.schema.json"])
    assert set(schema["required"]) == {"table", "banker", "player", "tie", "pairs"}
