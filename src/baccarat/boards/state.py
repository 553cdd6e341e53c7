"""What a result board shows, folded from the published messages. Pure: no I/O, no clock.

:func:`fold` takes the state and one message and returns the next state. It is tolerant of
what MQTT delivers after a reconnect or with QoS 1:

* duplicates: state topics (shoe, round, roads) only move forward by ``seq``; events are
  applied by their natural key (a card by its round and position, a result by its
  ``round_id``, an alarm by its id), so a second copy changes nothing;
* retained messages arriving again after a reconnect, older than what is shown: ignored;
* a late copy of an alarm already cleared, or of a result already voided: ignored;
* a controller that restarted with a fresh sequence (``seq`` far below the highest seen):
  the board starts over from that message.

A board that connects mid-round starts from the retained messages alone: ``round`` carries
the cards shown so far with the totals, and ``alarms`` every open alarm. An ``alarms`` body
replaces the open alarms the board holds, but not one it heard of after that body (a
higher ``seq``), nor the one-off notices (``lasting`` false), which no list names.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Literal, TypeVar

from baccarat.cards import CardError, parse_card
from baccarat.messages.bodies import (
    AlarmClearedMessage,
    AlarmMessage,
    AlarmsMessage,
    CardMessage,
    Message,
    ResultMessage,
    RoundMessage,
    ShoeMessage,
    VoidMessage,
)
from baccarat.messages.limits import LimitsMessage
from baccarat.messages.roads import RoadsMessage
from baccarat.rules.tableau import next_position

RECENT_RESULTS: Final = 30
"""Results kept for the "last results" strip."""
REMEMBERED_IDS: Final = 200
"""Cleared alarm ids and voided round ids remembered to refuse late copies."""
SEQ_RESTART_GAP: Final = 1000
"""A ``seq`` this far below the highest seen means the controller started a new sequence."""

RoundStatus = Literal["open", "complete", "void"]


@dataclass(frozen=True, slots=True)
class LiveRound:
    """The round on the table, card by card."""

    shoe: int
    round: int
    round_id: str | None = None
    status: RoundStatus = "open"
    demo: bool = False
    next: str | None = None
    cards: tuple[tuple[str, str | None], ...] = ()
    """(position, card code or None if unreadable), in the order they came."""
    player_total: int | None = None
    banker_total: int | None = None
    result: ResultMessage | None = None
    round_seq: int = 0
    card_seq: int = 0

    @property
    def key(self) -> tuple[int, int]:
        """(shoe, round): rounds are ordered by it."""
        return (self.shoe, self.round)

    def hand(self, side: Literal["P", "B"]) -> list[str | None]:
        """The cards of Player (``P``) or Banker (``B``) in position order."""
        return [card for position, card in sorted(self.cards) if position.startswith(side)]


@dataclass(frozen=True, slots=True)
class BoardState:
    """Everything a board draws. Build it with :func:`fold`, never by hand."""

    table: str = ""
    link: str = "connecting"
    """The board's own link to the broker, as the board's wiring reports it."""
    controller: str | None = None
    """The controller's status topic (``online``/``offline``), if it was received."""
    shoe: ShoeMessage | None = None
    live: LiveRound | None = None
    results: tuple[ResultMessage, ...] = ()
    """Recent counted results of the current shoe, oldest first (demo rounds left out)."""
    alarms: tuple[AlarmMessage, ...] = ()
    """Alarms raised and not yet cleared, oldest first (by id), each as last published."""
    alarms_seq: int = 0
    """The ``seq`` of the last ``alarms`` body taken."""
    roads_message: RoadsMessage | None = None
    highest_seq: int = 0
    messages: int = 0
    """Messages that changed something."""
    rejected: int = 0
    """Bodies refused on the table's topics (:mod:`baccarat.boards.accept`): counted, never
    folded, never fatal."""
    refused_why: str = ""
    """The last refusal's reason."""
    cleared_alarms: tuple[int, ...] = ()
    voided_rounds: tuple[str, ...] = ()
    limits: LimitsMessage | None = None
    """The table's betting limits (the pit's retained ``limits`` topic), if it has them."""
    waiting: str = ""
    """What the board still waits for, when nothing has come from its table (the feed
    says so a few seconds after it subscribed); empty once a message comes."""

    @property
    def roads(self) -> RoadsMessage | None:
        """The roads of the current shoe; ``None`` (empty roads) before its first result."""
        roads = self.roads_message
        if roads is None or (self.shoe is not None and roads.shoe != self.shoe.shoe):
            return None
        return roads

    @property
    def cards_left(self) -> int | None:
        """Cards left in the current shoe, one figure for the whole board.

        Both the ``shoe`` and the ``roads`` message carry it, and the controller sends them
        at different times: ``shoe`` whenever the counts change (every result, the shoe's
        burn, a card accepted as a burn, a void round), ``roads`` only when a result
        counts, just after that ``shoe``. The newer of the two (by ``seq``) is the figure.
        """
        shoe, roads = self.shoe, self.roads
        if roads is not None and (shoe is None or roads.seq > shoe.seq):
            return roads.stats.cards_left
        return shoe.cards_left if shoe is not None else None

    @property
    def last_result(self) -> ResultMessage | None:
        """The most recent counted result, if any."""
        return self.results[-1] if self.results else None


