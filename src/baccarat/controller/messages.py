"""The messages the engine produces: the JSON bodies published on MQTT and printed by replay.

Every message has ``schema`` (the version of these bodies), ``type`` and ``seq`` (up by one
per message of one engine, so a subscriber can drop duplicates and notice gaps). Board
makers read the JSON Schemas exported by ``baccarat schemas``, not this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SCHEMA_VERSION = 1

PositionName = Literal["P1", "B1", "P2", "B2", "P3", "B3", "burn"]
WinnerName = Literal["banker", "player", "tie"]
AlarmKind = Literal[
    "extra_card",
    "missing_card",
    "card_before_open",
    "foreign_card",
    "unreadable_card",
    "result_mismatch",
    "burn_incomplete",
    "shoe_closed",
    "demo_limit",
    "link_down",
    "device_fault",
    "bad_data",
    "journal_damaged",
]
Correction = Literal["accept_as_burn", "void", "deal", "declare", "burn", "open"]
ShoePhase = Literal["burning", "ready", "in_round", "closed"]


_M = TypeVar("_M", bound=BaseModel)
_Template = tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]
_TEMPLATES: dict[type[BaseModel], _Template] = {}
_new = object.__new__
_set = object.__setattr__


def trusted(cls: type[_M], **values: Any) -> _M:
    """Build a model from values the controller made itself, without validating them.

    What ``model_construct`` does for these models (no validators, aliases only for
    dumping), at a third of its cost and a third of validation's: the engine's hot path.
    Field order and defaults are the model's, so the JSON is the same as a validated
    model's. Every message type the engine emits is parsed back through
    :func:`parse_message` by the tests, which is what keeps this honest.
    """
    return trusted_from(cls, values)


def trusted_from(cls: type[_M], values: dict[str, Any]) -> _M:
    """:func:`trusted` with the values in a dict: no keyword arguments to pack and unpack."""
    entry = _TEMPLATES.get(cls)
    if entry is None:
        entry = _TEMPLATES[cls] = _template(cls)
    template, factories = entry
    data = template.copy()
    for name, factory in factories:
        data[name] = factory()
    data.update(values)
    model = _new(cls)
    _set(model, "__dict__", data)
    _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def _template(cls: type[BaseModel]) -> _Template:
    template: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        template[name] = None if info.is_required() else info.get_default()
        if info.default_factory is not None:
            factories.append((name, info.default_factory))  # type: ignore[arg-type]
    return template, tuple(factories)


class Message(BaseModel):
    """Fields every message carries."""

    model_config = ConfigDict(
        frozen=True, populate_by_name=True, extra="forbid", defer_build=True
    )
    topic: ClassVar[str] = ""

    schema_version: int = Field(default=SCHEMA_VERSION, alias="schema")
    seq: int = Field(description="Up by one per message of one table; drop duplicates by it.")
    ts: float | None = Field(
        default=None, description="Time of the input that caused it (Unix seconds), if known."
    )

    def to_json(self) -> str:
        """The published body: compact JSON with the field names of the schema."""
        return self.model_dump_json(by_alias=True)


class CardMessage(Message):
    """A card out of the shoe, assigned to a position (Art. 7) or to the burn pile."""

    topic: ClassVar[str] = "card"
    type: Literal["card"] = "card"
    shoe: int
    round: int | None = Field(description="Round number in the shoe; null for shoe burns.")
    position: PositionName
    card: str | None = Field(description="Canonical code such as TS; null if unreadable.")
    face_up: bool = Field(default=False, description="A burn card that is shown (Art. 2.1).")
    player_total: int | None = None
    banker_total: int | None = None
    demo: bool = False


class HandResult(BaseModel):
    """One hand at the end of a round (Art. 11-13)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cards: list[str]
    total: int
    natural: bool
    pair: bool


class ResultMessage(Message):
    """The outcome of a completed round. Never published before the rules allow it."""

    topic: ClassVar[str] = "result"
    type: Literal["result"] = "result"
    shoe: int
    round: int
    round_id: str
    winner: WinnerName
    player: HandResult
    banker: HandResult
    demo: bool = False
    exposed: list[str] = Field(default_factory=list, description="Positions exposed (Art. 4).")


