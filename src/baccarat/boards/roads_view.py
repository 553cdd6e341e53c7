"""The roads drawn as text grids with rich: used by ``baccarat roads`` and the terminal board.

Cells, all on 6-row grids, the latest columns kept when the room is short:

* bead plate and big road, 3 characters a cell: a pair mark, the letter, a tie count.
  Letters ``B`` (red), ``P`` (blue), ``T`` (green, bead plate only). The pair mark is
  ``'`` for a banker pair (the top-left dot of a printed board), ``,`` for a player pair
  (the bottom-right dot), ``:`` for both. On the big road the third character is the
  number of ties on the cell (``+`` for more than 9); on the bead plate, when naturals are
  marked (the terminal board marks them), a yellow ``*`` for a round won or tied with a
  natural 8 or 9.
* derived roads, 1 character a cell: in colour, big eye boy ``○``, small road ``●``,
  cockroach pig ``╱`` in red or blue; without colour, ``r`` (red) and ``b`` (blue).

Empty cells are a dim ``·``.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.text import Text

from baccarat.messages.roads import (
    ROWS,
    AskRow,
    BeadCell,
    BeadPlate,
    BigRoad,
    BigRoadCell,
    Colour,
    DerivedRoad,
    RoadsMessage,
    ShoeStats,
)

WINNER_STYLE = {"banker": "bold red", "player": "bold blue", "tie": "bold green"}
COLOUR_STYLE = {"red": "red", "blue": "blue"}
DERIVED_SYMBOL = {"big_eye_boy": "○", "small_road": "●", "cockroach_pig": "╱"}
DERIVED_TITLE = {
    "big_eye_boy": "Big eye boy",
    "small_road": "Small road",
    "cockroach_pig": "Cockroach pig",
}
DERIVED_NAMES = ("big_eye_boy", "small_road", "cockroach_pig")
EMPTY_STYLE = "bright_black"
NATURAL_MARK = Text("*", style="bold yellow")
"""After the letter on the bead plate: the round had a natural (either hand 8 or 9)."""

Placed = tuple[int, int, Text]


def grid(cells: Iterable[Placed], width: int, cell_width: int, max_cols: int | None = None) -> Text:
    """A 6-line text grid of a road ``width`` columns wide.

    With ``max_cols``, exactly that many columns: the latest ones, or the road and empty
    columns after it.
    """
    first = 0 if max_cols is None else max(0, width - max_cols)
    shown = width if max_cols is None else max_cols
    rows: list[list[Text | None]] = [[None] * shown for _ in range(ROWS)]
    for col, row, text in cells:
        if col >= first:
            rows[row][col - first] = text
    empty = Text("·".center(cell_width), style=EMPTY_STYLE)
    lines = [Text("").join(_fit(cell, cell_width) or empty for cell in row) for row in rows]
    text = Text("\n").join(lines)
    text.no_wrap, text.overflow = True, "crop"
    return text


def _fit(cell: Text | None, cell_width: int) -> Text | None:
    if cell is None or cell.cell_len >= cell_width:
        return cell
    return Text.assemble(cell, " " * (cell_width - cell.cell_len))


def pair_mark(banker_pair: bool, player_pair: bool) -> Text:
    """``'`` banker pair, ``,`` player pair, ``:`` both, a space for none."""
    if banker_pair and player_pair:
        return Text(":", style="magenta")
    if banker_pair:
        return Text("'", style="red")
    if player_pair:
        return Text(",", style="blue")
    return Text(" ")


def bead_glyph(cell: BeadCell, *, naturals: bool = False) -> Text:
    """One bead-plate cell: pair mark, letter, and with ``naturals`` the natural mark."""
    letter = Text(cell.winner[0].upper(), style=WINNER_STYLE[cell.winner])
    mark = NATURAL_MARK if naturals and cell.natural else Text(" ")
    return Text.assemble(pair_mark(cell.banker_pair, cell.player_pair), letter, mark)


def tie_mark(ties: int) -> Text:
    """The tie count on a big-road cell: a green digit, ``+`` over 9, a space for none."""
    if ties == 0:
        return Text(" ")
    return Text(str(ties) if ties < 10 else "+", style="green")


