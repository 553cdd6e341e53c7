"""What may come on a table's topics, and the screen every body from the broker passes.

Everything read from a broker is hostile input. The recorder stores a body only when it is
what its topic carries: the topic's last level decides which ``type`` may come on it
(:data:`TOPIC_TYPES`), a type of the engine has a ``seq`` and the others have none, and the
fields the store and the history read have the JSON types of the published schema
(:data:`FIELDS`). Every integer fits the store's 64-bit columns, every string is Unicode
without lone surrogates (it can be written to either database), no number is NaN or
infinite, and a body is at most its topic's :data:`TOPIC_MAX_BYTES` long and :data:`MAX_DEPTH` deep.
A body that is not is :class:`BodyRefusedError`, with the reason, and the recorder quarantines it.

The floor reads bodies as JSON, not through :mod:`baccarat.messages` (the dependency rule,
docs/design.md). These tables are that package's catalogue as far as the floor needs it;
``tests/floor/test_bodies.py`` ties them to it, so the two cannot drift apart.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baccarat.errors import BaccaratError

TOPIC_MAX_BYTES: Final[Mapping[str, int]] = {
    "alarm": 16384, "alarms": 65536, "card": 1024, "cmd": 4096, "edge": 2048, "fault": 4096,
    "limits": 1024, "recall": 16384, "reply": 4096, "result": 2048, "roads": 131072,
    "round": 4096, "shoe": 2048, "status": 4096, "void": 2048,
}
"""A topic's last level -> the largest body on it: the catalogue's ``TOPIC_MAX_BYTES`` (the
largest a real shoe makes, with a margin; ``tests/floor/test_bodies.py`` keeps them equal).
A longer body is refused by its length, before it is decoded."""
MAX_BYTES: Final = max(TOPIC_MAX_BYTES.values())
"""The largest body of any topic (``roads``)."""
MAX_DEPTH: Final = 16
"""The deepest nesting of arrays and objects in a body (the schemas reach 4)."""
INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**63 - 1
"""The range of the store's BIGINT columns; every integer of a body must be in it."""


@dataclass(frozen=True, slots=True)
class BodyType:
    """A ``type`` that may come on a table's topics, where, and whether it has a ``seq``."""

    topics: tuple[str, ...]
    sequenced: bool
    """An engine message (up by one per message of a table), stored in ``messages``."""
    derived: bool = False
    """A view the engine makes from earlier messages (:mod:`baccarat.floor.derived` makes
    it again from the stored facts): only the table's latest is kept whole, and of the
    others their ``seq``, topic and ``ts``."""


BODY_TYPES: Final[Mapping[str, BodyType]] = {
    "card": BodyType(("card",), sequenced=True),
    "result": BodyType(("result",), sequenced=True),
    "alarm": BodyType(("alarm",), sequenced=True),
    "alarm_cleared": BodyType(("alarm",), sequenced=True),
    "alarms": BodyType(("alarms",), sequenced=True),
    "round": BodyType(("round",), sequenced=True, derived=True),
    "void": BodyType(("void",), sequenced=True),
    "shoe": BodyType(("shoe",), sequenced=True),
    "roads": BodyType(("roads",), sequenced=True, derived=True),
    "recall": BodyType(("recall",), sequenced=True, derived=True),
    "edge": BodyType(("edge",), sequenced=False),  # the daemon's live edge, retained
    "limits": BodyType(("limits",), sequenced=False),  # the pit's, retained
    "status": BodyType(("status",), sequenced=False),  # the table's, retained, its last will
    "fault": BodyType(("alarm", "fault"), sequenced=False),  # a journal fault stops the table
    "reply": BodyType(("reply",), sequenced=False),  # the answer to a command
}
"""Every body type a table's topics carry (the catalogue's, the daemon's status, fault
and reply, the pit's limits)."""

DERIVED_TOPICS: Final = frozenset(
    topic for kind in BODY_TYPES.values() if kind.derived for topic in kind.topics
)
"""The topics of derived views, bodies the engine makes from what it published before:
kept as their place where the facts make them again (``alarms`` is not one: a coalesced
alarm's count and held cards change only there; nor ``shoe``: its phase, burn due and cut
card are the device's facts, which no other body carries)."""

TOPIC_TYPES: Final[Mapping[str, frozenset[str]]] = {
    topic: frozenset(name for name, kind in BODY_TYPES.items() if topic in kind.topics)
    for topic in sorted({t for kind in BODY_TYPES.values() for t in kind.topics})
}
"""A topic's last level -> the types that may come on it."""
CLEARED_TOPICS: Final = frozenset({"fault"})
"""Topics whose retained body the table clears with an empty one (a fault that is over)."""
IGNORED_TOPICS: Final = frozenset({"cmd"})
"""Operator commands (``{prefix}/{table}/cmd/...``): their effect is in the table's messages."""

_INT: Final = frozenset({"integer"})
_INT_OR_NULL: Final = frozenset({"integer", "null"})
_NUMBER_OR_NULL: Final = frozenset({"number", "null"})
_STR: Final = frozenset({"string"})
_STR_OR_NULL: Final = frozenset({"string", "null"})
_BOOL: Final = frozenset({"boolean"})
_OBJECT: Final = frozenset({"object"})

