"""Rounds rebuilt from a table's messages: every card, the result, the alarms and who settled them.

The same function reads the floor recorder's database (``baccarat history --db``) and the
JSON lines that ``baccarat replay`` or ``baccarat journal show --messages`` print, so the
recorder's copy of a shoe can be compared with the journal it came from
(``baccarat history --messages FILE``).

A round's row: the table, shoe and round, its id, the cards in dealing order with their
positions (``P1 9S``, ``B1 2H``, ... burn cards dealt inside the round as ``burn``), the
outcome (``banker``, ``player``, ``tie`` or ``void``, with who voided it), both totals, the
demo flag, and its alarms as ``kind #id settled by CORRECTION (pit/<operator>)`` (or
``open``).

A body the history cannot use (a field of the wrong type, a required one missing: the
store may hold what an older recorder let through, a file may hold anything) is skipped and
counted in :class:`Skipped`, never raised.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from baccarat.floor.bodies import field_problem, json_kind, shown
from baccarat.rules.pace import pace

CSV_COLUMNS: Final = (
    "table", "shoe", "round", "round_id", "cards", "outcome", "player_total", "banker_total",
    "demo", "alarms",
)


@dataclass
class RoundHistory:
    """One round as the messages tell it."""

    table: str
    shoe: int
    round: int
    round_id: str = ""
    cards: list[str] = field(default_factory=list)
    outcome: str = "open"
    player_total: int | None = None
    banker_total: int | None = None
    demo: bool = False
    alarms: dict[int, str] = field(default_factory=dict)

    def row(self) -> dict[str, str]:
        """The round as CSV cells."""
        return {
            "table": self.table,
            "shoe": str(self.shoe),
            "round": str(self.round),
            "round_id": self.round_id,
            "cards": " ".join(self.cards),
            "outcome": self.outcome,
            "player_total": "" if self.player_total is None else str(self.player_total),
            "banker_total": "" if self.banker_total is None else str(self.banker_total),
            "demo": "yes" if self.demo else "",
            "alarms": "; ".join(self.alarms[key] for key in sorted(self.alarms)),
        }

    def to_json(self) -> dict[str, Any]:
        """The round as JSON: the CSV's cells, with the cards and alarms as lists."""
        return {
            "table": self.table,
            "shoe": self.shoe,
            "round": self.round,
            "round_id": self.round_id,
            "cards": list(self.cards),
            "outcome": self.outcome,
            "player_total": self.player_total,
            "banker_total": self.banker_total,
            "demo": self.demo,
            "alarms": [self.alarms[key] for key in sorted(self.alarms)],
        }

    def line(self) -> str:
        """The round on one line for a terminal."""
        totals = (
            f" {self.player_total}-{self.banker_total}"
            if self.player_total is not None and self.banker_total is not None
            else ""
        )
        text = f"{self.table} shoe {self.shoe} round {self.round}: {self.outcome}{totals}"
        text += f"  {' '.join(self.cards)}"
        if self.demo:
            text += "  (demo)"
        if self.alarms:
            text += "  [" + "; ".join(self.alarms[key] for key in sorted(self.alarms)) + "]"
        return text


APPLIED: Final = frozenset({"card", "round", "result", "void", "alarm", "alarm_cleared"})
"""The types whose bodies make a round's history."""
REQUIRED: Final = {"card": ("position",), "result": ("winner",), "alarm": ("id",),
                   "alarm_cleared": ("id",)}
"""Fields without which a body of the type says nothing a round can use."""
EXAMPLES: Final = 10


@dataclass
class Skipped:
    """Bodies the history could not use: how many, and the first few with the reason."""

    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, table: str, body: object, why: str) -> None:
        """Count one more; keep its description if it is one of the first few."""
        self.count += 1
        if len(self.examples) < EXAMPLES:
            seq = body.get("seq") if isinstance(body, dict) else None
            self.examples.append(f"{table} seq {shown(seq)}: {why}")


def unusable(body: object) -> str | None:
    """Why the history cannot use ``body``, or None (also for a type it does not read)."""
    if not isinstance(body, dict):
        return f"not a JSON object but {json_kind(body)}"
    kind = body.get("type")
    if kind not in APPLIED:
        return None
    problem = field_problem(body)
    if problem is not None:
        return problem
    for name in REQUIRED.get(str(kind), ()):
        if name not in body:
            return f"no {name}"
    if kind == "result":
        for hand in ("player", "banker"):
            total = body.get(hand, {}).get("total")
            if total is not None and json_kind(total) != "integer":
                return f"{hand}.total is {json_kind(total)} {shown(total)}, not integer"
    return None


def rounds(
    messages: Iterable[tuple[str, dict[str, Any]]], skipped: Skipped | None = None
) -> Iterator[RoundHistory]:
    """The rounds of ``(table, body)`` messages given by table then ``seq``, in order.

    A body that cannot be used is left out and counted in ``skipped``.
    """
    current: dict[tuple[str, int, int], RoundHistory] = {}
    alarm_rounds: dict[tuple[str, int], RoundHistory] = {}
    order: list[tuple[str, int, int]] = []
    for table, body in messages:
        why = unusable(body)
        if why is not None:
            if skipped is not None:
                skipped.add(table, body, why)
            continue
        shoe, number = body.get("shoe"), body.get("round")
        if not isinstance(shoe, int) or not isinstance(number, int):  # bools: unusable()
            continue  # a shoe burn, a shoe message, a device alarm outside any round
        key = (table, shoe, number)
        if key not in current:
            # the engine's round id, as its result, void and round bodies carry it
            current[key] = RoundHistory(table, shoe, number, round_id=f"{shoe}-{number}")
            order.append(key)
        _apply(current[key], body, alarm_rounds)
    for key in order:
        yield current[key]


