"""The terminal board: a :class:`~baccarat.boards.state.BoardState` drawn with rich.

:func:`render` is pure: the same state and size give the same picture. It fits 80x24 and
uses more room when it has it (card faces, more alarms, more columns of every road).

::

    header: table, shoe, round, cards left, links           1 line
    alarms (only while some are raised)                     0-4 lines
    live round, card by card  | last result, results, ask  the rest
    big road                                                8 lines
    bead plate | big eye boy | small road | cockroach pig   8 lines
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.layout import Layout
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from baccarat.boards import roads_view
from baccarat.boards.roads_view import DERIVED_NAMES, DERIVED_TITLE, WINNER_STYLE
from baccarat.boards.state import BoardState, LiveRound
from baccarat.messages.bodies import AlarmMessage, ResultMessage
from baccarat.messages.limits import LimitsMessage
from baccarat.messages.roads import BeadPlate, BigRoad, DerivedRoad, RoadsMessage

ROAD_PANEL_HEIGHT = 8
"""6 rows of cells and a border."""
SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
RED_SUITS = frozenset("HD")
EMPTY_BEAD = BeadPlate(width=0, cells=[])
EMPTY_BIG_ROAD = BigRoad(width=0, leading_ties=0, cells=[], columns=[])
EMPTY_DERIVED = DerivedRoad(k=0, width=0, cells=[], columns=[])


def render(state: BoardState, width: int, height: int, *, coloured: bool = True) -> RenderableType:
    """The whole board for a terminal of ``width`` x ``height`` characters."""
    alarm_lines = _alarm_lines(state.alarms, height)
    roads_height = 2 * ROAD_PANEL_HEIGHT if height >= 22 else ROAD_PANEL_HEIGHT
    top_height = max(3, height - 1 - alarm_lines - roads_height)
    layout = Layout()
    parts = [Layout(header(state), name="header", size=1)]
    if alarm_lines:
        parts.append(Layout(alarm_banner(state.alarms, alarm_lines), size=alarm_lines))
    top = Layout(name="top", size=top_height)
    half = width // 2
    top.split_row(
        Layout(live_panel(state.live, top_height - 2, state.limits, state.waiting), size=half),
        Layout(results_panel(state, width - half - 4, top_height - 2, coloured=coloured)),
    )
    parts.append(top)
    parts += roads_layouts(state.roads, width, roads_height, coloured=coloured)
    layout.split_column(*parts)
    return layout


# --- header and alarms ----------------------------------------------------------------


def header(state: BoardState) -> Table:
    """One line: table, shoe, round, cards left, last round / demo; the links on the right."""
    line = Table.grid(expand=True)
    line.add_column(no_wrap=True, overflow="ellipsis")
    line.add_column(no_wrap=True, justify="right")
    line.add_row(table_line(state), links_line(state))
    return line


def table_line(state: BoardState) -> Text:
    """Table, shoe, cards left, last round / shoe closed, round, demo."""
    text = Text.assemble((f" Table {state.table} ", "bold reverse"))
    shoe = state.shoe
    if shoe is not None:
        text.append(f"  Shoe {shoe.shoe}  {state.cards_left} cards")
        if shoe.last_round:
            text.append("  LAST ROUND", style="bold yellow")
        if shoe.phase == "closed":
            text.append("  SHOE CLOSED", style="bold yellow")
    if state.live is not None:
        text.append(f"  Round {state.live.round}")
        if state.live.demo:
            text.append(" DEMO", style="bold magenta")
    return text


def limits_text(limits: LimitsMessage) -> str:
    """The table's limits, short: ``Limits HKD B 100-50k P 100-50k T 10-5k Pairs 10-2.5k``."""
    figures = (
        f"{name} {short_figure(bet.min)}-{short_figure(bet.max)}"
        for name, bet in (
            ("B", limits.banker), ("P", limits.player), ("T", limits.tie), ("Pairs", limits.pairs)
        )
    )
    currency = f" {limits.currency}" if limits.currency else ""
    return f"Limits{currency} " + " ".join(figures)