_COMMON: Final = {"seq": _INT, "ts": _NUMBER_OR_NULL}
FIELDS: Final[Mapping[str, Mapping[str, frozenset[str]]]] = {
    "card": _COMMON | {"shoe": _INT, "round": _INT_OR_NULL, "position": _STR,
                       "card": _STR_OR_NULL, "demo": _BOOL},
    "result": _COMMON | {"shoe": _INT, "round": _INT, "round_id": _STR, "winner": _STR,
                         "player": _OBJECT, "banker": _OBJECT, "demo": _BOOL},
    "alarm": _COMMON | {"id": _INT, "kind": _STR, "shoe": _INT_OR_NULL,
                        "round": _INT_OR_NULL},
    "alarm_cleared": _COMMON | {"id": _INT, "kind": _STR, "by": _STR, "shoe": _INT_OR_NULL,
                                "round": _INT_OR_NULL, "origin": _STR_OR_NULL},
    "alarms": _COMMON,
    "round": _COMMON | {"shoe": _INT, "round": _INT, "round_id": _STR, "demo": _BOOL},
    "void": _COMMON | {"shoe": _INT, "round": _INT, "round_id": _STR, "origin": _STR_OR_NULL,
                       "demo": _BOOL},
    "shoe": _COMMON | {"shoe": _INT},
    "roads": _COMMON | {"shoe": _INT},
    "recall": _COMMON,
}
"""Per engine message type, the JSON types (as JSON Schema names them) of the fields the
store and the history read; ``seq`` is required, the others may be absent. ``number``
takes an integer too."""

_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]", re.ASCII)
"""A ``\\uD800``-``\\uDFFF`` escape: the only way a lone surrogate gets into decoded JSON."""


CAUSES: Final = ("topic", "size", "encoding", "shape", "database")
"""The classes of quarantine reasons, as the recorder counts them: a topic that is no
table's, a body too large or too deep, one that is not JSON text (or empty), one that is
not what its topic carries, one the database refused."""


class BodyRefusedError(BaccaratError, ValueError):
    """A body that must not be stored; the text is the reason the quarantine keeps.

    ``cause`` is its class, one of :data:`CAUSES`.
    """

    def __init__(self, reason: str, cause: str = "shape") -> None:
        super().__init__(reason)
        self.cause = cause


@dataclass(frozen=True, slots=True)
class Screened:
    """A body that passed the screen."""

    body: dict[str, Any]
    text: str
    sequenced: bool


def screen(kind: str, payload: bytes) -> Screened:
    """The body of ``payload`` on a topic whose last level is ``kind``.

    :class:`BodyRefusedError` if it must not be stored.
    """
    if kind not in TOPIC_TYPES:
        raise BodyRefusedError(f"unknown topic {shown(kind)}", "topic")
    most = TOPIC_MAX_BYTES.get(kind, MAX_BYTES)
    if len(payload) > most:
        raise BodyRefusedError(
            f"body of {len(payload)} bytes, over the {most} a {kind} body may have", "size"
        )
    try:
        text = payload.decode("utf-8")
        body = json.loads(text, parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise BodyRefusedError(f"not UTF-8: {exc.reason} at byte {exc.start}", "encoding") from None
    except RecursionError:  # the decoder's own limit, far deeper than MAX_DEPTH
        raise BodyRefusedError(f"nested deeper than the {MAX_DEPTH} allowed", "size") from None
    except ValueError as exc:  # JSONDecodeError, too many digits, NaN
        raise BodyRefusedError(f"not JSON: {exc}", "encoding") from None
    if not isinstance(body, dict):
        raise BodyRefusedError(f"not a JSON object but {json_kind(body)}")
    _check_values(body, strings=_SURROGATE_ESCAPE.search(payload) is not None)
    name = body.get("type")
    if not isinstance(name, str) or name not in BODY_TYPES:
        raise BodyRefusedError(f"unknown type {shown(name)}")
    if name not in TOPIC_TYPES[kind]:
        raise BodyRefusedError(f"a {name} body on a {kind} topic")
    body_type = BODY_TYPES[name]
    if body_type.sequenced:
        problem = field_problem(body)
        if problem is not None:
            raise BodyRefusedError(problem)
        if body["seq"] < 0:
            raise BodyRefusedError(f"seq {body['seq']} is negative")
    elif "seq" in body:
        raise BodyRefusedError(f"a {name} body has no seq, this one has {shown(body['seq'])}")
    return Screened(body, text, body_type.sequenced)


def field_problem(body: Mapping[str, Any]) -> str | None:
    """What is wrong with the fields an engine message's store and history read, or None."""
    fields = FIELDS.get(str(body.get("type")))
    if fields is None:
        return f"not an engine message type: {shown(body.get('type'))}"
    if "seq" not in body:
        return "no seq"
    for name, kinds in fields.items():
        if name not in body:
            continue
        kind = json_kind(body[name])
        if kind not in kinds and not (kind == "integer" and "number" in kinds):
            wanted = " or ".join(sorted(kinds))
            return f"{name} is {kind} {shown(body[name])}, not {wanted}"
    return None


def json_kind(value: object) -> str:
    """The JSON Schema name of a decoded JSON value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def shown(value: object, limit: int = 40) -> str:
    """A value for a reason or a log line: ASCII, short, whatever it holds."""
    text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _check_values(body: dict[str, Any], *, strings: bool) -> None:
    """BodyRefusedError for nesting over MAX_DEPTH, an integer outside 64 bits, a number not finite.

    With ``strings``, also for a string or key holding a lone surrogate (it has no UTF-8).
    """
    stack: list[tuple[object, int]] = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                raise BodyRefusedError(f"nested deeper than the {MAX_DEPTH} allowed", "size")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
            if strings and isinstance(value, dict):
                stack.extend((key, depth) for key in value)
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if not INT_MIN <= value <= INT_MAX:
                raise BodyRefusedError(f"integer {shown(value)} is outside 64 bits")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise BodyRefusedError(f"number {value} is not finite")
        elif strings and isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise BodyRefusedError(
                    f"string {shown(value)} holds a lone surrogate", "encoding"
                ) from None
