"""The messages the engine produces: the JSON bodies published on MQTT and printed by replay.

Every message has ``schema`` (the version of these bodies), ``type`` and ``seq`` (up by one
per message of one engine, so a subscriber can drop duplicates and notice gaps). Board
makers read the JSON Schemas exported by ``baccarat schemas``, not this file.

The messages and their parts are slotted dataclasses built by keyword; pydantic owns their
schema: it parses bodies into them (:func:`baccarat.messages.catalog.parse_message`),
writes their JSON (:meth:`Message.to_json`) and their JSON Schemas. Nothing changes a
message once it is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, TypeAdapter
from pydantic_core import SchemaSerializer

from baccarat.rules.alarm_kinds import SURVEILLANCE, AlarmKind
from baccarat.rules.edge import Bet
from baccarat.rules.tableau import Position, Winner

SCHEMA_VERSION = 1

SURVEILLANCE_KINDS: frozenset[AlarmKind] = SURVEILLANCE
"""Notices for the house's eyes only (the alarm table's ``surveillance`` rows)."""

Correction = Literal["accept_as_burn", "void", "deal", "declare", "burn", "open"]
ShoePhase = Literal["burning", "ready", "in_round", "closed"]

MESSAGE_CONFIG = ConfigDict(extra="forbid", populate_by_name=True)
"""What pydantic applies when it parses a body: unknown fields are an error."""


SERIALIZERS: dict[type[Any], SchemaSerializer] = {}
"""Each message type's JSON serializer, once built (by :func:`serializer`)."""


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def adapter(cls: type[Any]) -> TypeAdapter[Any]:
    """The pydantic ``TypeAdapter`` of a message type or of a part of one, kept once built."""
    found = _ADAPTERS.get(cls)
    if found is None:
        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


def serializer(cls: type[Any]) -> SchemaSerializer:
    """A message type's JSON serializer, built on first use and then kept.

    :func:`baccarat.messages.catalog.make_serializers` builds them all at start.
    """
    found = SERIALIZERS.get(cls)
    if found is None:
        found = SERIALIZERS[cls] = adapter(cls).serializer
    return found


def type_name(cls: type[Message]) -> str:
    """The ``type`` field's value of a message class, e.g. ``card``."""
    for f in fields(cls):
        if f.name == "type":
            return str(f.default)
    raise TypeError(f"{cls.__name__} has no type field")


def json_schema(cls: type[Message]) -> dict[str, Any]:
    """The JSON Schema of a message type's body, field names as published."""
    return adapter(cls).json_schema(by_alias=True, mode="serialization")


@dataclass(slots=True, kw_only=True)
class Message:
    """Fields every message carries."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG
    topic: ClassVar[str] = ""
    retained: ClassVar[bool] = False
    """It holds state: published retained, so a board that connects late sees it at once."""
    urgent: ClassVar[bool] = False
    """The pit must hear of it: sent past a message the broker refuses, not held behind it."""
    max_bytes: ClassVar[int] = 2048
    """The largest body of this type a reader takes: the largest a real shoe can make, with
    a margin (``bench/body_sizes.py`` measures them; ``docs/limits.md``). A longer body
    is refused by its length before it is parsed."""

    schema_version: Annotated[int, Field(alias="schema")] = SCHEMA_VERSION
    seq: Annotated[
        int, Field(description="Up by one per message of one table; drop duplicates by it.")
    ]
    ts: Annotated[
        float | None,
        Field(description="Time of the input that caused it (Unix seconds), if known."),
    ] = None

    def to_json(self) -> str:
        """The published body: compact JSON with the field names of the schema."""
        return self.to_bytes().decode()

    def to_bytes(self) -> bytes:
        """:meth:`to_json` encoded in UTF-8, as it goes on the wire."""
        return serializer(type(self)).to_json(self, by_alias=True)


@dataclass(slots=True, kw_only=True)
class CardMessage(Message):
    """A card out of the shoe, assigned to a position (Art. 7) or to the burn pile."""

    topic: ClassVar[str] = "card"
    max_bytes: ClassVar[int] = 1024  # measured 166
    type: Literal["card"] = "card"
    shoe: int
    round: Annotated[
        int | None, Field(description="Round number in the shoe; null for shoe burns.")
    ]
    position: Literal[Position, "burn"]
    card: Annotated[
        str | None, Field(description="Canonical code such as TS; null if unreadable.")
    ]
    face_up: Annotated[
        bool, Field(description="A burn card that is shown (Art. 2.1).")
    ] = False
    player_total: int | None = None
    banker_total: int | None = None
    demo: bool = False


@dataclass(slots=True, kw_only=True)
class HandResult:
    """One hand at the end of a round (Art. 11-13)."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    cards: list[str]
    total: int
    natural: bool
    pair: bool