def fold(state: BoardState, message: Message) -> BoardState:
    """The state after ``message``; unchanged (the same object) if it tells nothing new."""
    if message.seq + SEQ_RESTART_GAP < state.highest_seq:
        state = BoardState(
            table=state.table, link=state.link, controller=state.controller,
            rejected=state.rejected, refused_why=state.refused_why, limits=state.limits,
        )
    new = _apply(state, message)
    if new is state:
        return state
    return replace(new, highest_seq=max(new.highest_seq, message.seq), messages=new.messages + 1)


def fold_all(state: BoardState, messages: list[Message]) -> BoardState:
    """Fold several messages in order."""
    for message in messages:
        state = fold(state, message)
    return state


def with_link(state: BoardState, link: str) -> BoardState:
    """The state with the board's broker link described as ``link``."""
    return state if state.link == link else replace(state, link=link)


def with_limits(state: BoardState, limits: LimitsMessage) -> BoardState:
    """The state with the table's limits (the last body on ``limits`` holds: it is retained)."""
    return state if state.limits == limits else replace(state, limits=limits)


def with_controller_status(state: BoardState, payload: bytes) -> BoardState:
    """The state after a body on the controller's ``status`` topic (``online``/``offline``)."""
    text = payload.decode("utf-8", errors="replace").strip().strip('"')[:40] or None
    return state if state.controller == text else replace(state, controller=text)


# --- one handler per message type -------------------------------------------------------


def _apply(state: BoardState, message: Message) -> BoardState:
    match message:
        case ShoeMessage():
            return _on_shoe(state, message)
        case RoundMessage():
            return _on_round(state, message)
        case CardMessage():
            return _on_card(state, message)
        case ResultMessage():
            return _on_result(state, message)
        case VoidMessage():
            return _on_void(state, message)
        case AlarmMessage():
            return _on_alarm(state, message)
        case AlarmClearedMessage():
            return _on_alarm_cleared(state, message)
        case AlarmsMessage():
            return _on_alarms(state, message)
        case RoadsMessage():
            return _on_roads(state, message)
    return state


def _on_shoe(state: BoardState, message: ShoeMessage) -> BoardState:
    current = state.shoe
    if current is not None and message.seq <= current.seq:
        return state
    if current is not None and message.shoe != current.shoe:
        live = state.live if state.live and state.live.shoe == message.shoe else None
        return replace(state, shoe=message, results=(), live=live)
    return replace(state, shoe=message)


def _on_round(state: BoardState, message: RoundMessage) -> BoardState:
    key = (message.shoe, message.round)
    live = state.live
    if live is not None and key < live.key:
        return state
    if live is None or key > live.key:
        live = LiveRound(shoe=message.shoe, round=message.round)
    elif message.seq <= live.round_seq:
        return state
    status: RoundStatus = "void" if live.status == "void" else message.status
    newer = message.seq > live.card_seq
    live = replace(
        live,
        round_id=message.round_id,
        status=status,
        demo=message.demo,
        next=message.next if newer else live.next,
        round_seq=message.seq,
    )
    if newer and message.cards:  # the cards shown so far: what a late board starts from
        cards = tuple((c.position, c.card) for c in message.cards if c.position != "burn")
        live = replace(
            live,
            cards=cards,
            player_total=message.player_total,
            banker_total=message.banker_total,
            card_seq=message.seq,
        )
    return replace(state, live=live)


def _on_card(state: BoardState, message: CardMessage) -> BoardState:
    if message.round is None:
        return state  # a shoe burn: not part of any round
    key = (message.shoe, message.round)
    live = state.live
    if live is not None and key < live.key:
        return state
    if live is None or key > live.key:
        live = LiveRound(shoe=message.shoe, round=message.round, demo=message.demo)
    if message.position == "burn" or any(p == message.position for p, _ in live.cards):
        return state if live is state.live else replace(state, live=live)
    cards = (*live.cards, (message.position, message.card))
    live = replace(live, cards=cards, next=expected_next(cards))
    if message.seq > live.card_seq:
        live = replace(
            live,
            player_total=message.player_total,
            banker_total=message.banker_total,
            card_seq=message.seq,
        )
    return replace(state, live=live)