def short_figure(amount: int) -> str:
    """``2500`` as ``2.5k``, ``1000000`` as ``1M``: a stake in at most a few characters."""
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if amount >= size and amount % (size // 10) == 0:
            return f"{amount / size:g}{suffix}"
    return str(amount)


def links_line(state: BoardState) -> Text:
    """The broker link, the controller's status and bad bodies, if any."""
    text = Text(f"broker {state.link}", style=_link_style(state.link))
    if state.controller is not None:
        text.append(f"  controller {state.controller}", style=_link_style(state.controller))
    if state.rejected:
        text.append(f"  {state.rejected} bad", style="yellow")
    return text


def _link_style(status: str) -> str:
    return "green" if status in ("connected", "online") else "bold red"


def _alarm_lines(alarms: Sequence[AlarmMessage], height: int) -> int:
    if not alarms:
        return 0
    return min(len(alarms), 1 if height < 30 else 4)


def alarm_banner(alarms: Sequence[AlarmMessage], lines: int) -> Text:
    """The newest raised alarms, one a line, on red."""
    shown = list(alarms)[-lines:]
    more = len(alarms) - len(shown)
    rows = []
    for index, alarm in enumerate(shown):
        prefix = f"ALARM {alarm.id}" + (f" (+{more} more)" if index == 0 and more else "")
        where = f" round {alarm.round}" if alarm.round is not None else ""
        rows.append(Text(f" {prefix}: {alarm.kind} Art. {alarm.article}{where}: {alarm.text}"))
    banner = Text("\n", style="bold white on red").join(rows)
    banner.no_wrap, banner.overflow = True, "ellipsis"
    return banner


# --- the live round ---------------------------------------------------------------------


def card_text(code: str | None) -> Text:
    """``7♠``, ``10♥`` (red for hearts and diamonds); ``??`` for an unreadable card."""
    if code is None:
        return Text("??", style="bold yellow")
    rank = "10" if code[0] == "T" else code[0]
    style = "bold red" if code[1] in RED_SUITS else "bold"
    return Text(rank + SUIT_SYMBOL.get(code[1], code[1]), style=style)


def card_face(code: str | None) -> Text:
    """A card drawn as a 4-line box."""
    face = card_text(code)
    rank, suit = face.plain[:-1], face.plain[-1]
    style = face.style
    return Text.assemble(
        "┌───┐\n│",
        (rank.ljust(3), style),
        "│\n│",
        (suit.rjust(3), style),
        "│\n└───┘",
    )


def hand_line(label: str, cards: Sequence[str | None], hand_total: int | None) -> Text:
    """``PLAYER  7♠ K♠      7``."""
    style = WINNER_STYLE["player" if label == "PLAYER" else "banker"]
    text = Text.assemble((f"{label:<7}", style), " ")
    text.append(Text(" ").join(card_text(c) for c in cards) if cards else Text("—"))
    if hand_total is not None:
        text.append(f"   {hand_total}", style="bold")
    return text


def hand_faces(label: str, cards: Sequence[str | None], hand_total: int | None) -> Group:
    """A hand as card boxes side by side, under its label and total."""
    style = WINNER_STYLE["player" if label == "PLAYER" else "banker"]
    title = Text.assemble((label, style), f"  {hand_total if hand_total is not None else ''}")
    if not cards:
        return Group(title, Text("—"))
    faces = [card_face(c).split("\n") for c in cards]
    rows = [Text(" ").join(face[line] for face in faces) for line in range(4)]
    return Group(title, *rows)


def outcome_line(live: LiveRound) -> Text:
    """What the round is waiting for, or how it ended."""
    if live.status == "void":
        return Text("VOID", style="bold yellow")
    result = live.result
    if result is not None:
        return result_text(result)
    if live.next is not None:
        return Text(f"next card: {live.next}", style="dim")
    return Text("")


def result_text(result: ResultMessage) -> Text:
    """``BANKER WINS 7 : 6``, ``TIE 5 : 5``, with naturals, pairs and side bets won.

    The side bets (Dragon 7, Panda 8) and the banker push are there where the profile has
    them (EZ Baccarat).
    """
    label = "TIE" if result.winner == "tie" else f"{result.winner.upper()} WINS"
    text = Text.assemble(
        (label, WINNER_STYLE[result.winner]),
        f"  P {result.player.total} : {result.banker.total} B",
    )
    extras = [
        name
        for name, flag in (
            ("natural", result.player.natural or result.banker.natural),
            ("player pair", result.player.pair),
            ("banker pair", result.banker.pair),
            ("Dragon 7", result.side_bets is not None and bool(result.side_bets.dragon7)),
            ("Panda 8", result.side_bets is not None and bool(result.side_bets.panda8)),
            ("banker bet pushes", bool(result.banker_push)),
        )
        if flag
    ]
    if extras:
        text.append("  " + ", ".join(extras), style="italic")
    return text


def live_panel(
    live: LiveRound | None, inner_height: int, limits: LimitsMessage | None = None,
    waiting_for: str = "",
) -> Panel:
    """The round on the table, card by card; card faces when there are 8 lines or more.

    The table's limits, if it has them, go under the round, in the room the round leaves.
    ``waiting_for``: what the board waits for when nothing has come from its table.
    """
    footer = [Text(""), Text(limits_text(limits), style="cyan")] if limits is not None else []
    if live is None:
        waiting = (Text(waiting_for, style="yellow") if waiting_for
                   else Text("waiting for the first round", style="dim"))
        return Panel(Group(waiting, *footer), title="Live round")
    player, banker = live.hand("P"), live.hand("B")
    body: RenderableType
    if inner_height >= 8:
        hands = Table.grid(padding=(0, 4))
        hands.add_row(
            hand_faces("PLAYER", player, live.player_total),
            hand_faces("BANKER", banker, live.banker_total),
        )
        body = Group(hands, Text(""), outcome_line(live), *footer)
    else:
        body = Group(
            hand_line("PLAYER", player, live.player_total),
            hand_line("BANKER", banker, live.banker_total),
            outcome_line(live),
            *footer[1:],  # no blank line: the round and its limits fill a small panel
        )
    title = f"Round {live.round}" + (" · DEMO" if live.demo else "")
    return Panel(body, title=title, subtitle=live.status, title_align="left")


# --- last results, ask, statistics ------------------------------------------------------


def recent_winners(state: BoardState) -> list[str]:
    """Winners of the shoe so far, oldest first.

    From the roads' bead plate when known (it survives a reconnect), else from the results
    received.
    """
    roads = state.roads
    if roads is not None:
        return [cell.winner for cell in roads.bead_plate.cells]
    return [result.winner for result in state.results]


def results_strip(winners: Sequence[str], count: int) -> Text:
    """The last ``count`` winners as coloured letters, newest on the right."""
    shown = list(winners)[-count:]
    if not shown:
        return Text("—", style="dim")
    return Text(" ").join(Text(w[0].upper(), style=WINNER_STYLE[w]) for w in shown)


def last_result_line(state: BoardState) -> Text:
    """The last result with its totals, or only its winner when its message was missed."""
    last = state.last_result
    cells = state.roads.bead_plate.cells if state.roads else []
    if cells and (last is None or last.round != cells[-1].round):
        winner = cells[-1].winner
        return Text("TIE" if winner == "tie" else f"{winner.upper()} WINS", WINNER_STYLE[winner])
    if last is not None:
        return result_text(last)
    return Text("no result yet", style="dim")


def results_panel(
    state: BoardState, inner_width: int, inner_height: int, *, coloured: bool = True
) -> Panel:
    """Last result large, the last results, the ask row and the statistics.

    With 9 lines or more, the statistics get a line each and the recent results a table.
    """
    winners = recent_winners(state)
    lines: list[RenderableType] = [
        last_result_line(state),
        Text.assemble("Last: ", results_strip(winners, max(1, (inner_width - 6) // 2))),
    ]
    roads = state.roads
    if roads is not None:
        lines.append(roads_view.ask_line(roads, coloured=coloured))
    large = inner_height >= 9
    if roads is not None:
        cards_left = state.cards_left
        lines += stats_table(roads, cards_left) if large else stats_lines(roads, cards_left)
    room = inner_height - len(lines) - 2
    if large and room >= 2 and state.results:
        lines += [Text(""), recent_results_table(state.results, room - 1)]
    return Panel(Group(*lines), title="Results", title_align="left")


def stats_lines(roads: RoadsMessage, cards_left: int | None) -> list[Text]:
    """The shoe statistics on two lines of at most 36 characters.

    ``cards_left`` is the board's one figure (:attr:`BoardState.cards_left`), which the
    header shows too: it can be newer than the roads message's.
    """
    s = roads.stats
    return [
        Text.assemble(
            ("B", WINNER_STYLE["banker"]),
            f" {s.banker}  ",
            ("P", WINNER_STYLE["player"]),
            f" {s.player}  ",
            ("T", WINNER_STYLE["tie"]),
            f" {s.tie}  BP {s.banker_pairs}  PP {s.player_pairs}  N {s.naturals}",
        ),
        Text(
            f"rounds {s.rounds}  longest B{s.longest_banker_streak} "
            f"P{s.longest_player_streak}  left {cards_left}"
        ),
    ]


def stats_table(roads: RoadsMessage, cards_left: int | None) -> list[RenderableType]:
    """The shoe statistics with full labels, for a tall board (``cards_left`` as above)."""
    s = roads.stats
    table = Table.grid(padding=(0, 2))
    table.add_row(
        Text.assemble(("Banker", WINNER_STYLE["banker"]), f" {s.banker}"),
        Text.assemble(("Player", WINNER_STYLE["player"]), f" {s.player}"),
        Text.assemble(("Tie", WINNER_STYLE["tie"]), f" {s.tie}"),
    )
    table.add_row(f"B pair {s.banker_pairs}", f"P pair {s.player_pairs}", f"Naturals {s.naturals}")
    table.add_row(
        f"Longest B {s.longest_banker_streak}",
        f"Longest P {s.longest_player_streak}",
        f"Rounds {s.rounds}",
    )
    table.add_row("", "", f"Cards {cards_left}")
    return [table]


def recent_results_table(results: Sequence[ResultMessage], rows: int) -> Table:
    """The last ``rows`` results, newest first: round, winner, totals, cards."""
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for column in ("Round", "Result", "P", "B", "Player", "Banker"):
        table.add_column(column, no_wrap=True)
    for result in list(results)[::-1][: max(0, rows - 1)]:
        table.add_row(
            str(result.round),
            Text(result.winner.upper(), style=WINNER_STYLE[result.winner]),
            str(result.player.total),
            str(result.banker.total),
            Text(" ").join(card_text(c) for c in result.player.cards),
            Text(" ").join(card_text(c) for c in result.banker.cards),
        )
    return table


# --- the roads --------------------------------------------------------------------------


def roads_layouts(
    roads: RoadsMessage | None, width: int, height: int, *, coloured: bool = True
) -> list[Layout]:
    """The big road on one row; the bead plate and derived roads on the next, if room."""
    big = roads.big_road if roads else EMPTY_BIG_ROAD
    big_panel = Panel(
        roads_view.big_road_grid(big, max(1, (width - 4) // 3)),
        title=_big_road_title(big),
        title_align="left",
    )
    rows = [Layout(big_panel, size=ROAD_PANEL_HEIGHT)]
    if height >= 2 * ROAD_PANEL_HEIGHT:
        rows.append(_small_roads_row(roads, width, coloured=coloured))
    return rows


def _big_road_title(road: BigRoad) -> str:
    if not road.cells and road.leading_ties:
        return f"Big road ({road.leading_ties} ties)"
    return "Big road"


def _small_roads_row(roads: RoadsMessage | None, width: int, *, coloured: bool) -> Layout:
    bead_cols = min(14, max(4, (width - 56) // 3))
    bead_width = 4 + 3 * bead_cols
    derived_inner = max(1, (width - bead_width) // 3 - 4)
    cell_width = 2 if derived_inner >= 2 * 24 else 1
    plate = roads.bead_plate if roads else EMPTY_BEAD
    row = Layout(size=ROAD_PANEL_HEIGHT)
    panels = [
        Layout(
            Panel(roads_view.bead_plate_grid(plate, bead_cols, naturals=True), title="Bead plate"),
            size=bead_width,
        )
    ]
    for name in DERIVED_NAMES:
        road: DerivedRoad = getattr(roads, name) if roads else EMPTY_DERIVED
        grid = roads_view.derived_grid(
            name, road, derived_inner // cell_width, coloured=coloured, cell_width=cell_width
        )
        panels.append(Layout(Panel(grid, title=DERIVED_TITLE[name])))
    row.split_row(*panels)
    return row
