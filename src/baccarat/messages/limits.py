"""A table's betting limits: the retained ``{prefix}/{table}/limits`` body.

The pit console publishes it (an operator's account: who may write it is the broker's
ACL), retained, so that every board shows the limits as soon as it connects. It is not an
engine message: it has no ``seq``, and the controller neither sends nor reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Final, Literal

from pydantic import ConfigDict, Field, ValidationError

from baccarat.errors import BaccaratError
from baccarat.messages.bodies import MESSAGE_CONFIG, SCHEMA_VERSION, adapter, serializer

MAX_STAKE: Final = 10**12
"""The largest figure a limit may have, in the table's currency units."""
BETS: Final = ("banker", "player", "tie", "pairs")
"""The bets a limits body sets, in the order boards show them."""


class LimitsError(BaccaratError, ValueError):
    """A limits body that is not one; the text says which field and why."""


@dataclass(slots=True, kw_only=True)
class BetLimit:
    """The smallest and the largest stake on one bet, in the table's currency units."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid", strict=True)

    min: Annotated[int, Field(ge=0, le=MAX_STAKE)]
    max: Annotated[int, Field(ge=1, le=MAX_STAKE)]

    def __post_init__(self) -> None:
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")


@dataclass(slots=True, kw_only=True)
class LimitsMessage:
    """The limits of one table, per bet (retained on ``limits``)."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG
    topic: ClassVar[str] = "limits"
    max_bytes: ClassVar[int] = 1024  # every field at its longest: 512

    schema_version: Annotated[int, Field(alias="schema")] = SCHEMA_VERSION
    type: Literal["limits"] = "limits"
    table: Annotated[str, Field(min_length=1, max_length=64)]
    banker: BetLimit
    player: BetLimit
    tie: BetLimit
    pairs: Annotated[BetLimit, Field(description="Banker pair and player pair, each.")]
    currency: Annotated[
        str | None, Field(max_length=8, description="Currency code, e.g. HKD; null: unsaid.")
    ] = None
    by: Annotated[
        str | None, Field(max_length=64, description="The operator who set them.")
    ] = None
    ts: Annotated[float | None, Field(description="When they were set (Unix seconds).")] = None

    def to_bytes(self) -> bytes:
        """The published body, compact JSON with the schema's field names."""
        return serializer(type(self)).to_json(self, by_alias=True)


def parse_limits(body: str | bytes, *, strict: bool | None = None) -> LimitsMessage:
    """A ``limits`` body parsed, or :class:`LimitsError` saying what is wrong with it.

    ``strict`` true: every field exactly of its schema's JSON type, as a board checks bodies.
    """
    try:
        limits: LimitsMessage = adapter(LimitsMessage).validate_json(body, strict=strict)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise LimitsError(f"bad limits body: {problems}") from None
    return limits
