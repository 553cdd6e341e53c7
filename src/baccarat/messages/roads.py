"""The roads message: the five roads, the ask rows and the shoe statistics, as published.

Only the data; ``baccarat.controller.engine.roads`` computes it and ``docs/roads.md``
states the rules with pictures. Coordinates are 0-based: ``col`` 0 is the leftmost column,
``row`` 0 the top row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Final, Literal

from pydantic import ConfigDict, Field

from baccarat.messages.bodies import MESSAGE_CONFIG, Message
from baccarat.rules.tableau import Winner

ROWS: Final = 6
"""Every road is drawn on a grid of 6 rows."""

Colour = Literal["red", "blue"]
Side = Literal["banker", "player"]
DerivedRoadName = Literal["big_eye_boy", "small_road", "cockroach_pig"]
DERIVED_ROADS: Final[tuple[tuple[DerivedRoadName, int], ...]] = (
    ("big_eye_boy", 1),
    ("small_road", 2),
    ("cockroach_pig", 3),
)
"""The derived roads and their ``k``: the big-road column each one compares with."""


# The parts of the roads message are slotted dataclasses like the messages themselves (see
# :mod:`baccarat.messages.bodies`). Cells are never changed once made; a tie on the big
# road replaces its cell.


@dataclass(slots=True, kw_only=True)
class BeadCell:
    """One result on the bead plate."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    col: int
    row: int
    round: Annotated[int, Field(description="Round number in the shoe.")]
    winner: Winner
    player_pair: bool
    banker_pair: bool
    natural: Annotated[bool, Field(description="Either hand had a natural 8 or 9.")]


@dataclass(slots=True, kw_only=True)
class BeadPlate:
    """Every result of the shoe, ties included, 6 rows, filled column by column."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    rows: int = ROWS
    width: Annotated[int, Field(description="Columns in use.")]
    cells: list[BeadCell]


@dataclass(slots=True, kw_only=True)
class BigRoadCell:
    """One banker or player result on the big road."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    col: Annotated[int, Field(description="Drawn column (dragon tails included).")]
    row: Annotated[int, Field(description="Drawn row, 0..5.")]
    logical_col: Annotated[int, Field(description="Index of its streak in ``columns``.")]
    logical_row: Annotated[int, Field(description="Position in its streak, 0-based; may exceed 5.")]
    round: Annotated[int, Field(description="The round that made the cell.")]
    winner: Side
    ties: Annotated[
        int, Field(description="Ties shown on the cell (a green slash, and a number if >1).")
    ]
    player_pair: bool
    banker_pair: bool
    natural: bool


@dataclass(slots=True, kw_only=True)
class BigRoadColumn:
    """A streak: one logical column of the big road, however long."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    winner: Side
    length: int


@dataclass(slots=True, kw_only=True)
class BigRoad:
    """Banker and player results, a new column whenever the winner changes."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    rows: int = ROWS
    width: Annotated[int, Field(description="Drawn columns in use.")]
    leading_ties: Annotated[
        int,
        Field(
            description="Ties before the first banker/player result; once that result exists "
            "they are already counted in the first cell's ``ties``."
        ),
    ]
    cells: list[BigRoadCell]
    columns: list[BigRoadColumn]


@dataclass(slots=True, kw_only=True)
class DerivedCell:
    """One mark of a derived road."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    col: Annotated[int, Field(description="Drawn column (dragon tails included).")]
    row: Annotated[int, Field(description="Drawn row, 0..5.")]
    logical_col: int
    logical_row: int
    colour: Colour
    round: Annotated[int, Field(description="The round whose big-road cell made the mark.")]


@dataclass(slots=True, kw_only=True)
class DerivedColumn:
    """A run of marks of one colour: one logical column of a derived road."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    colour: Colour
    length: int


@dataclass(slots=True, kw_only=True)
class DerivedRoad:
    """Big eye boy (k=1), small road (k=2) or cockroach pig (k=3)."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    k: int
    rows: int = ROWS
    width: Annotated[int, Field(description="Drawn columns in use.")]
    cells: list[DerivedCell]
    columns: list[DerivedColumn]


@dataclass(slots=True, kw_only=True)
class AskRow:
    """The marks the derived roads would add for one hypothetical next result."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    big_eye_boy: Colour | None
    small_road: Colour | None
    cockroach_pig: Colour | None


@dataclass(slots=True, kw_only=True)
class Ask:
    """The ask rows: what each derived road would show if the next result were ..."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    banker: AskRow
    player: AskRow


@dataclass(slots=True, kw_only=True)
class Streak:
    """A run of one winner (ties do not break it, as on the big road)."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    winner: Side
    length: int


@dataclass(slots=True, kw_only=True)
class ShoeStats:
    """Counts for the current shoe (void and demo rounds excluded)."""

    __pydantic_config__: ClassVar[ConfigDict] = MESSAGE_CONFIG

    rounds: Annotated[int, Field(description="Rounds with a result, ties included.")]
    banker: int
    player: int
    tie: int
    banker_pairs: int
    player_pairs: int
    naturals: Annotated[int, Field(description="Rounds where either hand had a natural.")]
    longest_banker_streak: int
    longest_player_streak: int
    current_streak: Streak | None
    cards_left: int


@dataclass(slots=True, kw_only=True)
class RoadsMessage(Message):
    """The five roads, the ask rows and the statistics of the current shoe (retained)."""

    topic: ClassVar[str] = "roads"
    retained: ClassVar[bool] = True
    max_bytes: ClassVar[int] = 128 * 1024  # measured 66,584 (12 decks); 156 rounds: 83 kB
    type: Literal["roads"] = "roads"
    shoe: int
    bead_plate: BeadPlate
    big_road: BigRoad
    big_eye_boy: DerivedRoad
    small_road: DerivedRoad
    cockroach_pig: DerivedRoad
    ask: Ask
    stats: ShoeStats