def _absent(value: object) -> bool:
    """An optional field left out of the body: a profile without it sends what it always did."""
    return value is None


@dataclass(slots=True, kw_only=True)
class SideBetResults:
    """The side bets a round settled: each only where the table's profile deals it.

    EZ Baccarat's ``ez`` deals both.
    """

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    dragon7: Annotated[
        bool | None,
        Field(description="Dragon 7 won: Banker won with three cards totalling 7 (pays "
              "40:1 by default).", exclude_if=_absent),
    ] = None
    panda8: Annotated[
        bool | None,
        Field(description="Panda 8 won: Player won with three cards totalling 8 (pays 25:1 "
              "by default).", exclude_if=_absent),
    ] = None


@dataclass(slots=True, kw_only=True)
class ResultMessage(Message):
    """The outcome of a completed round. Never published before the rules allow it.

    ``side_bets`` and ``banker_push`` are present only where the table's profile has them
    (EZ Baccarat): every other profile's body is what it always was.
    """

    topic: ClassVar[str] = "result"
    type: Literal["result"] = "result"
    shoe: int
    round: int
    round_id: str
    winner: Winner
    player: HandResult
    banker: HandResult
    demo: bool = False
    exposed: Annotated[list[str], Field(description="Positions exposed (Art. 4).")] = field(
        default_factory=list
    )
    side_bets: Annotated[
        SideBetResults | None,
        Field(description="The side bets settled (profiles with side_bets only).",
              exclude_if=_absent),
    ] = None
    banker_push: Annotated[
        bool | None,
        Field(description="EZ Baccarat (commission-free) only: the Banker bet pushes, "
              "Banker having won with three cards totalling 7.", exclude_if=_absent),
    ] = None


@dataclass(slots=True, kw_only=True)
class AlarmMessage(Message):
    """A misdeal (Art. 10) or another deviation, raised at the input that proves it."""

    topic: ClassVar[str] = "alarm"
    urgent: ClassVar[bool] = True
    max_bytes: ClassVar[int] = 16384  # measured 245; one alarm holding a 12-deck shoe: 3.7 kB
    type: Literal["alarm"] = "alarm"
    id: Annotated[int, Field(description="Alarm number, unique within the table's engine.")]
    kind: AlarmKind
    article: Annotated[
        str, Field(description="The article of the rules that the deviation breaks.")
    ]
    correctable: bool
    corrections: list[Correction]
    shoe: int | None
    round: int | None
    card: str | None = None
    text: str
    count: Annotated[
        int,
        Field(
            description="Cards this alarm holds aside. More than one when it holds a "
            "round's cards at once (open_in_round), or on the retained alarms topic: cards "
            "of the same kind that came into a table the alarm already blocks are coalesced "
            "into it."
        ),
    ] = 1
    cards: Annotated[
        list[str | None],
        Field(description="The cards held aside, oldest first (null: unreadable)."),
    ] = field(default_factory=list)
    lasting: Annotated[
        bool,
        Field(
            description="Open until settled or cleared, and listed on the retained alarms "
            "topic meanwhile; false: a one-off notice that nothing clears."
        ),
    ] = False
    lost_first: Annotated[
        int | None,
        Field(
            description="journal_damaged after a start that found the journal behind what "
            "the table had made: the first seq of the messages whose inputs the journal "
            "lost (they may have been published); null otherwise."
        ),
    ] = None
    lost_last: Annotated[
        int | None,
        Field(
            description="The last seq of that range: this table never publishes a seq "
            "from lost_first to lost_last again, and numbering went on after lost_last."
        ),
    ] = None


