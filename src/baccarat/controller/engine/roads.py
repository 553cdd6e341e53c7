"""The roads: the scoreboards of one shoe, computed from its results and ready to draw.

Five roads and the shoe statistics, as a board above a baccarat table shows them:

* **bead plate**: every result, ties included, 6 rows, filled column by column;
* **big road**: banker and player results, one column per streak; ties are counted on
  the most recent cell (ties before the first banker/player result go on the first cell);
  drawn on a 6-row grid with dragon tails;
* **big eye boy, small road, cockroach pig** (``k`` = 1, 2, 3): one red or blue mark per
  big-road cell, from the lengths of the big road's columns;
* **ask rows**: the mark each derived road would add if the next result were banker, or
  player;
* **shoe statistics**.

:class:`Roads` is fed the results of the current shoe in order. The engine filters: void
rounds and demo rounds (Art. 2.2, 10) never reach it, and a new shoe calls :meth:`Roads.clear`.
Everything is computed incrementally and the cells are kept as ready-made message parts.

Coordinates in the message are 0-based: ``col`` 0 is the leftmost column, ``row`` 0 the top
row. ``docs/roads.md`` states the rules with pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from baccarat.messages.roads import (
    DERIVED_ROADS,
    ROWS,
    Ask,
    AskRow,
    BeadCell,
    BeadPlate,
    BigRoad,
    BigRoadCell,
    BigRoadColumn,
    Colour,
    DerivedCell,
    DerivedColumn,
    DerivedRoad,
    RoadsMessage,
    ShoeStats,
    Side,
    Streak,
)
from baccarat.rules.tableau import Winner

# --- placing cells on a 6-row grid -----------------------------------------------------


class _Grid:
    """Places the cells of one road on a 6-row grid with dragon tails.

    A streak goes down until it would pass the last row or the cell below is taken, then
    turns right and stays on that row. A new streak starts at the top of the drawn column
    right after the one where the previous streak started; should that top cell already be
    taken by a tail, it starts at the first column to the right whose top cell is free.
    """

    __slots__ = ("col", "row", "start_col", "taken", "width")

    def __init__(self) -> None:
        self.taken: set[tuple[int, int]] = set()
        self.start_col = -1
        self.col = -1
        self.row = -1
        self.width = 0

    def place(self, new_streak: bool) -> tuple[int, int]:
        """The drawn (col, row) of the next cell; ``new_streak`` when it opens a column."""
        if new_streak:
            self._start_streak()
        elif self._can_go_down():
            self.row += 1
        else:
            self._go_right()
        self.taken.add((self.col, self.row))
        self.width = max(self.width, self.col + 1)
        return self.col, self.row

    def _start_streak(self) -> None:
        col = self.start_col + 1
        while (col, 0) in self.taken:
            col += 1
        self.start_col, self.col, self.row = col, col, 0

    def _can_go_down(self) -> bool:
        return (
            self.col == self.start_col
            and self.row + 1 < ROWS
            and (self.col, self.row + 1) not in self.taken
        )

    def _go_right(self) -> None:
        self.col += 1
        while (self.col, self.row) in self.taken:
            self.col += 1


# --- the derived-road rule -------------------------------------------------------------


def derived_mark(lengths: list[int], k: int, col: int, row: int) -> Colour | None:
    """The mark a derived road adds for a big-road cell at logical (``col``, ``row``).

    ``lengths`` are the lengths of the big road's logical columns; only columns before
    ``col`` are read, so it may or may not already hold ``col``. 0-based here; in the
    1-based words of the rules: for column c, row r, if r is the first row the mark is red
    when columns c-1 and c-1-k have the same length, else blue; otherwise it is blue
    exactly when column c-k has length r-1. No mark before column k+1 row 2 (0-based:
    before column ``k`` row 1).
    """
    if col < k or (col == k and row == 0):
        return None
    if row == 0:
        return "red" if lengths[col - 1] == lengths[col - 1 - k] else "blue"
    return "blue" if lengths[col - k] == row else "red"


# --- the roads, built incrementally ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Result:
    round: int
    winner: Winner
    player_pair: bool
    banker_pair: bool
    natural: bool


class _BeadPlate:
    __slots__ = ("cells",)

    def __init__(self) -> None:
        self.cells: list[BeadCell] = []

    def add(self, result: _Result) -> None:
        index = len(self.cells)
        self.cells.append(
            BeadCell(
                col=index // ROWS,
                row=index % ROWS,
                round=result.round,
                winner=result.winner,
                player_pair=result.player_pair,
                banker_pair=result.banker_pair,
                natural=result.natural,
            )
        )

    def model(self) -> BeadPlate:
        width = (len(self.cells) + ROWS - 1) // ROWS
        return BeadPlate(rows=ROWS, width=width, cells=list(self.cells))


class _BigRoad:
    __slots__ = ("cells", "columns", "grid", "leading_ties", "lengths")

    def __init__(self) -> None:
        self.grid = _Grid()
        self.cells: list[BigRoadCell] = []
        self.columns: list[BigRoadColumn] = []
        self.lengths: list[int] = []
        self.leading_ties = 0

    def add_tie(self) -> None:
        if not self.cells:
            self.leading_ties += 1
            return
        last = self.cells[-1]
        self.cells[-1] = replace(last, ties=last.ties + 1)

    def add(self, result: _Result, side: Side) -> tuple[int, int]:
        """Add a banker/player result; the logical (col, row) of its cell."""
        new_streak = not self.columns or self.columns[-1].winner != side
        if new_streak:
            self.lengths.append(1)
        else:
            self.lengths[-1] += 1
        logical_col, logical_row = len(self.lengths) - 1, self.lengths[-1] - 1
        self._set_column(side, new_streak)
        col, row = self.grid.place(new_streak)
        self.cells.append(
            BigRoadCell(
                col=col,
                row=row,
                logical_col=logical_col,
                logical_row=logical_row,
                round=result.round,
                winner=side,
                ties=self.leading_ties if not self.cells else 0,
                player_pair=result.player_pair,
                banker_pair=result.banker_pair,
                natural=result.natural,
            )
        )
        return logical_col, logical_row

    def _set_column(self, side: Side, new_streak: bool) -> None:
        column = BigRoadColumn(winner=side, length=self.lengths[-1])
        if new_streak:
            self.columns.append(column)
        else:
            self.columns[-1] = column

    def next_cell(self, side: Side) -> tuple[int, int] | None:
        """The logical (col, row) a next ``side`` result would take; None on an empty road."""
        if not self.columns:
            return None
        if self.columns[-1].winner == side:
            return len(self.lengths) - 1, self.lengths[-1]
        return len(self.lengths), 0

    def model(self) -> BigRoad:
        return BigRoad(
            rows=ROWS,
            width=self.grid.width,
            leading_ties=self.leading_ties,
            cells=list(self.cells),
            columns=list(self.columns),
        )


class _DerivedRoad:
    __slots__ = ("cells", "columns", "grid", "k")

    def __init__(self, k: int) -> None:
        self.k = k
        self.grid = _Grid()
        self.cells: list[DerivedCell] = []
        self.columns: list[DerivedColumn] = []

    def add(self, colour: Colour, round_number: int) -> None:
        new_streak = not self.columns or self.columns[-1].colour != colour
        length = 1 if new_streak else self.columns[-1].length + 1
        column = DerivedColumn(colour=colour, length=length)
        if new_streak:
            self.columns.append(column)
        else:
            self.columns[-1] = column
        col, row = self.grid.place(new_streak)
        self.cells.append(
            DerivedCell(
                col=col,
                row=row,
                logical_col=len(self.columns) - 1,
                logical_row=length - 1,
                colour=colour,
                round=round_number,
            )
        )

    def model(self) -> DerivedRoad:
        return DerivedRoad(
            k=self.k,
            rows=ROWS,
            width=self.grid.width,
            cells=list(self.cells),
            columns=list(self.columns),
        )


class _Counts:
    __slots__ = ("banker", "banker_pairs", "naturals", "player", "player_pairs", "tie")

    def __init__(self) -> None:
        self.banker = self.player = self.tie = 0
        self.banker_pairs = self.player_pairs = self.naturals = 0

    def add(self, result: _Result) -> None:
        if result.winner == "banker":
            self.banker += 1
        elif result.winner == "player":
            self.player += 1
        else:
            self.tie += 1
        self.banker_pairs += result.banker_pair
        self.player_pairs += result.player_pair
        self.naturals += result.natural


class Roads:
    """The roads of the current shoe, fed one result at a time.

    Only results that count reach it: the engine leaves out void rounds (Art. 10) and demo
    rounds (Art. 2.2), and calls :meth:`clear` when a new shoe starts.
    """

    def __init__(self) -> None:
        self._results: list[_Result] = []
        self._rounds: set[int] = set()
        self._reset()

    def _reset(self) -> None:
        self._bead = _BeadPlate()
        self._big = _BigRoad()
        self._derived = {name: _DerivedRoad(k) for name, k in DERIVED_ROADS}
        self._counts = _Counts()
        self._longest: dict[Side, int] = {"banker": 0, "player": 0}

    def __len__(self) -> int:
        """Results on the roads, ties included."""
        return len(self._results)

    def add(
        self,
        round: int,
        winner: Winner,
        player_pair: bool,
        banker_pair: bool,
        natural: bool,
    ) -> None:
        """Add the result of a completed round that counts (not void, not demo).

        A second result for a round already on the roads replaces the first one.
        """
        result = _Result(round, winner, player_pair, banker_pair, natural)
        if round in self._rounds:
            self._results = [result if r.round == round else r for r in self._results]
            self._rebuild()
            return
        self._results.append(result)
        self._rounds.add(round)
        self._apply(result)

    def remove(self, round: int) -> bool:
        """Withdraw the result of ``round`` (voided after its result); False if not there."""
        kept = [r for r in self._results if r.round != round]
        if len(kept) == len(self._results):
            return False
        self._results = kept
        self._rounds.discard(round)
        self._rebuild()
        return True

    def clear(self) -> None:
        """Empty every road: a new shoe."""
        self._results = []
        self._rounds = set()
        self._reset()

    def _rebuild(self) -> None:
        self._reset()
        for result in self._results:
            self._apply(result)

    def _apply(self, result: _Result) -> None:
        self._bead.add(result)
        self._counts.add(result)
        if result.winner == "tie":
            self._big.add_tie()
            return
        side: Side = result.winner
        col, row = self._big.add(result, side)
        self._longest[side] = max(self._longest[side], row + 1)
        for road in self._derived.values():
            colour = derived_mark(self._big.lengths, road.k, col, row)
            if colour is not None:
                road.add(colour, result.round)

    def ask(self, side: Side) -> AskRow:
        """The marks each derived road would add if the next result were ``side``."""
        cell = self._big.next_cell(side)
        if cell is None:
            return AskRow(big_eye_boy=None, small_road=None, cockroach_pig=None)
        lengths = self._big.lengths
        return AskRow(
            big_eye_boy=derived_mark(lengths, 1, *cell),
            small_road=derived_mark(lengths, 2, *cell),
            cockroach_pig=derived_mark(lengths, 3, *cell),
        )

    def stats(self, cards_left: int) -> ShoeStats:
        """The shoe statistics, with ``cards_left`` as the shoe reports it."""
        counts = self._counts
        columns = self._big.columns
        current = (
            Streak(winner=columns[-1].winner, length=columns[-1].length)
            if columns
            else None
        )
        return ShoeStats(
            rounds=len(self._results),
            banker=counts.banker,
            player=counts.player,
            tie=counts.tie,
            banker_pairs=counts.banker_pairs,
            player_pairs=counts.player_pairs,
            naturals=counts.naturals,
            longest_banker_streak=self._longest["banker"],
            longest_player_streak=self._longest["player"],
            current_streak=current,
            cards_left=cards_left,
        )

    def message(
        self, *, seq: int, shoe: int, cards_left: int, ts: float | None = None
    ) -> RoadsMessage:
        """The roads message to publish now."""
        derived = {name: road.model() for name, road in self._derived.items()}
        return RoadsMessage(
            seq=seq,
            ts=ts,
            shoe=shoe,
            bead_plate=self._bead.model(),
            big_road=self._big.model(),
            big_eye_boy=derived["big_eye_boy"],
            small_road=derived["small_road"],
            cockroach_pig=derived["cockroach_pig"],
            ask=Ask(banker=self.ask("banker"), player=self.ask("player")),
            stats=self.stats(cards_left),
        )
