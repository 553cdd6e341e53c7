"""The check every body from the broker passes before a board folds it.

Everything read from a broker is hostile input. Operators may write a table's ``limits``,
so a body of any ``type`` can arrive there (and a broken or hostile client of the broker
could put one anywhere). A board must therefore never fold a body by its ``type`` alone:
the topic's last level decides the only types it may carry (:data:`TOPIC_TYPES`, built
from the catalogue), and the body must be what that type's JSON Schema says, strictly (an
integer is an integer, not ``"5"`` nor ``5.0``; an enum is one of its values). No number is
NaN or infinite or beyond 2^53 (what a browser's page can hold exactly), a body is at most its
topic's limit long (:data:`~baccarat.messages.catalog.TOPIC_MAX_BYTES`, checked before it
is parsed) and :data:`MAX_DEPTH` deep, and a ``table`` field names the
topic's table. A body that is not is :class:`Refused`, with the reason; the board counts
it and goes on.

:func:`accept` is the terminal board's one check (``boards/feed.py``). The web board and
the pit console have its twin in ``boards/web/accept.js``, reading the same tables and
schemas from the generated ``boards/web/catalog.js`` (:func:`web_catalog`);
``tests/boards/test_accept.py`` fails when that file is not what the catalogue makes.
Regenerate it with ``python -m baccarat.boards.accept``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from baccarat.chain import split
from baccarat.errors import BaccaratError
from baccarat.messages.bodies import EdgeMessage, Message, adapter, type_name
from baccarat.messages.catalog import (
    MAX_BODY_BYTES,
    MAX_DEPTH,
    MESSAGE_TYPES,
    SCHEMA_TYPES,
    SURVEILLANCE_TOPICS,
    TOPIC_MAX_BYTES,
    parse_message,
    rendered_schemas,
    too_large,
)
from baccarat.messages.limits import LimitsError, LimitsMessage, parse_limits

MAX_BYTES: Final = MAX_BODY_BYTES
"""The largest body a board takes on any topic; each topic has its own limit, at most this
(the catalogue's :data:`~baccarat.messages.catalog.TOPIC_MAX_BYTES`)."""
SAFE_INTEGER: Final = 2**53 - 1
"""The largest magnitude of a number in a body: a browser holds every integer up to it."""

STATUS_TYPE: Final = "status"
"""The controller's retained ``status`` body (``controller/publisher.py``)."""
FAULT_TYPE: Final = "fault"
"""The daemon's journal fault (``controller/faults.py``), on ``alarm`` and ``fault``."""
STATUS_STATES: Final = ("online", "offline")

STATUS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "schema": {"type": "integer"},
        "type": {"const": STATUS_TYPE, "type": "string"},
        "state": {"enum": list(STATUS_STATES), "type": "string"},
        "table": {"type": "string"},
        "version": {"type": "string"},
        "fault": {"type": "string"},
        "key": {"type": "string"},
    },
    "required": ["type", "state"],
}
"""The ``status`` body as far as a board reads it (it has no published schema)."""
FAULT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "schema": {"type": "integer"},
        "type": {"const": FAULT_TYPE, "type": "string"},
        "ts": {"type": ["number", "null"]},
        "kind": {"type": "string"},
        "article": {"type": "string"},
        "correctable": {"type": "boolean"},
        "corrections": {"type": "array"},
        "shoe": {"type": ["integer", "null"]},
        "round": {"type": ["integer", "null"]},
        "card": {"type": ["string", "null"]},
        "text": {"type": "string"},
        "count": {"type": "integer"},
        "cards": {"type": "array"},
        "lasting": {"type": "boolean"},
        "table": {"type": "string"},
    },
    "required": ["type", "kind", "text"],
}
"""The journal fault's body as far as a board reads it (nothing yet: it is let through)."""


def _topic_types() -> dict[str, tuple[str, ...]]:
    topics: dict[str, list[str]] = {}
    for cls in SCHEMA_TYPES:
        topics.setdefault(cls.topic, []).append(type_name(cls))
    topics[STATUS_TYPE] = [STATUS_TYPE]
    topics["alarm"].append(FAULT_TYPE)
    topics[FAULT_TYPE] = [FAULT_TYPE]
    return {topic: tuple(names) for topic, names in sorted(topics.items())}