@dataclass(slots=True, kw_only=True)
class AlarmsMessage(Message):
    """Every open alarm, oldest first (retained): what a screen that connects late needs.

    Sent whenever an alarm opens, changes or is settled. Each item is the ``alarm`` message
    that raised it (same ``seq``), with ``card``, ``text``, ``count`` and ``cards`` as they
    are now: an alarm that cards were coalesced into changes only here.
    """

    topic: ClassVar[str] = "alarms"
    retained: ClassVar[bool] = True
    urgent: ClassVar[bool] = True
    max_bytes: ClassVar[int] = 65536  # every open alarm, their held cards at most a shoe
    type: Literal["alarms"] = "alarms"
    alarms: list[AlarmMessage]


@dataclass(slots=True, kw_only=True)
class AlarmClearedMessage(Message):
    """An alarm settled by a correction (or by the card it was waiting for)."""

    topic: ClassVar[str] = "alarm"
    urgent: ClassVar[bool] = True
    type: Literal["alarm_cleared"] = "alarm_cleared"
    id: int
    kind: AlarmKind
    by: Annotated[
        str, Field(description="What settled it: accept_as_burn, void, deal, declare, ...")
    ]
    shoe: int | None
    round: int | None
    origin: Annotated[
        str | None,
        Field(description="Who gave the command: pit/<operator> (the broker account), pit, "
              "button (the dealer's, on the device); null: the device itself or the cards."),
    ] = None


@dataclass(slots=True, kw_only=True)
class RoundMessage(Message):
    """The live round's state: opened, complete, void (retained on the board's topic)."""

    topic: ClassVar[str] = "round"
    retained: ClassVar[bool] = True
    max_bytes: ClassVar[int] = 4096  # measured 357
    type: Literal["round"] = "round"
    shoe: int
    round: int
    round_id: str
    status: Literal["open", "complete", "void"]
    demo: bool = False
    next: Annotated[
        str | None,
        Field(description="Where the next card must go (a position or burn), or null."),
    ]
    cards: Annotated[
        list[DealtCard],
        Field(description="The round's cards shown so far, burns included, in dealing order."),
    ] = field(default_factory=list)
    player_total: Annotated[
        int | None, Field(description="Player's total of the cards shown; null before any.")
    ] = None
    banker_total: Annotated[
        int | None, Field(description="Banker's total of the cards shown; null before any.")
    ] = None


@dataclass(slots=True, kw_only=True)
class VoidMessage(Message):
    """A round made void (Art. 10): no result, never counts, kept in the record."""

    topic: ClassVar[str] = "void"
    type: Literal["void"] = "void"
    shoe: int
    round: int
    round_id: str
    reason: str
    demo: bool = False
    origin: Annotated[
        str | None,
        Field(description="Who gave the command: pit/<operator> (the broker account), pit, "
              "button (the dealer's, on the device); null: the device itself or the cards."),
    ] = None


@dataclass(slots=True, kw_only=True)
class ShoeMessage(Message):
    """The shoe's state: counts, phase, last-round flag."""

    topic: ClassVar[str] = "shoe"
    retained: ClassVar[bool] = True
    type: Literal["shoe"] = "shoe"
    shoe: int
    profile: str
    decks: int
    cards_dealt: int
    cards_burned: int
    cards_left: int
    burn_due: Annotated[int, Field(description="Cards still to burn before a round may open.")]
    phase: ShoePhase
    cut_card: Annotated[bool, Field(description="The cut card has come out.")]
    last_round: Annotated[
        bool, Field(description="The next or current round is the shoe's last.")
    ]
    rounds: Annotated[int, Field(description="Rounds with a result, demo rounds excluded.")]
    demo: Annotated[
        bool, Field(description="Demo mode is on: the rounds opened now are demo rounds.")
    ]
    demo_rounds: int


