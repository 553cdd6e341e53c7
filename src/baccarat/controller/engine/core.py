"""The engine's core: its state, the entry point, and what every room uses.

:class:`EngineCore` holds the table's state (the shoe, the round, the roads, the recall,
the open alarms, the counters), applies an input by its handler in the registry
(``handlers.py``), emits the messages (``seq`` by ``seq``) and raises, recounts and
clears alarms. The rooms add the handlers: ``dealing`` (cards), ``rounds``, ``corrections``
and ``shoe_room`` (the shoe and the devices); :class:`~baccarat.controller.engine.engine.Engine`
is all of them together (docs/design.md, *The engine's rooms*).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, NamedTuple, Self

from baccarat.cards import Card
from baccarat.controller.engine import alarms
from baccarat.controller.engine.handlers import HANDLERS
from baccarat.controller.engine.inputs import (
    CutCardSeen,
    DeviceReportKind,
    Input,
    VoidRound,
)
from baccarat.controller.engine.roads import Roads
from baccarat.controller.engine.state import RECALL_ROUNDS, Alarm, Round, Shoe
from baccarat.errors import BaccaratError
from baccarat.messages.bodies import (
    AlarmClearedMessage,
    AlarmMessage,
    AlarmsMessage,
    CardMessage,
    Correction,
    DealtCard,
    Message,
    RecalledRound,
    SettledAlarm,
    ShoeMessage,
)
from baccarat.rules.alarm_kinds import AlarmKind
from baccarat.rules.edge import Bet
from baccarat.rules.profiles import Profile
from baccarat.rules.tableau import Position, Winner


class Outcome(NamedTuple):
    """What one input produced: messages to publish, or a refusal.

    A refusal changes nothing, except that a refusal the pit must hear of comes with the
    alarm that says so: a new shoe the device started (``shoe_refused``), and any other
    signal of the table's own that nobody waits a reply for, a dealer's button or the cut
    card (``signal_refused``): evidence is never dropped in silence.
    """

    messages: list[Message]
    refused: str | None = None


class RefusedError(BaccaratError):
    """An input the engine does not accept in its current state.

    With ``alarm`` (a kind and its text), the refusal is also raised as that alarm.
    """

    def __init__(self, text: str, *, alarm: tuple[AlarmKind, str] | None = None) -> None:
        super().__init__(text)
        self.alarm = alarm


def _signal_alarm(inp: Input, reason: str) -> tuple[AlarmKind, str] | None:
    """The notice for a refused signal of the table's own (no reply goes to anyone).

    A dealer's button (origin ``button``) or the shoe's cut card; a person's command
    (origin ``pit...``) is answered on its reply topic instead.
    """
    if inp.origin == "button":
        press = "void" if isinstance(inp, VoidRound) else inp.to_text()  # not its reason
        return "signal_refused", alarms.signal_refused(f"the dealer's '{press}'", reason)
    if isinstance(inp, CutCardSeen) and inp.origin is None:
        return "signal_refused", alarms.signal_refused("the shoe's cut card", reason)
    return None


class EngineCore:
    """The state of one table and what every room of its engine uses."""

    def __init__(self, profile: Profile, *, roads: bool = True) -> None:
        self.profile = profile
        self.seq = 0
        self.alarm_seq = 0
        self.shoe: Shoe | None = None
        self.round: Round | None = None
        self.roads: Roads | None = Roads() if roads else None
        self.recall: deque[RecalledRound] = deque(maxlen=RECALL_ROUNDS)
        self._last_shoe_number = 0
        self._lasting: dict[DeviceReportKind, Alarm] = {}
        """The open lasting device alarm of each report that raised it (``link_down``...)."""
        self._advantages: dict[Bet, Alarm] = {}
        """The ``advantage`` notice standing for each bet (raised, not yet gone back)."""
        self._open_alarms: dict[int, Alarm] = {}
        """Every open alarm by id, oldest first: what the retained ``alarms`` lists."""
        self._journal_lost: Alarm | None = None
        """The lasting ``journal_damaged`` alarm of a :class:`JournalLost`, open until the
        next shoe (carried in :meth:`counters`, so that a file's header resumes it)."""
        self._out: list[Message] = []
        self._ts: float | None = None
        self._origin: str | None = None
        """The origin of the input being applied (who gave the command), for its messages."""
        self._alarms_changed = False
        self._round_changed: Round | None = None
        self._shoe_changed = False
        """Cards were held aside: the shoe's counts changed without its message."""

    @classmethod
    def resume(
        cls, profile: Profile, counters: dict[str, int], *, roads: bool = True
    ) -> Self:
        """An engine that continues the numbering of another (see :meth:`counters`)."""
        engine = cls(profile, roads=roads)
        engine.seq = int(counters.get("seq", 0))
        engine.alarm_seq = int(counters.get("alarm_seq", 0))
        engine._last_shoe_number = int(counters.get("shoe", 0))
        if "lost_alarm" in counters:
            engine._resume_journal_lost(counters)
        return engine

    def _resume_journal_lost(self, counters: dict[str, int]) -> None:
        """The open alarm of a journal's loss, as :meth:`counters` wrote it (the shoe room's)."""

    def counters(self) -> dict[str, int]:
        """What a fresh engine needs to continue this one's numbering at a new shoe."""
        counters = {
            "seq": self.seq,
            "alarm_seq": self.alarm_seq,
            "shoe": self.shoe.number if self.shoe else self._last_shoe_number,
        }
        lost = self._journal_lost
        if lost is not None:  # open until the next shoe: a file's header carries it
            message = lost.message
            counters |= {
                "lost_alarm": lost.id, "lost_first": message.lost_first or 0,
                "lost_last": message.lost_last or 0, "lost_seq": message.seq,
                "lost_shoe": message.shoe or 0,
            }
            if message.ts is not None:
                counters["lost_ts_us"] = round(message.ts * 1e6)
        return counters

    def feed(self, inp: Input) -> Outcome:
        """Apply one input; return the messages it produced or why it was refused.

        A refused input changes nothing (but for the alarm that announces a refused new
        shoe): each handler checks before it changes state.
        """
        self._out = []
        self._ts = inp.ts
        self._origin = inp.origin
        self._alarms_changed = False
        self._round_changed = None
        self._shoe_changed = False
        try:
            self._handle(inp)
        except RefusedError as exc:
            if self._out:  # a handler must refuse before it emits; guard the invariant
                raise RuntimeError("handler refused after emitting") from exc
            alarm = exc.alarm or _signal_alarm(inp, str(exc))
            if alarm is not None:
                self._raise(*alarm, [])
                self._emit_changed_state()
            return Outcome(self._out, str(exc))
        self._emit_changed_state()
        return Outcome(self._out)

    def _emit_changed_state(self) -> None:
        """After an input: the round's state, the alarms and the shoe's, if they changed.

        The shoe's when cards left it with no shoe message of their own (held aside).
        """
        if self._round_changed is not None:
            self._emit_round(self._round_changed)
        if self._alarms_changed:
            self._emit(self._alarms_message(self._next_seq()))
        if self._shoe_changed and not any(isinstance(m, ShoeMessage) for m in self._out):
            self._emit_shoe()

    def open_alarms(self) -> list[AlarmMessage]:
        """Every open alarm's latest ``alarm`` message, oldest first.

        Open: an alarm with corrections until it is settled, and a ``lasting`` device
        alarm (``link_down``) until its device recovers. One-off alarms (``bad_data``,
        ``shoe_closed``, ...) are never open.
        """
        return [alarm.message for alarm in self._open_alarms.values()]

    def alarms_message(self, extra: Sequence[AlarmMessage] = ()) -> AlarmsMessage:
        """The ``alarms`` body of the open alarms now, plus ``extra`` ones, after them.

        For the table, to publish alarms the journal cannot record (a disk fault): it
        takes no new ``seq`` but the engine's last one, so the engine's sequence and a
        replay stay as they are. A board takes an ``alarms`` body whose ``seq`` is not
        below the last one it took, so this one replaces the engine's of the same ``seq``;
        a subscriber that drops duplicates by ``seq`` alone would drop it.
        """
        return self._alarms_message(self.seq, extra)

    def _alarms_message(self, seq: int, extra: Sequence[AlarmMessage] = ()) -> AlarmsMessage:
        return AlarmsMessage(seq=seq, ts=self._ts, alarms=[*self.open_alarms(), *extra])

    def _emit(self, message: Message) -> None:
        self._out.append(message)

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _emit_shoe(self) -> None:
        shoe = self.shoe
        if shoe is None:
            return
        self._emit(
            ShoeMessage(
                seq=self._next_seq(),
                ts=self._ts,
                shoe=shoe.number,
                profile=self.profile.name,
                decks=shoe.decks,
                cards_dealt=shoe.drawn - shoe.burned,
                cards_burned=shoe.burned,
                cards_left=shoe.cards_left,
                burn_due=shoe.burn_due or 0,
                phase=shoe.phase,
                cut_card=shoe.cut_card,
                last_round=self._is_last_round(),
                rounds=shoe.results,
                demo=shoe.demo_on,
                demo_rounds=shoe.demo_rounds,
            )
        )

    def _emit_roads(self) -> None:
        if self.roads is None or self.shoe is None:
            return
        self._emit(
            self.roads.message(
                seq=self._next_seq(),
                shoe=self.shoe.number,
                cards_left=self.shoe.cards_left,
                ts=self._ts,
            )
        )

    def _emit_card(
        self,
        shoe: Shoe,
        rnd: Round | None,
        position: Position | Literal["burn"],
        code: str | None,
        *,
        face_up: bool = False,
        totals: tuple[int, int] | None = None,
    ) -> None:
        if rnd is not None:
            rnd.shown.append(DealtCard(position=position, card=code))
            if totals is not None:
                rnd.shown_totals = totals
            self._round_changed = rnd
        self._emit(
            CardMessage(
                seq=self._next_seq(),
                ts=self._ts,
                shoe=shoe.number,
                round=rnd.number if rnd else None,
                position=position,
                card=code,
                face_up=face_up,
                player_total=totals[0] if totals else None,
                banker_total=totals[1] if totals else None,
                demo=rnd.demo if rnd else False,
            )
        )

    def _emit_round(self, rnd: Round) -> None:
        """The round's state as it stands: the retained ``round`` a late board starts from."""
        self._round_changed = None
        shoe = self.shoe.number if self.shoe else 0
        self._emit(rnd.message(shoe, self._next_seq(), self._ts))

    def _raise(
        self,
        kind: AlarmKind,
        text: str,
        corrections: list[Correction],
        *,
        card: Card | None = None,
        holds_card: bool = False,
        held: Sequence[Card | None] | None = None,
        foreign: bool = False,
        owner: Round | None = None,
        lasting: bool = False,
        lost: tuple[int, int] | None = None,
    ) -> Alarm:
        """Raise an alarm; a correctable one waits on ``owner`` (or the shoe) until settled.

        ``holds_card``: the alarm holds ``card`` aside; ``held``: these cards (oldest
        first). A card held aside where an alarm of the same kind already holds cards (the
        table it blocks goes on dealing) is coalesced into that alarm: one alarm, with a
        count. Cards of the shoe's own held aside are out of the shoe: its state changes.
        ``lasting``: open until cleared, though it has no correction; ``lost``: the range
        of ``seq`` numbers a ``journal_damaged`` alarm names.
        """
        cards = list(held) if held is not None else [card] if holds_card else []
        holds_card = bool(cards)
        if holds_card and not foreign:
            self._shoe_changed = True
        waiting = owner.alarms if owner is not None else self.shoe.alarms if self.shoe else None
        if holds_card and waiting is not None:
            for alarm in waiting:
                if alarm.holds_card and alarm.kind == kind:
                    alarm.cards.extend(cards)
                    self._recount(alarm)
                    return alarm
        self.alarm_seq += 1
        alarm = Alarm(
            self.alarm_seq,
            kind,
            list(corrections),
            text,
            cards=cards,
            holds_card=holds_card,
            foreign=foreign,
        )
        if alarm.corrections and waiting is not None:
            waiting.append(alarm)
        if alarm.corrections or kind in alarms.LASTING or lasting:
            self._open_alarms[alarm.id] = alarm
        self._announce(alarm, owner, card, lost)
        return alarm

    def _announce(
        self, alarm: Alarm, owner: Round | None, card: Card | None,
        lost: tuple[int, int] | None = None,
    ) -> None:
        """Publish a new alarm."""
        alarm.message = AlarmMessage(
            seq=self._next_seq(),
            ts=self._ts,
            id=alarm.id,
            kind=alarm.kind,
            article=alarms.ARTICLE[alarm.kind],
            correctable=bool(alarm.corrections),
            corrections=alarm.corrections,
            shoe=self.shoe.number if self.shoe else None,
            round=owner.number if owner else None,
            card=card.code if card else None,
            text=alarm.text,
            cards=[c.code if c else None for c in alarm.cards],
            count=max(len(alarm.cards), 1),
            lasting=alarm.id in self._open_alarms,
            lost_first=None if lost is None else lost[0],
            lost_last=None if lost is None else lost[1],
        )
        self._emit(alarm.message)
        if alarm.id in self._open_alarms:
            self._alarms_changed = True

    def _recount(self, alarm: Alarm) -> None:
        """A coalesced alarm holds a card more, or one fewer: only its open entry changes.

        It was raised once; the retained ``alarms`` carries its count, cards and text.
        """
        codes = [c.code if c else None for c in alarm.cards]
        text = alarms.coalesced(alarm.text, codes)
        alarm.message = replace(
            alarm.message, card=codes[0], text=text, count=len(codes), cards=codes
        )
        self._alarms_changed = True

    def _clear(self, alarm: Alarm, by: str, owner: Round | None) -> None:
        if owner is not None and alarm in owner.alarms:
            owner.alarms.remove(alarm)
        elif self.shoe is not None and alarm in self.shoe.alarms:
            self.shoe.alarms.remove(alarm)
        if self._open_alarms.pop(alarm.id, None) is not None:
            self._alarms_changed = True
        self._emit(
            AlarmClearedMessage(
                seq=self._next_seq(),
                ts=self._ts,
                id=alarm.id,
                kind=alarm.kind,
                by=by,
                shoe=self.shoe.number if self.shoe else None,
                round=owner.number if owner else None,
                origin=self._origin,
            )
        )
        if owner is not None:
            owner.settled.append(
                SettledAlarm(id=alarm.id, kind=alarm.kind, by=by, origin=self._origin)
            )
            if by != "void":  # a void replaces the round's entry itself
                self._update_recall(owner)

    def _open_round(self) -> Round | None:
        rnd = self.round
        return rnd if rnd is not None and not rnd.closed else None

    def _is_last_round(self) -> bool:
        shoe = self.shoe
        if shoe is None or shoe.last_round_no is None:
            return False
        rnd = self._open_round()
        current = rnd.number if rnd is not None else shoe.round_no + 1
        return current >= shoe.last_round_no

    def _require_shoe(self) -> Shoe:
        if self.shoe is None:
            raise RefusedError("no shoe in play: start one with 'shoe'")
        if self.shoe.phase == "closed":
            raise RefusedError(f"shoe {self.shoe.number} has ended: start a new one with 'shoe'")
        return self.shoe

    def _require_any_shoe(self) -> Shoe:
        """The shoe, ended or not: a correction may still settle its last round."""
        if self.shoe is None:
            raise RefusedError("no shoe in play")
        return self.shoe

    def _require_between_rounds(self, what: str) -> Shoe:
        shoe = self._require_shoe()
        rnd = self._open_round()
        if rnd is not None:
            raise RefusedError(f"{what} only between rounds: round {rnd.number} is not closed")
        return shoe

    def _handle(self, inp: Input) -> None:
        handler = HANDLERS.get(type(inp))
        if handler is None:
            raise TypeError(f"not an engine input: {inp!r}")
        handler.apply(self, inp)

    if TYPE_CHECKING:  # the rooms' methods that the core and the other rooms call

        def _update_recall(self, rnd: Round) -> None:
            """Defined in :mod:`baccarat.controller.engine.rounds`."""

        def _start_round(self, shoe: Shoe) -> Round:
            """Defined in :mod:`baccarat.controller.engine.rounds`."""
            raise NotImplementedError

        def _maybe_publish(self, shoe: Shoe, rnd: Round) -> None:
            """Defined in :mod:`baccarat.controller.engine.rounds`."""

        def _judge_kept(self, rnd: Round, declared: Winner) -> None:
            """Defined in :mod:`baccarat.controller.engine.corrections`."""

        def _burn_over(self, shoe: Shoe, by: str) -> None:
            """Defined in :mod:`baccarat.controller.engine.dealing`."""

        def _round_card(self, shoe: Shoe, rnd: Round, card: Card | None) -> None:
            """Defined in :mod:`baccarat.controller.engine.dealing`."""

        def _missing_card(self, rnd: Round, signal: str) -> None:
            """Defined in :mod:`baccarat.controller.engine.corrections`."""

        def _close_round(self, shoe: Shoe, rnd: Round, *, roads_changed: bool) -> None:
            """Defined in :mod:`baccarat.controller.engine.rounds`."""

        def _burn_card(
            self, shoe: Shoe, card: Card | None, rnd: Round | None, *, face_up: bool = False
        ) -> None:
            """Defined in :mod:`baccarat.controller.engine.dealing`."""


def listed_alarms(open_alarms: list[Alarm]) -> str:
    """Alarms as a refusal names them: ``#4 extra_card (2 cards)``."""
    return alarms.listed([(a.id, a.kind, len(a.cards)) for a in open_alarms])


def settling_corrections(open_alarms: list[Alarm]) -> str:
    """The corrections that settle these alarms: ``declare or void``."""
    corrections = dict.fromkeys(c for a in open_alarms for c in a.corrections)
    return " or ".join(corrections)
