"""Forged and broken bodies on a table's topics: what every board must refuse.

The audit's two (an open alarm, and a shoe whose ``phase`` is a number, each retained on
``limits``, which operators may write), one good body of every type on every other type's
topic, every field of every type (nested ones too) given a value of the wrong JSON type,
NaN-like and huge numbers, deep nesting, a body naming another table, and bodies that are
no JSON object. :func:`good_bodies` are the ones that must pass, one per type.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from baccarat.controller.faults import fault_alarm
from baccarat.controller.publisher import status_payload
from boards.late_join import MID_ROUND, played
from boards.realistic_shoe import realistic_messages

TOPIC_OF: Final = {"alarm_cleared": "alarm"}
"""A type's topic where it is not the type's own name."""


@dataclass(frozen=True)
class Forged:
    """One body on one topic (the last level), and what it is."""

    kind: str
    payload: bytes
    what: str

    @property
    def text(self) -> str:
        return self.payload.decode("utf-8", errors="replace")


def limits_body(table: str) -> dict[str, Any]:
    return {
        "schema": 1, "type": "limits", "table": table, "currency": "HKD", "by": "pit-ana",
        "banker": {"min": 100, "max": 50000}, "player": {"min": 100, "max": 50000},
        "tie": {"min": 10, "max": 5000}, "pairs": {"min": 10, "max": 2500},
    }


def good_bodies(table: str) -> dict[str, dict[str, Any]]:
    """One real body of every type a table's topics carry, by type."""
    found: dict[str, dict[str, Any]] = {}
    for message in [*realistic_messages(), *played(MID_ROUND)]:
        body = json.loads(message.to_json())
        if body["type"] == "alarms" and not body["alarms"]:
            continue  # one with an alarm in it, so that its items are checked too
        found.setdefault(body["type"], body)
    found["limits"] = limits_body(table)
    found["status"] = json.loads(status_payload("online", table))
    found["fault"] = fault_alarm("journal: disk full", table=table, shoe=1, round_number=2, ts=1.5)
    return found


def audit_alarms(table: str) -> dict[str, Any]:
    """The audit's forged alarms: an open extra card on round 3, with Declare/Void."""
    alarm = {
        "schema": 1, "seq": 900, "ts": 1.0, "type": "alarm", "id": 77, "kind": "extra_card",
        "article": "9", "correctable": True, "corrections": ["declare", "void"], "shoe": 1,
        "round": 3, "card": "QH", "text": "forged", "count": 1, "cards": ["QH"],
        "lasting": True,
    }
    return {"schema": 1, "seq": 900, "ts": 1.0, "type": "alarms", "alarms": [alarm]}


CARDS: Final = ("alarms", 0, "cards")
AUDIT_SHOE: Final = b'{"type":"shoe","seq":5,"shoe":1,"phase":5}'


def wrong(value: Any) -> Any:
    """A value of a JSON type that ``value``'s field cannot have."""
    if isinstance(value, bool):
        return "true"
    if isinstance(value, int):
        return "7"
    if isinstance(value, float):
        return "7.5"
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return "x"
    if isinstance(value, dict):
        return "x"
    return {"x": 1}  # for a null: a field that may be null is never an object here