@dataclass(slots=True, kw_only=True)
class DealtCard:
    """One card of a round in dealing order."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    position: Literal[Position, "burn"]
    card: str | None


@dataclass(slots=True, kw_only=True)
class SettledAlarm:
    """An alarm of a round, how it was settled and by whom."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    id: int
    kind: AlarmKind
    by: str
    origin: Annotated[
        str | None,
        Field(description="Who gave the command: pit/<operator> (the broker account), pit, "
              "button (the dealer's, on the device); null: the device itself or the cards."),
    ] = None


@dataclass(slots=True, kw_only=True)
class RecalledRound:
    """A finished round as game recall shows it: every card in dealing order."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    shoe: int
    round: int
    round_id: str
    status: Literal["result", "void"]
    winner: Winner | None
    player_total: int
    banker_total: int
    demo: bool
    cards: list[DealtCard]
    exposed: list[str]
    settled: Annotated[
        list[SettledAlarm], Field(description="The round's alarms as they were settled.")
    ] = field(default_factory=list)
    voided_by: Annotated[
        str | None, Field(description="The origin of the void, for a void round.")
    ] = None


@dataclass(slots=True, kw_only=True)
class RecallMessage(Message):
    """Game recall: the last rounds, newest last (retained)."""

    topic: ClassVar[str] = "recall"
    retained: ClassVar[bool] = True
    max_bytes: ClassVar[int] = 16384  # measured 3,589: ten rounds
    type: Literal["recall"] = "recall"
    rounds: list[RecalledRound]


@dataclass(slots=True, kw_only=True)
class BetEdge:
    """One bet on the next round: its chance of winning and the house's edge on it."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    chance: float
    edge: Annotated[
        float,
        Field(description="The house's edge per unit staked (a push counts 0): negative when "
              "the cards left favour the bettor. Banker's commission included."),
    ]


@dataclass(slots=True, kw_only=True)
class EdgeMessage:
    """The exact odds of the next round on the cards left, after a card (retained).

    Made by the daemon's edge watch, not by the engine: it has no ``seq`` (the cards it was
    computed for are named instead) and players' boards never subscribe to it
    (:data:`~baccarat.messages.catalog.SURVEILLANCE_TOPICS`).
    """

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG
    topic: ClassVar[str] = "edge"
    retained: ClassVar[bool] = True
    max_bytes: ClassVar[int] = 2048
    """As :attr:`Message.max_bytes`."""

    schema_version: Annotated[int, Field(alias="schema")] = SCHEMA_VERSION
    type: Literal["edge"] = "edge"
    ts: Annotated[
        float | None,
        Field(description="Time of the input after which it was computed (Unix seconds)."),
    ] = None
    shoe: int
    round: Annotated[int, Field(description="The shoe's last round begun; 0 before the first.")]
    cards_out: Annotated[
        int,
        Field(description="Cards of the shoe known to be out (dealt, burned, held aside) "
              "when it was computed."),
    ]
    cards_left: Annotated[int, Field(description="Cards left in the shoe, as the engine counts.")]
    unread: Annotated[
        int,
        Field(description="Cards out that the shoe could not read: the odds take them as "
              "unknown, which is exact for what is known."),
    ] = 0
    banker: BetEdge
    player: BetEdge
    tie: BetEdge
    player_pair: BetEdge
    banker_pair: BetEdge
    dragon7: Annotated[
        BetEdge | None,
        Field(description="Dragon 7 (profiles that deal it only).", exclude_if=_absent),
    ] = None
    panda8: Annotated[
        BetEdge | None,
        Field(description="Panda 8 (profiles that deal it only).", exclude_if=_absent),
    ] = None
    over: Annotated[
        list[Bet],
        Field(description="The bets whose player edge is at or above the table's threshold."),
    ] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        """The published body, compact JSON with the schema's field names."""
        return serializer(type(self)).to_json(self, by_alias=True)
