"""Operator commands: JSON bodies on ``{prefix}/{table}/cmd/{name}``, and their replies.

Each body is validated by a pydantic model in strict mode (``true`` is no number, ``"1"``
no count); a valid one becomes one engine input. Who may send commands is the broker's
business (ACLs: only the pit's account may write ``cmd/#``). Every command, good or bad,
is answered on ``{prefix}/{table}/reply`` (or the MQTT 5 response topic when the request
names one) with ``ok`` or a specific error. A malformed or refused command changes nothing.

Limits: a body has at most :data:`MAX_BODY` bytes and is a JSON object (``{}`` for a
command without arguments; an empty body is refused, as it is how MQTT clears a retained
message); an ``id`` is a text of at most :data:`MAX_ID_LENGTH` printable characters or a
whole number of at most :data:`MAX_ID_NUMBER`; a number has at most :data:`MAX_DIGITS`
digits.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from baccarat.controller.engine.engine import HANDLERS
from baccarat.controller.engine.inputs import (
    AcceptAsBurn,
    AnnounceBurn,
    Burn,
    Declare,
    Demo,
    EndShoe,
    Exposed,
    Input,
    InputError,
    NewShoe,
    OpenRound,
    Reveal,
    VoidRound,
    check_origin,
    unrecordable,
)
from baccarat.errors import BaccaratError
from baccarat.messages.bodies import SCHEMA_VERSION
from baccarat.messages.catalog import DAEMON_BODY_BYTES
from baccarat.rules.profiles import MAX_DECKS, MIN_REAL_DECKS
from baccarat.rules.tableau import Winner

MAX_BODY: Final = DAEMON_BODY_BYTES["cmd"]
"""Bytes a command body may have (the catalogue's figure); a longer one is refused unread."""
MAX_ID_LENGTH: Final = 64
"""Characters a text ``id`` may have."""
MAX_ID_NUMBER: Final = 2**53 - 1
"""The largest whole-number ``id`` (and the smallest, negated): every JSON reader holds it."""
MAX_DIGITS: Final = 20
"""Digits a number in a body may have (past 4300, Python's ``int`` itself would raise)."""
SHOWN: Final = 40
"""Characters of a name from the request (a key, an unknown command) that an error shows."""

RequestId = str | int | None


class _Command(BaseModel):
    """The arguments of a command (its ``id`` is checked apart, to be echoed in errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _Plain(_Command):
    """A command with no arguments."""


class VoidCommand(_Command):
    """``void``: the round is void (Art. 10)."""

    reason: str = Field(default="operator", max_length=200)
    confirm: bool = Field(
        default=False,
        description="Required to void a round whose result was published: it leaves the roads.",
    )

    @field_validator("reason", mode="before")
    @classmethod
    def _recordable(cls, reason: object) -> object:
        problem = unrecordable(reason) if isinstance(reason, str) else None
        if problem is not None:
            raise ValueError(f"the journal cannot record this reason: {problem}")
        return reason


class AcceptAsBurnCommand(_Command):
    """``accept_as_burn``: a card an alarm holds aside goes to the discard (Art. 10)."""

    alarm: int | None = Field(
        default=None, ge=1, le=2**53 - 1,
        description="The alarm whose oldest card it is; without it, the oldest card held.",
    )


class BurnCommand(_Command):
    """``burn``: burn cards before the next round (Art. 8)."""

    count: int = Field(default=1, ge=1, le=60)


class DeclareCommand(_Command):
    """``declare``: the dealer's result, checked against the cards."""

    winner: Winner


class ShoeCommand(_Command):
    """``shoe``: a new shoe (Art. 2.1)."""

    decks: int | None = Field(default=None, ge=1, le=MAX_DECKS)


class DemoCommand(_Command):
    """``demo``: demonstration rounds on or off (Art. 2.2)."""

    on: bool


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One operator command: the model of its body and the engine input it becomes.

    Its name is the name of the engine's handler of that input (``engine/handlers.py``),
    which says what it does: one registry of what the table takes, by name.
    """

    model: type[_Command]
    make: Callable[[Any, float | None], Input]
    input: type[Input]
    """The engine input it becomes (its handler in the engine's registry)."""

    @property
    def description(self) -> str:
        """What the command does: its engine handler's one line."""
        return HANDLERS[self.input].description


COMMANDS: Final[dict[str, CommandSpec]] = {
    "open": CommandSpec(_Plain, lambda c, ts: OpenRound(ts=ts), OpenRound),
    "reveal": CommandSpec(_Plain, lambda c, ts: Reveal(ts=ts), Reveal),
    "void": CommandSpec(
        VoidCommand, lambda c, ts: VoidRound(reason=c.reason, confirm=c.confirm, ts=ts),
        VoidRound,
    ),
    "accept_as_burn": CommandSpec(
        AcceptAsBurnCommand, lambda c, ts: AcceptAsBurn(alarm=c.alarm, ts=ts), AcceptAsBurn
    ),
    "burn": CommandSpec(BurnCommand, lambda c, ts: Burn(count=c.count, ts=ts), Burn),
    "announce_burn": CommandSpec(_Plain, lambda c, ts: AnnounceBurn(ts=ts), AnnounceBurn),
    "declare": CommandSpec(
        DeclareCommand, lambda c, ts: Declare(winner=c.winner, ts=ts), Declare
    ),
    "exposed": CommandSpec(_Plain, lambda c, ts: Exposed(ts=ts), Exposed),
    "shoe": CommandSpec(ShoeCommand, lambda c, ts: NewShoe(decks=c.decks, ts=ts), NewShoe),
    "end": CommandSpec(_Plain, lambda c, ts: EndShoe(ts=ts), EndShoe),
    "demo": CommandSpec(DemoCommand, lambda c, ts: Demo(on=c.on, ts=ts), Demo),
}
"""Every operator command by name: the one list the MQTT topics, the dealer's buttons and
the pit console's buttons are checked against (tests/controller/test_command_registry.py).
Each input's replay notation starts with its command's name, which is the name of the
engine's handler of that input (checked here at import)."""

for _name, _spec in COMMANDS.items():
    if _spec.input not in HANDLERS or HANDLERS[_spec.input].name != _name:  # pragma: no cover
        raise ImportError(f"command {_name!r} is not the engine handler of {_spec.input}")

BUTTONS: Final[dict[str, tuple[str, dict[str, Any]] | None]] = {
    "open": ("open", {}),
    "reveal": ("reveal", {}),
    "void": ("void", {"reason": "dealer button"}),
    "burn": ("announce_burn", {}),  # the profile's round burn comes; Art. 8: the burn command
    "declare_banker": ("declare", {"winner": "banker"}),
    "declare_player": ("declare", {"winner": "player"}),
    "declare_tie": ("declare", {"winner": "tie"}),
}
"""Each dealer button (``drivers.events.BUTTONS``, with its wire code) as the command it
sends and that command's body; ``None``: a button that changes nothing."""


def button_input(button: str, ts: float | None) -> Input | None:
    """The input of a dealer's button, from ``button``; ``None`` for one that changes nothing.

    Raise ``KeyError`` for a button no command stands for.
    """
    sent = BUTTONS[button]
    if sent is None:
        return None
    name, body = sent
    spec = COMMANDS[name]
    return replace(spec.make(spec.model.model_validate(body), ts), origin="button")


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


def parse_command(
    name: str, body: bytes, ts: float | None = None, *, test_decks: bool = False
) -> tuple[Input, RequestId]:
    """The engine input a command stands for, and its request id; or :class:`CommandError`.

    ``test_decks`` (the configuration's ``allow_test_decks``) lets ``shoe`` ask for fewer
    than 6 decks, as it lets the profile.
    """
    spec = COMMANDS.get(name)
    if spec is None:
        known = ", ".join(COMMANDS)
        raise CommandError(f"unknown command {shown(name)}: known commands are {known}")
    data = _json_object(body)
    request_id = _request_id(data.pop("id", None))
    try:
        command = spec.model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(_field(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in exc.errors()
        )
        raise CommandError(f"bad {name} command: {problems}", request_id) from None
    if isinstance(command, ShoeCommand) and command.decks is not None:
        _check_decks(command.decks, test_decks, request_id)
    return spec.make(command, ts), request_id


def shown(text: str) -> str:
    """Text from a request (a key, an unknown command's name) quoted for an error, cut short."""
    return repr(text[:SHOWN]) + ("..." if len(text) > SHOWN else "")


def reply(name: str, request_id: RequestId = None, error: str | None = None) -> Reply:
    """The reply to command ``name``: ok without ``error``; an unknown long name cut short."""
    return Reply(command=name[:SHOWN], id=request_id, ok=error is None, error=error)


def _field(part: str | int) -> str:
    if isinstance(part, int) or (part.isidentifier() and len(part) <= SHOWN):
        return str(part)
    return shown(part)


def _json_object(body: bytes) -> dict[str, Any]:
    if len(body) > MAX_BODY:
        raise CommandError(f"body of {len(body)} bytes: a command has at most {MAX_BODY}")
    if not body.strip():
        raise CommandError(
            "empty body (how MQTT clears a retained message): send {} for no arguments"
        )
    try:
        data = json.loads(body, parse_int=_whole_number, parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"body is not JSON: {exc}") from None
    except RecursionError:
        raise CommandError("body is not JSON this controller reads: nested too deeply") from None
    if not isinstance(data, dict):
        raise CommandError(f"body must be a JSON object, not {type(data).__name__}")
    return data


def _whole_number(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise CommandError(f"a number of {digits} digits: at most {MAX_DIGITS}")
    return int(text)


def _no_constant(text: str) -> None:
    raise CommandError(f"body is not JSON: {text} is not a JSON value")


def _request_id(value: object) -> RequestId:
    """The request's ``id`` if it is one; :class:`CommandError` (echoing none) if not."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) <= MAX_ID_NUMBER:
            return value
    elif isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH and value.isprintable():
        return value
    raise CommandError(
        f"bad id: a text of 1 to {MAX_ID_LENGTH} printable characters or a whole number "
        f"up to {MAX_ID_NUMBER}, not {_kind_of(value)}"
    )


_JSON_TYPES: Final[dict[type, str]] = {
    list: "array", dict: "object", float: "number with a fraction"
}


def _kind_of(value: object) -> str:
    """What a bad id is, in a few words; never the id itself (it may be huge or unprintable)."""
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return f"a number of {len(str(abs(value)))} digits"
    if isinstance(value, str):
        printable = "printable" if value.isprintable() else "not all printable"
        return f"a text of {len(value)} character(s), {printable}"
    return f"a JSON {_JSON_TYPES.get(type(value), type(value).__name__)}"


def _check_decks(decks: int, test_decks: bool, request_id: RequestId) -> None:
    if decks < MIN_REAL_DECKS and not test_decks:
        raise CommandError(
            f"bad shoe command: decks: a real table's shoe holds {MIN_REAL_DECKS} to "
            f"{MAX_DECKS} decks, not {decks} (fewer only with allow_test_decks)",
            request_id,
        )


def command_origin(operator: str) -> str:
    """The origin of a command from the topic's operator level (``pit`` without one).

    The broker's ACL ties that level to the account that sent the command
    (examples/mosquitto/acl), so the origin names who really sent it.
    """
    if not operator:
        return "pit"
    try:
        return check_origin(f"pit/{operator}")
    except InputError:
        raise CommandError(
            f"bad operator {operator[:40]!r} in the topic: letters, digits, _ . @ -, at most 64"
        ) from None