def expected_next(cards: tuple[tuple[str, str | None], ...]) -> str | None:
    """The position the next card goes to by the tableau; None if complete or unknowable."""
    values: dict[str, list[int]] = {"P": [], "B": []}
    for position, code in sorted(cards):
        if code is None:
            return None
        try:
            values[position[0]].append(parse_card(code).value)
        except CardError:
            return None
    return next_position(values["P"], values["B"])


def _on_result(state: BoardState, message: ResultMessage) -> BoardState:
    if message.round_id in state.voided_rounds:
        return state
    live = state.live
    if live is not None and live.key == (message.shoe, message.round):
        if live.result != message:
            live = replace(live, result=message, status="complete", round_id=message.round_id)
    elif live is None or (message.shoe, message.round) > live.key:
        live = LiveRound(
            shoe=message.shoe,
            round=message.round,
            round_id=message.round_id,
            status="complete",
            demo=message.demo,
            result=message,
            cards=_cards_of(message),
            player_total=message.player.total,
            banker_total=message.banker.total,
        )
    results = state.results
    if _counts(state, message) and all(r.round_id != message.round_id for r in results):
        ordered = sorted((*results, message), key=lambda r: (r.shoe, r.round))
        results = tuple(ordered[-RECENT_RESULTS:])
    if live is state.live and results is state.results:
        return state
    return replace(state, live=live, results=results)


def _counts(state: BoardState, result: ResultMessage) -> bool:
    """A result for the "last results" strip: not demo, not of an older shoe."""
    return not result.demo and (state.shoe is None or result.shoe >= state.shoe.shoe)


def _cards_of(result: ResultMessage) -> tuple[tuple[str, str | None], ...]:
    player = [(f"P{i}", card) for i, card in enumerate(result.player.cards, start=1)]
    banker = [(f"B{i}", card) for i, card in enumerate(result.banker.cards, start=1)]
    return (*player, *banker)


def _on_void(state: BoardState, message: VoidMessage) -> BoardState:
    if message.round_id in state.voided_rounds:
        return state
    voided = _remember(state.voided_rounds, message.round_id)
    results = tuple(r for r in state.results if r.round_id != message.round_id)
    live = state.live
    if live is not None and live.key == (message.shoe, message.round):
        live = replace(live, status="void", result=None, next=None)
    return replace(state, voided_rounds=voided, results=results, live=live)


def _on_alarm(state: BoardState, message: AlarmMessage) -> BoardState:
    """A new alarm, or a newer copy of an open one (a coalesced alarm's count changed)."""
    if message.id in state.cleared_alarms:
        return state
    known = next((a for a in state.alarms if a.id == message.id), None)
    if known is not None and message.seq <= known.seq:
        return state
    return replace(state, alarms=_by_id([a for a in state.alarms if a.id != message.id], message))


def _on_alarms(state: BoardState, message: AlarmsMessage) -> BoardState:
    """Every open alarm as of ``message.seq``; what came after it stays as it is."""
    if message.seq < state.alarms_seq:
        return state
    listed = {a.id: a for a in message.alarms if a.id not in state.cleared_alarms}
    after = message.seq
    kept = [a for a in state.alarms if a.id not in listed and (a.seq > after or not a.lasting)]
    for held in state.alarms:
        if held.id in listed and held.seq > listed[held.id].seq:
            listed[held.id] = held
    alarms = _by_id(kept, *listed.values())
    if alarms == state.alarms and message.seq == state.alarms_seq:
        return state
    return replace(state, alarms=alarms, alarms_seq=message.seq)


def _by_id(alarms: list[AlarmMessage], *more: AlarmMessage) -> tuple[AlarmMessage, ...]:
    return tuple(sorted([*alarms, *more], key=lambda a: a.id))


def _on_alarm_cleared(state: BoardState, message: AlarmClearedMessage) -> BoardState:
    if message.id in state.cleared_alarms:
        return state
    alarms = tuple(a for a in state.alarms if a.id != message.id)
    return replace(state, alarms=alarms, cleared_alarms=_remember(state.cleared_alarms, message.id))


def _on_roads(state: BoardState, message: RoadsMessage) -> BoardState:
    current = state.roads_message
    if current is not None and message.seq <= current.seq:
        return state
    return replace(state, roads_message=message)


_Id = TypeVar("_Id", bound=int | str)


def _remember(remembered: tuple[_Id, ...], item: _Id) -> tuple[_Id, ...]:
    kept: tuple[_Id, ...] = (*remembered[-REMEMBERED_IDS + 1 :], item)
    return kept