TOPIC_TYPES: Final[Mapping[str, tuple[str, ...]]] = _topic_types()
"""A table topic's last level -> the only ``type`` values a body on it may have."""
MESSAGE_NAMES: Final = frozenset(type_name(cls) for cls in MESSAGE_TYPES)
BOARD_TOPICS: Final = tuple(topic for topic in TOPIC_TYPES if topic not in SURVEILLANCE_TOPICS)
"""What a players' board subscribes to, topic by topic: everything of its table but the
surveillance topics (``edge``), which a subscription to ``{table}/#`` would bring."""


def skipped(kind: str) -> bool:
    """A topic under the table that boards do not read: commands and their replies."""
    return kind.startswith(("cmd/", "reply/")) or kind == "reply"


@dataclass(frozen=True, slots=True)
class Refused:
    """A body the board must not fold; ``reason`` says why (ASCII, short)."""

    reason: str


@dataclass(frozen=True, slots=True)
class ControllerStatus:
    """The controller's retained status: ``online`` or ``offline``."""

    state: str


@dataclass(frozen=True, slots=True)
class Fault:
    """The daemon's journal fault: a valid body the board does not draw (status says offline)."""

    text: str


Accepted = Message | LimitsMessage | EdgeMessage | ControllerStatus | Fault


class _RefusedError(BaccaratError, ValueError):
    """Raised inside the check, returned as :class:`Refused`."""


def accept(kind: str, payload: bytes, table: str) -> Accepted | Refused:
    """The body of ``payload`` on ``{prefix}/{table}/{kind}`` checked, or :class:`Refused`."""
    try:
        return _accept(kind, payload, table)
    except _RefusedError as exc:
        return Refused(str(exc))
    except Exception as exc:  # a body must never stop the board: a bug here is a refusal
        return Refused(_shown(f"unreadable: {type(exc).__name__}: {exc}", 120))