def _apply(
    rnd: RoundHistory, body: dict[str, Any], alarm_rounds: dict[tuple[str, int], RoundHistory]
) -> None:
    kind = body.get("type")
    if kind == "card":
        position = body.get("position")
        rnd.cards.append(f"{position} {body.get('card') or '??'}")
        rnd.demo = rnd.demo or bool(body.get("demo"))
    elif kind == "round":
        rnd.round_id = str(body.get("round_id") or rnd.round_id)
    elif kind == "result":
        rnd.round_id = str(body.get("round_id") or rnd.round_id)
        rnd.outcome = str(body.get("winner"))
        rnd.player_total = body.get("player", {}).get("total")
        rnd.banker_total = body.get("banker", {}).get("total")  # both checked by unusable()
        rnd.demo = bool(body.get("demo"))
    elif kind == "void":
        rnd.round_id = str(body.get("round_id") or rnd.round_id)
        rnd.outcome = f"void ({body['origin']})" if body.get("origin") else "void"
    elif kind == "alarm":
        alarm_id = int(body["id"])
        rnd.alarms[alarm_id] = f"{body.get('kind')} #{alarm_id} open"
        alarm_rounds[(rnd.table, alarm_id)] = rnd
    elif kind == "alarm_cleared":
        alarm_id = int(body["id"])
        owner = alarm_rounds.get((rnd.table, alarm_id), rnd)
        who = f" ({body['origin']})" if body.get("origin") else ""
        owner.alarms[alarm_id] = (
            f"{body.get('kind')} #{alarm_id} settled by {body.get('by')}{who}"
        )


PACE_COLUMNS: Final = ("table", "shoe", "rounds", "seconds_per_round", "rounds_per_hour")


@dataclass(frozen=True, slots=True)
class ShoePace:
    """A shoe's dealer pace (:mod:`baccarat.rules.pace`): rounds ended and how fast."""

    table: str
    shoe: int
    rounds: int
    seconds_per_round: float
    rounds_per_hour: float

    def row(self) -> dict[str, str]:
        """The shoe's pace as CSV cells."""
        return {
            "table": self.table, "shoe": str(self.shoe), "rounds": str(self.rounds),
            "seconds_per_round": f"{self.seconds_per_round:.1f}",
            "rounds_per_hour": f"{self.rounds_per_hour:.1f}",
        }

    def line(self) -> str:
        """The shoe's pace on one line for a terminal."""
        return (
            f"{self.table} shoe {self.shoe}: {self.rounds} rounds,"
            f" {self.seconds_per_round:.1f} s a round, {self.rounds_per_hour:.1f} rounds an hour"
        )


def paces(messages: Iterable[tuple[str, dict[str, Any]]]) -> list[ShoePace]:
    """Each shoe's pace, from its rounds' results and voids (their ``ts``), by table and shoe.

    A round ends at its first result or void; a body without a usable ``ts`` is left out;
    a shoe with fewer than two round ends has no pace and is not listed.
    """
    ends: dict[tuple[str, int], dict[int, float]] = {}
    for table, body in messages:
        if unusable(body) is not None or body.get("type") not in ("result", "void"):
            continue
        shoe, number, ts = body.get("shoe"), body.get("round"), body.get("ts")
        if not (isinstance(shoe, int) and isinstance(number, int)):
            continue
        if isinstance(ts, int | float) and not isinstance(ts, bool):
            ends.setdefault((table, shoe), {}).setdefault(number, float(ts))
    out = []
    for (table, shoe), by_round in sorted(ends.items()):
        found = pace(list(by_round.values()))
        if found is not None:
            out.append(ShoePace(table, shoe, found.rounds, found.seconds_per_round,
                                found.rounds_per_hour))
    return out


def pace_csv(shoes: Iterable[ShoePace]) -> str:
    """The shoes' pace as CSV with a header row."""
    return _csv(PACE_COLUMNS, (shoe.row() for shoe in shoes))


def _csv(columns: tuple[str, ...], rows: Iterable[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def parse_time(text: str) -> float:
    """Unix seconds from ``text``: Unix seconds or an ISO time (UTC unless it says); ValueError."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"not a time (ISO or Unix seconds): {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def to_csv(history: Iterable[RoundHistory]) -> str:
    """The rounds as CSV with a header row."""
    return _csv(CSV_COLUMNS, (rnd.row() for rnd in history))


def gaps(messages: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, list[tuple[int, int]]]:
    """Per table, the runs of ``seq`` missing between the first and the last stored."""
    missing: dict[str, list[tuple[int, int]]] = {}
    last: dict[str, int] = {}
    for table, body in messages:
        seq = body.get("seq") if isinstance(body, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool):
            continue
        before = last.get(table)
        if before is not None and seq > before + 1:
            missing.setdefault(table, []).append((before + 1, seq - 1))
        if before is None or seq > before:
            last[table] = seq
    return missing
