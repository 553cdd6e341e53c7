"""The terminal board's check of every body against its topic, and its tables' ties.

``boards/accept.py`` decides which types each topic carries from the catalogue; the web
pages' twin (``boards/web/accept.js``) reads the same tables from the generated
``boards/web/catalog.js``, which must be what the catalogue makes now.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from baccarat.boards.accept import (
    FAULT_TYPE,
    STATUS_TYPE,
    TOPIC_TYPES,
    WEB_CATALOG,
    ControllerStatus,
    Fault,
    Refused,
    accept,
    web_catalog,
)
from baccarat.boards.feed import receive
from baccarat.boards.state import BoardState
from baccarat.controller.faults import FAULT_TOPIC, fault_alarm
from baccarat.controller.publisher import status_payload
from baccarat.floor import bodies as floor
from baccarat.messages.bodies import Message, type_name
from baccarat.messages.catalog import SCHEMA_TYPES, rendered_schemas
from boards.forged_bodies import TOPIC_OF, Forged, encoded, forged_bodies, good_bodies
from boards.late_join import MID_ROUND, played

TABLE = "T07"
BASE = f"baccarat/{TABLE}"
ACCEPT_JS = WEB_CATALOG.with_name("accept.js")


@cache
def forged() -> list[Forged]:
    return forged_bodies(TABLE)


def test_the_web_catalog_is_what_the_catalogue_makes() -> None:
    assert WEB_CATALOG.read_text(encoding="utf-8") == web_catalog(), (
        "boards/web/catalog.js is out of date: run `.venv/bin/python -m baccarat.boards.accept`"
    )


def test_each_topic_carries_the_catalogues_types_only() -> None:
    for cls in SCHEMA_TYPES:
        assert type_name(cls) in TOPIC_TYPES[cls.topic], cls
    catalogued = {type_name(cls) for cls in SCHEMA_TYPES}
    assert json.loads(status_payload("online", "T1"))["type"] == STATUS_TYPE
    assert fault_alarm("x", table="T1", shoe=None, round_number=None, ts=1.0)["type"] == FAULT_TYPE
    assert TOPIC_TYPES[FAULT_TOPIC] == (FAULT_TYPE,)
    every = {name for names in TOPIC_TYPES.values() for name in names}
    assert every == catalogued | {STATUS_TYPE, FAULT_TYPE}
    # the floor recorder's table says the same, but for the replies boards never read
    assert {k: set(v) for k, v in TOPIC_TYPES.items()} == {
        k: set(v) for k, v in floor.TOPIC_TYPES.items() if k != "reply"
    }


def schema_keywords(schema: Any, found: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for part in value.values():
                    schema_keywords(part, found)
            elif key not in ("const", "enum", "default"):
                schema_keywords(value, found)
    elif isinstance(schema, list):
        for item in schema:
            schema_keywords(item, found)
    return found


def test_the_web_check_understands_every_keyword_the_schemas_use() -> None:
    listed = re.search(r"export const KEYWORDS = \[(.*?)\];", ACCEPT_JS.read_text(), re.S)
    assert listed is not None
    understood = set(re.findall(r'"([$\w]+)"', listed.group(1)))
    used: set[str] = set()
    for text in rendered_schemas().values():
        schema_keywords(json.loads(text), used)
    words_for_people = {"title", "description", "$id", "default"}
    assert used - words_for_people <= understood


def test_every_good_body_passes_on_its_own_topic() -> None:
    for name, body in good_bodies(TABLE).items():
        verdict = accept(TOPIC_OF.get(name, name), encoded(body), TABLE)
        assert not isinstance(verdict, Refused), (name, verdict)
        if name == STATUS_TYPE:
            assert verdict == ControllerStatus("online")
        elif name == FAULT_TYPE:
            assert isinstance(verdict, Fault)
        elif name != "limits":
            assert isinstance(verdict, Message)
            assert verdict.type == name  # type: ignore[attr-defined]
    assert isinstance(accept("alarm", encoded(good_bodies(TABLE)["fault"]), TABLE), Fault)
    assert accept("status", b"offline", TABLE) == ControllerStatus("offline")


def test_a_sealed_body_is_taken_as_its_engine_body() -> None:
    """The table's chain member (docs/record.md) is taken off before the schema's check."""
    from baccarat.chain import Sealer, make_key

    with tempfile.TemporaryDirectory() as folder:
        sealer = Sealer(make_key(Path(folder) / "t.key"), TABLE)
    for seq, (name, body) in enumerate(good_bodies(TABLE).items(), start=1):
        if "seq" not in body or name == "limits":
            continue
        engine = json.dumps(body | {"seq": seq}, separators=(",", ":")).encode()
        sealed = sealer.seal(seq, engine)
        assert sealed != engine
        kind = TOPIC_OF.get(name, name)
        assert accept(kind, sealed, TABLE) == accept(kind, engine, TABLE), name


def test_every_forged_body_is_refused_with_a_short_reason() -> None:
    cases = forged()
    assert len(cases) > 300
    for case in cases:
        verdict = accept(case.kind, case.payload, TABLE)
        assert isinstance(verdict, Refused), case.what
        assert verdict.reason.isascii(), (case.what, verdict)
        assert len(verdict.reason) < 200, (case.what, verdict)


def mid_round_state() -> BoardState:
    """A board of a table mid-round with two open alarms, its limits set."""
    state = BoardState(table=TABLE)
    state = receive(state, BASE, f"{BASE}/limits", encoded(good_bodies(TABLE)["limits"]))
    for message in played(MID_ROUND):
        kind = TOPIC_OF.get(message.type, message.type)  # type: ignore[attr-defined]
        state = receive(state, BASE, f"{BASE}/{kind}", message.to_bytes())
    assert state.rejected == 0
    assert [a.kind for a in state.alarms] == ["link_down", "foreign_card", "bad_data"]
    assert state.limits is not None
    return state


@cache
def mid_round() -> BoardState:
    return mid_round_state()


@pytest.mark.parametrize("case", forged(), ids=lambda case: case.what[:60])
def test_a_forged_body_is_counted_and_changes_nothing_else(case: Forged) -> None:
    before = mid_round()
    after = receive(before, BASE, f"{BASE}/{case.kind}", case.payload)
    assert after.rejected == before.rejected + 1
    assert after.refused_why
    assert replace(after, rejected=before.rejected, refused_why="") == before


def test_the_audits_bodies_show_nothing() -> None:
    state = receive(BoardState(table=TABLE), BASE, f"{BASE}/limits", forged()[0].payload)
    state = receive(state, BASE, f"{BASE}/limits", forged()[1].payload)
    assert state.alarms == ()
    assert state.shoe is None
    assert state.limits is None
    assert state.rejected == 2
    assert "alarms body on a limits topic" in state.refused_why or "shoe" in state.refused_why
