"""The catalogue of published messages: every type, and parsing a body back into its model."""

from __future__ import annotations

import json
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
