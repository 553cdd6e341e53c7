"""The catalogue of published messages: every type, and parsing a body back into its model."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Final, Union

from pydantic import Field, TypeAdapter

from baccarat.messages.bodies import (
    AlarmClearedMessage,
    AlarmMessage,
    AlarmsMessage,
    CardMessage,
    EdgeMessage,
    Message,
    RecallMessage,
    ResultMessage,
    RoundMessage,
    ShoeMessage,
    VoidMessage,
    json_schema,
    serializer,
    type_name,
)
from baccarat.messages.limits import LimitsMessage
from baccarat.messages.roads import RoadsMessage

MESSAGE_TYPES: Final[tuple[type[Message], ...]] = (
    CardMessage,
    ResultMessage,
    AlarmMessage,
    AlarmClearedMessage,
    AlarmsMessage,
    RoundMessage,
    VoidMessage,
    ShoeMessage,
    RoadsMessage,
    RecallMessage,
)
"""Every message model the controller publishes, in a stable order."""
RETAINED_TOPICS: Final = frozenset(cls.topic for cls in MESSAGE_TYPES if cls.retained)
"""The topics whose messages are retained (for whoever has only a topic to go by)."""
SCHEMA_TYPES: Final[tuple[type[Any], ...]] = (*MESSAGE_TYPES, EdgeMessage, LimitsMessage)
"""Every body with a JSON Schema: the engine's, the daemon's ``edge`` and the pit's
retained ``limits``."""
SURVEILLANCE_TOPICS: Final = frozenset({EdgeMessage.topic})
"""Topics for the house's eyes only, which players' boards never subscribe to: the live
edge says when a bet favours the bettor, and shown at the table it would invite the bet."""

MAX_DEPTH: Final = 16
"""The deepest nesting of arrays and objects a reader takes in any body (the schemas reach 6)."""
DAEMON_BODY_BYTES: Final[Mapping[str, int]] = {
    "status": 4096,  # the retained status, its last will: 120 bytes, a fault's text more
    "fault": 4096,  # the journal fault that stops the table (on ``alarm`` and ``fault``)
    "reply": 4096,  # the answer to a command: an id, ok, an error text
    "cmd": 4096,  # an operator's command (controller/commands.py)
}
"""The largest body of the topics whose bodies are not in :data:`SCHEMA_TYPES`."""


def _topic_max_bytes() -> dict[str, int]:
    limits = dict(DAEMON_BODY_BYTES)
    for cls in SCHEMA_TYPES:
        limits[cls.topic] = max(limits.get(cls.topic, 0), cls.max_bytes)
    return dict(sorted(limits.items()))


TOPIC_MAX_BYTES: Final[Mapping[str, int]] = _topic_max_bytes()
"""A table topic's last level -> the largest body a reader takes on it (each body class's
``max_bytes``: the largest a real shoe makes, with a margin). Every reader refuses a longer
body by its length, before parsing it; ``docs/limits.md`` says how they were measured."""
MAX_BODY_BYTES: Final = max(TOPIC_MAX_BYTES.values())
"""The largest body of any topic (``roads``)."""
PACKET_OVERHEAD: Final = 4096
"""Bytes of an MQTT PUBLISH beside its body: fixed header, topic, MQTT 5 properties."""
BROKER_MAX_PACKET: Final = MAX_BODY_BYTES + PACKET_OVERHEAD
"""The brokers' ``max_packet_size`` (examples/mosquitto/*.conf; a test compares them)."""
MEAN_BODY_BYTES: Final = 3072
"""The mean body of a real table's messages, roads included (1,694 bytes measured over
seeded 8-deck shoes, 2,409 over 12-deck ones: ``bench/body_sizes.py``): what a broker's
queue of N messages holds, N times this."""


def queue_bytes(messages: int) -> int:
    """A broker's ``max_queued_bytes`` for a queue of ``messages`` of a real table's messages.

    examples/mosquitto/*.conf set it beside their ``max_queued_messages`` (a test compares).
    """
    return messages * MEAN_BODY_BYTES


def too_large(topic: str, size: int) -> str | None:
    """Why a body of ``size`` bytes on a topic whose last level is ``topic`` is refused, or None.

    An unknown topic is held to the largest limit (its reader refuses it by its topic).
    """
    most = TOPIC_MAX_BYTES.get(topic, MAX_BODY_BYTES)
    if size > most:
        return f"body of {size} bytes, over the {most} a {topic} body may have"
    return None


_ADAPTER: Final[TypeAdapter[Any]] = TypeAdapter(
    Annotated[Union[MESSAGE_TYPES], Field(discriminator="type")]  # type: ignore[arg-type]  # noqa: UP007
)


def make_serializers() -> None:
    """Build every message type's serializer now rather than on its first message.

    The daemon calls this at start, so that the first card of the day reaches the boards
    as soon as any other.
    """
    for cls in MESSAGE_TYPES:
        serializer(cls)


def parse_message(body: str | bytes, *, strict: bool | None = None) -> Message:
    """Parse a published JSON body back into its message model (by its ``type``).

    ``strict`` true: every field exactly of its schema's JSON type (no ``"5"`` for an integer,
    no ``5.0``, no ``1`` for a boolean), as a board checks bodies from the broker.
    """
    message: Message = _ADAPTER.validate_json(body, strict=strict)
    return message


def rendered_schemas() -> dict[str, str]:
    """File name -> JSON Schema text for each message type."""
    out: dict[str, str] = {}
    for cls in SCHEMA_TYPES:
        schema = json_schema(cls)
        name = type_name(cls)
        schema["$id"] = f"baccarat/{name}.schema.json"
        out[f"{name}.schema.json"] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out