def big_road_glyph(cell: BigRoadCell) -> Text:
    """One big-road cell: pair mark, letter, tie count."""
    letter = Text(cell.winner[0].upper(), style=WINNER_STYLE[cell.winner])
    return Text.assemble(pair_mark(cell.banker_pair, cell.player_pair), letter, tie_mark(cell.ties))


def derived_glyph(name: str, colour: Colour, coloured: bool) -> Text:
    """One derived-road mark: the road's symbol in colour, or ``r``/``b`` without colour."""
    symbol = DERIVED_SYMBOL[name] if coloured else colour[0]
    return Text(symbol, style=COLOUR_STYLE[colour])


def bead_plate_grid(
    plate: BeadPlate, max_cols: int | None = None, *, naturals: bool = False
) -> Text:
    """The bead plate as a 6-line grid; ``naturals`` marks the rounds with a natural."""
    cells = ((c.col, c.row, bead_glyph(c, naturals=naturals)) for c in plate.cells)
    return grid(cells, plate.width, 3, max_cols)


def big_road_grid(road: BigRoad, max_cols: int | None = None) -> Text:
    """The big road as a 6-line grid, dragon tails as drawn."""
    cells = ((c.col, c.row, big_road_glyph(c)) for c in road.cells)
    return grid(cells, road.width, 3, max_cols)


def derived_grid(
    name: str,
    road: DerivedRoad,
    max_cols: int | None = None,
    *,
    coloured: bool = True,
    cell_width: int = 1,
) -> Text:
    """A derived road as a 6-line grid, ``cell_width`` characters a cell."""
    cells = ((c.col, c.row, derived_glyph(name, c.colour, coloured)) for c in road.cells)
    return grid(cells, road.width, cell_width, max_cols)


def ask_marks(row: AskRow, *, coloured: bool = True) -> Text:
    """The three marks of one ask row, ``·`` where a road adds none."""
    parts = []
    for name in DERIVED_NAMES:
        colour: Colour | None = getattr(row, name)
        if colour is None:
            parts.append(Text("·", style=EMPTY_STYLE))
        else:
            parts.append(derived_glyph(name, colour, coloured))
    return Text(" ").join(parts)


def ask_line(message: RoadsMessage, *, coloured: bool = True) -> Text:
    """``Ask B: ○ ● ╱  P: ○ ● ╱``: the marks a next banker or player would add."""
    return Text.assemble(
        "Ask ",
        ("B", WINNER_STYLE["banker"]),
        ": ",
        ask_marks(message.ask.banker, coloured=coloured),
        "  ",
        ("P", WINNER_STYLE["player"]),
        ": ",
        ask_marks(message.ask.player, coloured=coloured),
    )


def stats_line(stats: ShoeStats) -> Text:
    """The shoe statistics on one line."""
    return Text.assemble(
        f"Rounds {stats.rounds}  ",
        ("B", WINNER_STYLE["banker"]),
        f" {stats.banker}  ",
        ("P", WINNER_STYLE["player"]),
        f" {stats.player}  ",
        ("T", WINNER_STYLE["tie"]),
        f" {stats.tie}  ",
        f"B pair {stats.banker_pairs}  P pair {stats.player_pairs}  ",
        f"Naturals {stats.naturals}  ",
        f"Longest B {stats.longest_banker_streak} P {stats.longest_player_streak}  ",
        f"Cards left {stats.cards_left}",
    )


def roads_report(message: RoadsMessage, *, coloured: bool = True) -> RenderableType:
    """Every road in full, one under the other, with the ask row and the statistics."""
    parts: list[RenderableType] = [
        Text(f"Shoe {message.shoe}", style="bold"),
        Text("Bead plate", style="bold underline"),
        bead_plate_grid(message.bead_plate),
        Text("Big road", style="bold underline"),
        big_road_grid(message.big_road),
    ]
    for name in DERIVED_NAMES:
        road: DerivedRoad = getattr(message, name)
        parts += [
            Text(DERIVED_TITLE[name], style="bold underline"),
            derived_grid(name, road, coloured=coloured, cell_width=2),
        ]
    parts += [ask_line(message, coloured=coloured), stats_line(message.stats)]
    return Group(*parts)