def mutations(body: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, wrong value) for every field of ``body``, nested ones too (a list's first item)."""
    if isinstance(body, dict):
        for key, value in body.items():
            if path == () and key == "type":
                continue  # a type of its own: the cases of the other topics
            yield (*path, key), wrong(value)
            yield from mutations(value, (*path, key))
    elif isinstance(body, list) and body:
        yield (*path, 0), wrong(body[0])
        yield from mutations(body[0], (*path, 0))


def changed(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    where: Any = out
    for step in path[:-1]:
        where = where[step]
    where[path[-1]] = value
    return out


def encoded(body: Any) -> bytes:
    return json.dumps(body).encode()


def forged_bodies(table: str) -> list[Forged]:
    """Every body a board must refuse on ``table``'s topics."""
    good = good_bodies(table)
    topics = sorted({TOPIC_OF.get(name, name) for name in good})
    out = [
        Forged("limits", encoded(audit_alarms(table)), "the audit's alarms on limits"),
        Forged("limits", AUDIT_SHOE, "the audit's shoe on limits"),
        Forged("alarms", encoded(audit_alarms(table) | {"seq": "900"}), "seq as a string"),
    ]
    for name, body in good.items():
        own = TOPIC_OF.get(name, name)
        for kind in topics:
            if kind != own and not (name == "fault" and kind == "alarm"):
                out.append(Forged(kind, encoded(body), f"a {name} body on {kind}"))
        for path, value in mutations(body):
            what = f"{name} {'.'.join(str(p) for p in path)}={value!r}"
            out.append(Forged(own, encoded(changed(body, path, value)), what))
    shoe = good["shoe"]
    raw = json.dumps(shoe)
    for constant in ("NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e300",
                     "9007199254740993", "18446744073709551616", "1" + "0" * 400):
        left = raw.replace('"cards_left": ', f'"cards_left": {constant}, "x": ', 1)
        seq = raw.replace('"seq": ', f'"seq": {constant}, "y": ', 1)
        out.append(Forged("shoe", left.encode(), f"cards_left {constant[:20]}"))
        out.append(Forged("shoe", seq.encode(), f"seq {constant[:20]}"))
    deep = "[" * 20 + "]" * 20
    very_deep = "[" * 100_000 + "]" * 100_000
    nested_cards = json.loads("[" * 17 + '"QH"' + "]" * 17)
    tie_above = {"tie": {"min": 9000, "max": 5000}}
    out += [
        Forged("shoe", f'{raw[:-1]}, "deep": {deep}}}'.encode(), "nested 21 deep"),
        Forged("shoe", f'{raw[:-1]}, "deep": {very_deep}}}'.encode(), "nested 100000 deep"),
        Forged("alarms", encoded(changed(audit_alarms(table), CARDS, nested_cards)), "deep"),
        Forged("shoe", encoded(shoe | {"extra": 1}), "an unknown field"),
        Forged("shoe", encoded(shoe)[:-1] + b',"chain":{"prev":"00","key":"0","sig":"x"}}',
               "a chain member of another shape (docs/record.md)"),
        Forged("shoe", encoded(shoe | {"chain": {"prev": "0" * 64, "key": "0" * 16,
                                                 "sig": "A" * 86}}),
               "a chain member with spaces: not the one shape taken off"),
        Forged("shoe", encoded({k: v for k, v in shoe.items() if k != "phase"}), "no phase"),
        Forged("shoe", encoded(shoe | {"phase": "dealing"}), "phase not one of its values"),
        Forged("limits", encoded(limits_body("T99")), "limits of another table"),
        Forged("status", encoded({"type": "status", "state": "online", "table": "T99"}),
               "status of another table"),
        Forged("status", b'{"type": "status", "state": "busy"}', "status not online nor offline"),
        Forged("status", b"busy", "a plain status that is no state"),
        Forged("limits", encoded(limits_body(table) | tie_above), "min above max"),
        Forged("limits", encoded(limits_body(table) | {"banker": {"min": 0, "max": 10**13}}),
               "max too large"),
        Forged("widgets", encoded(shoe), "an unknown topic"),
        Forged("shoe", b"not json", "not JSON"),
        Forged("shoe", b"[1, 2]", "an array"),
        Forged("shoe", b'"shoe"', "a string"),
        Forged("shoe", b"{}", "no type"),
        Forged("shoe", b"\xff\xfe{}", "not UTF-8"),
        Forged("roads", encoded(good["roads"] | {"pad": "x" * (300 * 1024)}), "over 256 kB"),
        Forged("roads", encoded(good["roads"] | {"pad": "x" * (129 * 1024)}), "over 128 kB"),
        # valid bodies but for their length (JSON's own blanks): refused before parsing
        Forged("limits", encoded(limits_body(table)) + b" " * 1024, "limits over 1 kB"),
        Forged("card", encoded(good["card"]) + b" " * 1024, "a card over 1 kB"),
        Forged("limits", b"\xff" * (64 * 1024), "64 kB of garbage on limits"),
    ]
    return out