class AlarmMessage(Message):
    """A misdeal (Art. 10) or another deviation, raised at the input that proves it."""

    topic: ClassVar[str] = "alarm"
    type: Literal["alarm"] = "alarm"
    id: int = Field(description="Alarm number, unique within the table's engine.")
    kind: AlarmKind
    article: str = Field(description="The article of the rules that the deviation breaks.")
    correctable: bool
    corrections: list[Correction]
    shoe: int | None
    round: int | None
    card: str | None = None
    text: str


class AlarmClearedMessage(Message):
    """An alarm settled by a correction (or by the card it was waiting for)."""

    topic: ClassVar[str] = "alarm"
    type: Literal["alarm_cleared"] = "alarm_cleared"
    id: int
    kind: AlarmKind
    by: str = Field(description="What settled it: accept_as_burn, void, deal, declare, ...")
    shoe: int | None
    round: int | None


class RoundMessage(Message):
    """The live round's state: opened, complete, void (retained on the board's topic)."""

    topic: ClassVar[str] = "round"
    type: Literal["round"] = "round"
    shoe: int
    round: int
    round_id: str
    status: Literal["open", "complete", "void"]
    demo: bool = False
    next: str | None = Field(description="The position the next card must go to, or null.")


class VoidMessage(Message):
    """A round made void (Art. 10): no result, never counts, kept in the record."""

    topic: ClassVar[str] = "void"
    type: Literal["void"] = "void"
    shoe: int
    round: int
    round_id: str
    reason: str
    demo: bool = False


class ShoeMessage(Message):
    """The shoe's state: counts, phase, last-round flag."""

    topic: ClassVar[str] = "shoe"
    type: Literal["shoe"] = "shoe"
    shoe: int
    profile: str
    decks: int
    cards_dealt: int
    cards_burned: int
    cards_left: int
    burn_due: int = Field(description="Cards still to burn before a round may open.")
    phase: ShoePhase
    cut_card: bool = Field(description="The cut card has come out.")
    last_round: bool = Field(description="The next or current round is the shoe's last.")
    rounds: int = Field(description="Rounds with a result, demo rounds excluded.")
    demo: bool = Field(description="Demo mode is on: the rounds opened now are demo rounds.")
    demo_rounds: int


class DealtCard(BaseModel):
    """One card of a round in dealing order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    position: PositionName
    card: str | None


class RecalledRound(BaseModel):
    """A finished round as game recall shows it: every card in dealing order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shoe: int
    round: int
    round_id: str
    status: Literal["result", "void"]
    winner: WinnerName | None
    player_total: int
    banker_total: int
    demo: bool
    cards: list[DealtCard]
    exposed: list[str]


class RecallMessage(Message):
    """Game recall: the last rounds, newest last (retained)."""

    topic: ClassVar[str] = "recall"
    type: Literal["recall"] = "recall"
    rounds: list[RecalledRound]


_ADAPTER: TypeAdapter[Any] | None = None


def message_types() -> tuple[type[Message], ...]:
    """Every message model the controller publishes, in a stable order."""
    from baccarat.controller.roads import RoadsMessage  # roads builds on this module

    return (
        CardMessage,
        ResultMessage,
        AlarmMessage,
        AlarmClearedMessage,
        RoundMessage,
        VoidMessage,
        ShoeMessage,
        RoadsMessage,
        RecallMessage,
    )


def parse_message(body: str | bytes) -> Message:
    """Parse a published JSON body back into its message model (by its ``type``)."""
    global _ADAPTER  # noqa: PLW0603 - built once, on first use, to avoid an import cycle
    if _ADAPTER is None:
        union = Union[message_types()]  # type: ignore[valid-type]  # noqa: UP007
        _ADAPTER = TypeAdapter(Annotated[union, Field(discriminator="type")])  # type: ignore[arg-type]
    message: Message = _ADAPTER.validate_json(body)
    return message