def _accept(kind: str, payload: bytes, table: str) -> Accepted:
    allowed = TOPIC_TYPES.get(kind)
    if allowed is None:
        raise _RefusedError(f"unknown topic {_shown(kind)}")
    size = too_large(kind, len(payload))
    if size is not None:
        raise _RefusedError(size)
    if kind == STATUS_TYPE and payload.strip() in (b"online", b"offline"):
        return ControllerStatus(payload.strip().decode())  # a plain status, as tests send
    payload, _ = split(payload)  # the chain member (docs/record.md): not the engine's body
    body = _decoded(payload)
    name = body.get("type")
    if not isinstance(name, str) or name not in allowed:
        raise _RefusedError(f"a {_shown(name)} body on a {kind} topic")
    if "table" in body and body["table"] != table:
        raise _RefusedError(f"a body of table {_shown(body['table'])} on {table}'s topic")
    if name == STATUS_TYPE:
        _check_schema(body, STATUS_SCHEMA)
        return ControllerStatus(str(body["state"]))
    if name == FAULT_TYPE:
        _check_schema(body, FAULT_SCHEMA)
        return Fault(str(body["text"]))
    if name == "limits":
        try:
            return parse_limits(payload, strict=True)
        except LimitsError as exc:
            raise _RefusedError(_shown(str(exc), 160)) from None
    try:
        if name == "edge":
            edge: EdgeMessage = adapter(EdgeMessage).validate_json(payload, strict=True)
            return edge
        message = parse_message(payload, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "body"
        raise _RefusedError(f"{name}: {where}: {_shown(first['msg'], 100)}") from None
    return message


def _decoded(payload: bytes) -> dict[str, Any]:
    try:
        body = json.loads(payload.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise _RefusedError("not UTF-8") from None
    except RecursionError:
        raise _RefusedError(f"nested deeper than the {MAX_DEPTH} allowed") from None
    except ValueError as exc:  # JSONDecodeError, too many digits, NaN
        raise _RefusedError(_shown(f"not JSON: {exc}", 100)) from None
    if not isinstance(body, dict):
        raise _RefusedError("not a JSON object")
    _check_values(body)
    return body


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _check_values(body: dict[str, Any]) -> None:
    """Nesting at most MAX_DEPTH, every number finite and within SAFE_INTEGER."""
    stack: list[tuple[object, int]] = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                raise _RefusedError(f"nested deeper than the {MAX_DEPTH} allowed")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int | float) and not abs(value) <= SAFE_INTEGER:  # NaN too
            raise _RefusedError(f"number {_shown(value)} is out of range")


def _check_schema(body: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """The flat schemas above: required fields, and each known field's type or value."""
    for field in schema["required"]:
        if field not in body:
            raise _RefusedError(f"{body['type']}: no {field}")
    for field, rule in schema["properties"].items():
        if field not in body:
            continue
        value = body[field]
        wanted = rule["type"] if isinstance(rule["type"], list) else [rule["type"]]
        if not any(_is(value, kind) for kind in wanted):
            raise _RefusedError(f"{body['type']}: {field} is not {' or '.join(wanted)}")
        if "enum" in rule and value not in rule["enum"]:
            values = ", ".join(rule["enum"])
            raise _RefusedError(f"{body['type']}: {field} {_shown(value)} is not one of {values}")
        if "const" in rule and value != rule["const"]:
            raise _RefusedError(f"{body['type']}: {field} is not {rule['const']}")


_KINDS: Final[Mapping[str, tuple[type, ...]]] = {
    "integer": (int,), "number": (int, float), "string": (str,), "boolean": (bool,),
    "null": (type(None),), "array": (list,), "object": (dict,),
}


def _is(value: object, kind: str) -> bool:
    """``value`` decoded from JSON is of the JSON Schema ``kind``."""
    if isinstance(value, bool) and kind != "boolean":
        return False
    return isinstance(value, _KINDS[kind])


def _shown(value: object, limit: int = 40) -> str:
    text = value if isinstance(value, str) and value.isascii() else ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the web pages' copy ----------------------------------------------------------------

WEB_CATALOG: Final = Path(__file__).with_name("web") / "catalog.js"


def web_schemas() -> dict[str, dict[str, Any]]:
    """Every type's JSON Schema by its ``type`` name, as the web pages check bodies."""
    schemas = {
        name.removesuffix(".schema.json"): _lean(json.loads(text))
        for name, text in rendered_schemas().items()
    }
    schemas[STATUS_TYPE] = STATUS_SCHEMA
    schemas[FAULT_TYPE] = FAULT_SCHEMA
    return dict(sorted(schemas.items()))


def _lean(schema: Any) -> Any:
    """A schema without the words for people (``title``, ``description``, ``$id``)."""
    if isinstance(schema, list):
        return [_lean(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "description", "$id", "default"):
            continue
        if key in ("properties", "$defs"):  # names, each a schema
            lean[key] = {name: _lean(part) for name, part in value.items()}
        elif key in ("const", "enum"):
            lean[key] = value
        else:
            lean[key] = _lean(value)
    return lean


def web_catalog() -> str:
    """The text of ``boards/web/catalog.js``: the topic table, limits and schemas."""
    facts = {
        "MAX_BYTES": MAX_BYTES,
        "MAX_DEPTH": MAX_DEPTH,
        "TOPIC_MAX_BYTES": TOPIC_MAX_BYTES,
        "SAFE_INTEGER": SAFE_INTEGER,
        "TOPIC_TYPES": TOPIC_TYPES,
        "MESSAGE_TYPES": sorted(MESSAGE_NAMES),
        "BOARD_TOPICS": list(BOARD_TOPICS),
        "SCHEMAS": web_schemas(),
    }
    lines = [
        "// Generated by `python -m baccarat.boards.accept` from the catalogue",
        "// (src/baccarat/boards/accept.py, messages/catalog.py): do not edit by hand.",
        "// tests/boards/test_accept.py fails when this file is not what the catalogue makes.",
        "",
    ]
    for name, value in facts.items():
        text = json.dumps(value, indent=1, sort_keys=True)
        lines.append(f"export const {name} = {text};")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    WEB_CATALOG.write_text(web_catalog(), encoding="utf-8")
    print(f"wrote {WEB_CATALOG}")
