"""Operator commands: JSON bodies on ``{prefix}/{table}/cmd/{name}``, and their replies.

Each body is validated by a pydantic model; a valid one becomes one engine input. Who may
send commands is the broker's business (ACLs: only the pit's account may write ``cmd/#``).
Every command, good or bad, is answered on ``{prefix}/{table}/reply`` (or the MQTT 5
response topic when the request names one) with ``ok`` or a specific error. A malformed or
refused command changes nothing.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from baccarat.controller.engine.inputs import (
    AcceptAsBurn,
    Burn,
    Declare,
    Demo,
    EndShoe,
    Exposed,
    Input,
    NewShoe,
    OpenRound,
    Reveal,
    VoidRound,
)
from baccarat.errors import BaccaratError
from baccarat.messages.bodies import SCHEMA_VERSION
from baccarat.rules.tableau import Winner

RequestId = str | int | None


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: RequestId = Field(default=None, description="Echoed in the reply, to match them.")


class _Plain(_Command):
    """A command with no arguments."""


class VoidCommand(_Command):
    """``void``: the round is void (Art. 10)."""

    reason: str = Field(default="operator", max_length=200, pattern=r"^[^#\r\n]*\S[^#\r\n]*$")


class BurnCommand(_Command):
    """``burn``: burn cards before the next round (Art. 8)."""

    count: int = Field(default=1, ge=1, le=60)


class DeclareCommand(_Command):
    """``declare``: the dealer's result, checked against the cards."""

    winner: Winner


class ShoeCommand(_Command):
    """``shoe``: a new shoe (Art. 2.1)."""

    decks: int | None = Field(default=None, ge=1, le=12)


class DemoCommand(_Command):
    """``demo``: demonstration rounds on or off (Art. 2.2)."""

    on: bool


COMMANDS: dict[str, type[_Command]] = {
    "open": _Plain,
    "reveal": _Plain,
    "void": VoidCommand,
    "accept_as_burn": _Plain,
    "burn": BurnCommand,
    "declare": DeclareCommand,
    "exposed": _Plain,
    "shoe": ShoeCommand,
    "end": _Plain,
    "demo": DemoCommand,
}


class Reply(BaseModel):
    """The answer to one command."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    schema_version: int = Field(default=SCHEMA_VERSION, alias="schema")
    type: Literal["reply"] = "reply"
    command: str
    id: RequestId = None
    ok: bool
    error: str | None = None

    def to_json(self) -> str:
        """The published body."""
        return self.model_dump_json(by_alias=True)


class CommandError(BaccaratError, ValueError):
    """A command that is not understood; the text says why."""

    def __init__(self, text: str, request_id: RequestId = None) -> None:
        super().__init__(text)
        self.request_id = request_id


def parse_command(name: str, body: bytes, ts: float | None = None) -> tuple[Input, RequestId]:
    """The engine input a command stands for, and its request id; or :class:`CommandError`."""
    model = COMMANDS.get(name)
    if model is None:
        known = ", ".join(COMMANDS)
        raise CommandError(f"unknown command {name!r}: known commands are {known}")
    data = _json_object(body)
    request_id = data.get("id") if isinstance(data.get("id"), str | int) else None
    try:
        command = model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise CommandError(f"bad {name} command: {problems}", request_id) from None
    return _to_input(name, command, ts), command.id


def _json_object(body: bytes) -> dict[str, Any]:
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CommandError(f"body must be a JSON object, not {type(data).__name__}")
    return data


def _to_input(name: str, command: _Command, ts: float | None) -> Input:
    if isinstance(command, VoidCommand):
        return VoidRound(reason=command.reason, ts=ts)
    if isinstance(command, BurnCommand):
        return Burn(count=command.count, ts=ts)
    if isinstance(command, DeclareCommand):
        return Declare(winner=command.winner, ts=ts)
    if isinstance(command, ShoeCommand):
        return NewShoe(decks=command.decks, ts=ts)
    if isinstance(command, DemoCommand):
        return Demo(on=command.on, ts=ts)
    plain: dict[str, type[OpenRound | Reveal | AcceptAsBurn | Exposed | EndShoe]] = {
        "open": OpenRound,
        "reveal": Reveal,
        "accept_as_burn": AcceptAsBurn,
        "exposed": Exposed,
        "end": EndShoe,
    }
    return plain[name](ts=ts)
