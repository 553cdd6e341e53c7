"""The rules engine: a pure, synchronous state machine (docs/design.md, invariant 1).

``Engine.feed(input)`` takes one input (a card out of the shoe, a dealer's button, an
operator's command) and returns an :class:`Outcome`: the messages to publish, in order,
or a refusal that leaves the state unchanged. No I/O, no clock, no randomness: the same
inputs give the same messages, byte for byte.

The rounds
----------
A round opens on ``open`` or, in implicit mode, on the first card after a closed round.
Cards go P1, B1, P2, B2, then P3 and B3 as the tableau demands (Art. 7, 9). A round is
*complete* when the tableau says no card is due, and *closed* when it is complete, carries
no uncorrected alarm and its result has been published (on squeeze tables, after
``reveal``). A round that is not closed blocks the next one.

Misdeals (Art. 10)
------------------
A deviation raises an alarm at the input that proves it. A card the rules cannot place
(an extra card, a foreign or unreadable card, a card before ``open``) is *held aside* by
its alarm; it is in nobody's hand. ``accept_as_burn`` sends the oldest held card to the
discard and play goes on; ``void`` ends the round with no result. A round with an
uncorrected alarm publishes no result.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal, NamedTuple

from baccarat.cards import RANKS, Card
from baccarat.controller.engine import alarms
from baccarat.controller.engine.inputs import (
    AcceptAsBurn,
    Advantage,
    AnnounceBurn,
    Burn,
    CutCardSeen,
    Declare,
    Demo,
    DeviceReport,
    DeviceReportKind,
    DrawCard,
    EndShoe,
    Exposed,
    Input,
    JournalLost,
    NewShoe,
    OpenRound,
    Reveal,
    ShuffleSuspect,
    VoidRound,
)
from baccarat.controller.engine.roads import Roads
from baccarat.controller.engine.state import RECALL_ROUNDS, Alarm, Round, Shoe, WithheldCard
from baccarat.errors import BaccaratError
from baccarat.messages.bodies import (
    AlarmClearedMessage,
    AlarmKind,
    AlarmMessage,
    AlarmsMessage,
    CardMessage,
    Correction,
    DealtCard,
    Message,
    RecalledRound,
    RecallMessage,
    ResultMessage,
    SettledAlarm,
    ShoeMessage,
    VoidMessage,
)
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


class Engine:
    """The pure state machine of one table. Feed it inputs; publish what it returns."""

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
    def resume(cls, profile: Profile, counters: dict[str, int], *, roads: bool = True) -> Engine:
        """An engine that continues the numbering of another (see :meth:`counters`)."""
        engine = cls(profile, roads=roads)
        engine.seq = int(counters.get("seq", 0))
        engine.alarm_seq = int(counters.get("alarm_seq", 0))
        engine._last_shoe_number = int(counters.get("shoe", 0))
        if "lost_alarm" in counters:
            engine._resume_journal_lost(counters)
        return engine

    def _resume_journal_lost(self, counters: dict[str, int]) -> None:
        """The open ``journal_damaged`` alarm of a loss, as :meth:`counters` wrote it.

        Counters that do not name one whole (a header someone edited) resume none.
        """
        if any(key not in counters for key in ("lost_first", "lost_last", "lost_seq")):
            return
        first, last = int(counters["lost_first"]), int(counters["lost_last"])
        if not 0 < first <= last:
            return
        shoe = int(counters.get("lost_shoe", 0)) or None
        ts = counters.get("lost_ts_us")
        alarm = Alarm(int(counters["lost_alarm"]), "journal_damaged", [],
                      alarms.journal_lost(first, last))
        alarm.message = AlarmMessage(
            seq=int(counters["lost_seq"]), ts=None if ts is None else int(ts) / 1e6,
            id=alarm.id, kind=alarm.kind, article=alarms.ARTICLE[alarm.kind],
            correctable=False, corrections=[], shoe=shoe, round=None, text=alarm.text,
            lasting=True, lost_first=first, lost_last=last,
        )
        self._open_alarms[alarm.id] = alarm
        self._journal_lost = alarm

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

    # ------------------------------------------------------------------ entry point

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

    def _handle(self, inp: Input) -> None:
        match inp:
            case DrawCard():
                self._on_card(inp)
            case NewShoe():
                self._on_new_shoe(inp)
            case CutCardSeen():
                self._on_cut()
            case OpenRound():
                self._on_open(inp)
            case Reveal():
                self._on_reveal()
            case VoidRound():
                self._on_void(inp)
            case AcceptAsBurn():
                self._on_accept_as_burn(inp)
            case Burn():
                self._on_burn(inp)
            case Exposed():
                self._on_exposed()
            case AnnounceBurn():
                self._on_announce_burn()
            case Declare():
                self._on_declare(inp)
            case Demo():
                self._on_demo(inp)
            case EndShoe():
                self._on_end()
            case DeviceReport():
                self._on_device(inp)
            case Advantage():
                self._on_advantage(inp)
            case ShuffleSuspect():
                self._on_shuffle_suspect(inp)
            case JournalLost():
                self._on_journal_lost(inp)
            case _:
                raise TypeError(f"not an engine input: {inp!r}")

    # ------------------------------------------------------------------ emitting

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

    # ------------------------------------------------------------------ cards

    def _on_card(self, inp: DrawCard) -> None:
        """Place a card: the shoe's burn, the open round, a new round, or aside.

        Where the card goes is settled before its face is looked at, so that a card held
        aside (a foreign card, or an unreadable one whose face matters) is held by the
        round it came to: in implicit mode, the round it opens.
        """
        shoe, card = self.shoe, inp.card
        if shoe is None or shoe.phase == "closed":
            self._raise(
                "shoe_closed", alarms.shoe_closed(shoe.number if shoe else None), [], card=card
            )
            return
        rnd = self._open_round()
        shoe_burn = shoe.phase == "burning" or (rnd is None and bool(shoe.burn_due))
        if rnd is None and not shoe_burn and self.profile.open_mode != "explicit":
            rnd = self._start_round(shoe)
        if card is not None and shoe.is_foreign(card):
            self._hold_foreign(shoe, card, rnd)
            return
        shoe.take(card, keep=self.profile.continuous_shuffler)
        if shoe_burn:
            self._shoe_burn(shoe, card)
        elif rnd is not None:
            self._round_card(shoe, rnd, card)
        elif card is None:
            self._hold_unreadable(shoe, None)
        else:
            self._hold_before_open(shoe, card)

    def _open_round(self) -> Round | None:
        rnd = self.round
        return rnd if rnd is not None and not rnd.closed else None

    def _shoe_burn(self, shoe: Shoe, card: Card | None) -> None:
        """A burn card of the shoe's start (Art. 2.1) or of the house's burn (Art. 8)."""
        face_up = shoe.burn_due is None
        if face_up:
            if card is None:  # the face-up card sets the burn: its face matters
                self._hold_unreadable(shoe, None)
                return
            due = self.profile.initial_burn(RANKS[card.rank - 1]) or 0
        else:
            due = shoe.burn_due or 0
        shoe.burn_due = max(due - 1, 0)
        self._burn_card(shoe, card, None, face_up=face_up)
        if shoe.burn_due == 0:
            shoe.phase = "ready"
            self._burn_over(shoe, "burn")
            self._emit_shoe()

    def _burn_over(self, shoe: Shoe, by: str) -> None:
        """The burn is done, or moot as the shoe ends: ``burn_incomplete`` is settled."""
        for alarm in [a for a in shoe.alarms if a.kind == "burn_incomplete"]:
            self._clear(alarm, by, None)

    def _round_card(self, shoe: Shoe, rnd: Round, card: Card | None) -> None:
        rnd.dealt_since_open += 1
        if rnd.burn_due and not self._burn_announced(shoe, rnd):
            rnd.burn_due = 0  # the dealer's buttons say he dealt without burning
            self._raise(
                "burn_skipped",
                alarms.burn_skipped(rnd.number, self.profile.burn_per_round),
                ["declare", "void"],
                owner=rnd,
            )
        if rnd.burn_due:  # a plain burn card: its face does not matter
            rnd.burn_due -= 1
            self._burn_card(shoe, card, rnd)
            self._clear_missing(rnd)
        elif card is None:
            self._hold_unreadable(shoe, rnd)
        elif rnd.due is None:
            self._raise(
                "extra_card",
                alarms.extra_card(card.code, rnd.number),
                alarms.HELD_IN_ROUND,
                card=card,
                holds_card=True,
                owner=rnd,
            )
        else:
            self._deal(shoe, rnd, card)

    def _burn_announced(self, shoe: Shoe, rnd: Round) -> bool:
        """Whether the round's burn card may be taken as one (``burn_press``).

        Only where the press is required, and only for the round's first burn card: the
        press announces the round's burn whole, and is used up by it.
        """
        if self.profile.burn_press != "required" or rnd.burn_due < self.profile.burn_per_round:
            return True
        pressed, shoe.burn_pressed = shoe.burn_pressed, False
        return pressed

    def _on_announce_burn(self) -> None:
        """The dealer's burn button: the round's burn card comes next (``burn_press``)."""
        if self.profile.burn_press != "required":
            return  # the button changes nothing on this table
        shoe = self._require_shoe()
        if shoe.phase == "burning" or shoe.burn_due:
            return  # the shoe's own burn: checked by 'open' (burn_incomplete), not by presses
        if not self.profile.burn_per_round:
            raise RefusedError(f"profile {self.profile.name} burns no card at a round's start")
        rnd = self._open_round()
        if rnd is None and self.profile.open_mode == "explicit":
            raise RefusedError("no round is open: the round's burn is announced after 'open'")
        if rnd is not None and rnd.burn_due < self.profile.burn_per_round:
            raise RefusedError(f"round {rnd.number} has taken its first cards already")
        if shoe.burn_pressed:
            raise RefusedError("the round's burn was announced already")
        shoe.burn_pressed = True

    def _burn_card(
        self, shoe: Shoe, card: Card | None, rnd: Round | None, *, face_up: bool = False
    ) -> None:
        shoe.burned += 1
        code = card.code if card else None
        if rnd is not None:
            rnd.record_burn(code)
        self._emit_card(shoe, rnd, "burn", code, face_up=face_up)

    def _deal(self, shoe: Shoe, rnd: Round, card: Card) -> None:
        position = rnd.deal(card)
        self._clear_missing(rnd)
        if self.profile.reveal == "on_reveal" and not rnd.revealed:
            rnd.withheld.append(
                WithheldCard(position, card.code, rnd.player_total, rnd.banker_total)
            )
        else:
            self._emit_card(
                shoe, rnd, position, card.code, totals=(rnd.player_total, rnd.banker_total)
            )
        if rnd.complete:
            if rnd.declared is not None:  # the dealer declared before the last card came
                self._judge_kept(rnd, rnd.declared)
            self._maybe_publish(shoe, rnd)

    def _clear_missing(self, rnd: Round) -> None:
        """The card that was due came: a ``missing_card`` alarm is settled by ``deal``.

        Not one the dealer pressed ``declare`` after: that card is no proof (it may be the
        next round's, dealt without ``open``), so a person settles it.
        """
        for alarm in [a for a in rnd.alarms if a.kind == "missing_card" and a.by_deal]:
            self._clear(alarm, "deal", rnd)

    def _hold_foreign(self, shoe: Shoe, card: Card, rnd: Round | None) -> None:
        self._raise(
            "foreign_card",
            alarms.foreign_card(card.code, shoe.decks),
            alarms.HELD_IN_ROUND if rnd else alarms.HELD_OUTSIDE_ROUND,
            card=card,
            holds_card=True,
            foreign=True,
            owner=rnd,
        )

    def _hold_unreadable(self, shoe: Shoe, rnd: Round | None) -> None:
        self._raise(
            "unreadable_card",
            alarms.unreadable_card(face_up_burn=shoe.phase == "burning"),
            alarms.HELD_IN_ROUND if rnd else alarms.HELD_OUTSIDE_ROUND,
            holds_card=True,
            owner=rnd,
        )

    def _hold_before_open(self, shoe: Shoe, card: Card) -> None:
        """Explicit opening: a card when no round is open."""
        last = self.round
        if last is not None and not last.void:
            self._raise(
                "extra_card",
                alarms.extra_before_open(card.code, last.number),
                alarms.HELD_IN_ROUND,
                card=card,
                holds_card=True,
                owner=last,
            )
            return
        self._raise(
            "card_before_open",
            alarms.card_before_open(card.code),
            ["accept_as_burn", "open"],
            card=card,
            holds_card=True,
        )

    # ------------------------------------------------------------------ rounds

    def _start_round(self, shoe: Shoe) -> Round:
        shoe.round_no += 1
        demo = shoe.demo_on
        if demo:
            shoe.demo_rounds += 1
            if shoe.demo_rounds >= self.profile.max_demo_rounds:
                shoe.demo_on = False
        number = shoe.round_no
        rnd = Round(number, demo, f"{shoe.number}-{number}", self.profile.burn_per_round)
        self.round = rnd
        shoe.phase = "in_round"
        self._emit(rnd.message(shoe.number, self._next_seq(), self._ts))
        return rnd

    def _maybe_publish(self, shoe: Shoe, rnd: Round) -> None:
        """Publish the result once the rules allow: complete, no alarm, revealed if squeeze."""
        if rnd.winner is None or rnd.alarms or rnd.published or rnd.void:
            return
        if self.profile.reveal == "on_reveal" and not rnd.revealed:
            return
        for withheld in rnd.withheld:
            self._emit_card(
                shoe,
                rnd,
                withheld.position,
                withheld.card,
                totals=(withheld.player_total, withheld.banker_total),
            )
        rnd.withheld.clear()
        rnd.published = True
        player, banker = rnd.player_hand(), rnd.banker_hand()
        self._emit(
            ResultMessage(
                seq=self._next_seq(),
                ts=self._ts,
                shoe=shoe.number,
                round=rnd.number,
                round_id=rnd.round_id,
                winner=rnd.winner,
                player=player,
                banker=banker,
                demo=rnd.demo,
                exposed=list(rnd.exposed),
            )
        )
        if not rnd.demo:
            shoe.results += 1
            if self.roads is not None:
                page = self.profile.roads_page
                if page and len(self.roads) >= page:
                    self.roads.clear()  # a new page of roads (continuous shufflers)
                self.roads.add(
                    rnd.number,
                    rnd.winner,
                    player.pair,
                    banker.pair,
                    player.natural or banker.natural,
                )
        self._close_round(shoe, rnd, roads_changed=not rnd.demo)

    def _close_round(self, shoe: Shoe, rnd: Round, *, roads_changed: bool) -> None:
        self._emit_round(rnd)
        if self.profile.continuous_shuffler:
            shoe.give_back()
        shoe.phase = "closed" if shoe.ended else "ready"
        self._check_last_round(shoe, rnd)
        self._emit_shoe()
        if roads_changed:
            self._emit_roads()
        self._emit_recall(shoe, rnd)

    def _emit_recall(self, shoe: Shoe, rnd: Round) -> None:
        recalled = rnd.recalled(shoe.number)
        if rnd.void and self.recall and self.recall[-1].round_id == rnd.round_id:
            self.recall.pop()  # a shown round voided afterwards: replace its entry
        self.recall.append(recalled)
        self._emit(RecallMessage(seq=self._next_seq(), ts=self._ts, rounds=list(self.recall)))

    def _update_recall(self, rnd: Round) -> None:
        """A round already in the recall had an alarm settled since: show it there too."""
        for index, entry in enumerate(self.recall):
            if entry.round_id == rnd.round_id and self.shoe is not None:
                self.recall[index] = rnd.recalled(self.shoe.number)
                self._emit(
                    RecallMessage(seq=self._next_seq(), ts=self._ts, rounds=list(self.recall))
                )
                return

    def _check_last_round(self, shoe: Shoe, rnd: Round) -> None:
        if shoe.last_round_no is None:
            return
        if rnd.void:
            if rnd.number <= shoe.last_round_no:
                shoe.last_round_no += 1  # a void round is replayed, not counted
            return
        if rnd.number < shoe.last_round_no:
            return
        if shoe.tie_extension and rnd.winner == "tie":
            shoe.tie_extension = False
            shoe.last_round_no = rnd.number + 1
            return
        shoe.phase = "closed"

    def _is_last_round(self) -> bool:
        shoe = self.shoe
        if shoe is None or shoe.last_round_no is None:
            return False
        rnd = self._open_round()
        current = rnd.number if rnd is not None else shoe.round_no + 1
        return current >= shoe.last_round_no

    # ------------------------------------------------------------------ dealer and operator

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

    def _on_new_shoe(self, inp: NewShoe) -> None:
        """A new shoe; refused with a ``shoe_refused`` alarm while a round or a card waits.

        The alarm, not only the refusal: a shoe change the device announces has nobody
        waiting for a reply, and the cards that follow would only raise alarms of their own.
        """
        problem = self._new_shoe_problem(inp)
        if problem is not None:
            raise RefusedError(problem, alarm=("shoe_refused", alarms.shoe_refused(problem)))
        decks = inp.decks or self.profile.decks
        if self.shoe is not None:
            self._burn_over(self.shoe, "shoe")
        number = (self.shoe.number if self.shoe else self._last_shoe_number) + 1
        burn = decks if self.profile.burn == "decks" else self.profile.initial_burn()
        shoe = Shoe(number=number, decks=decks, burn_due=burn)
        shoe.phase = "burning" if burn is None or burn > 0 else "ready"
        for alarm in self._advantages.values():  # the cards they were for are shuffled in
            self._clear(alarm, "shoe", None)
        self._advantages.clear()
        self.shoe, self.round = shoe, None
        if self._journal_lost is not None:  # said for the shoe it happened in: cleared by
            self._clear(self._journal_lost, "shoe", None)  # the next (a file's header
            self._journal_lost = None  # resumes it open, so this replays the same)
        if self.roads is not None:
            self.roads.clear()
        self._emit_shoe()
        self._emit_roads()  # the retained roads start empty with the new shoe
        self.recall.clear()  # recall is of the shoe in play; the journal keeps older shoes

    def _new_shoe_problem(self, inp: NewShoe) -> str | None:
        """Why a new shoe cannot start now, or ``None``."""
        rnd = self._open_round()
        if rnd is not None:
            waiting = f" with open alarm {_listed(rnd.alarms)}" if rnd.alarms else ""
            return f"round {rnd.number} is in progress{waiting}: finish or void it first"
        decks = inp.decks or self.profile.decks
        if not 1 <= decks <= 12:
            return f"a shoe holds 1 to 12 decks, not {decks}"
        shoe = self.shoe
        held = [a for a in shoe.alarms if a.holds_card] if shoe else []
        if shoe is not None and held:
            return (
                f"shoe {shoe.number} holds a card aside: settle alarm "
                f"{_listed(held)} first (accept_as_burn)"
            )
        return None

    def _on_cut(self) -> None:
        shoe = self._require_shoe()
        if not self.profile.cut_card:
            raise RefusedError(f"profile {self.profile.name} has no cut card")
        if shoe.cut_card:
            raise RefusedError("the cut card has already come out")
        shoe.cut_card = True
        rnd = self._open_round()
        current = rnd.number if rnd is not None else shoe.round_no + 1
        after = self.profile.after_cut
        shoe.last_round_no = current + 1 if after == "one_more_round" else current
        shoe.tie_extension = after == "one_more_if_tie"
        self._emit_shoe()

    def _on_open(self, inp: OpenRound) -> None:
        shoe = self._require_shoe()
        rnd = self._open_round()
        if rnd is not None and not rnd.complete:
            if rnd.player or rnd.banker or (rnd.dealt and rnd.alarms):
                self._open_in_round(shoe, rnd)
                return
            missing = [a for a in rnd.alarms if a.kind == "missing_card"]
            if missing:  # 'reveal' or 'declare' before any card: the round is this one
                for alarm in missing:
                    self._clear(alarm, "open", rnd)
                rnd.declared = None
                return
        if rnd is not None:
            if not (rnd.player or rnd.banker or rnd.alarms):
                raise RefusedError(f"round {rnd.number} is already open")
            raise RefusedError(
                f"round {rnd.number} is not closed"
                + (
                    f": settle alarm {_listed(rnd.alarms)} first ({_settled_by(rnd.alarms)})"
                    if rnd.alarms
                    else ""
                )
            )
        if shoe.phase == "burning" or shoe.burn_due:
            for alarm in shoe.alarms:
                if alarm.kind == "burn_incomplete":
                    raise RefusedError(
                        f"alarm #{alarm.id} burn_incomplete is open: "
                        f"burn {alarms.burn_left(shoe.burn_due)} first, then open"
                    )
            self._raise("burn_incomplete", alarms.burn_incomplete(shoe.burn_due), ["burn"])
            return
        # The pit's 'open' says the cards dealt before it are the round's (the dealer forgot
        # to press it). The dealer's own press after them says they are not: they stay held.
        before_open = [] if inp.origin == "button" else [
            a for a in shoe.alarms if a.kind == "card_before_open"
        ]
        shoe.burn_pressed = False  # a press before this 'open' announced no burn of its round
        new = self._start_round(shoe)
        for alarm in before_open:
            self._clear(alarm, "open", None)
            for card in alarm.cards:
                self._round_card(shoe, new, card)

    def _open_in_round(self, shoe: Shoe, rnd: Round) -> None:
        """``open`` while the round has cards and is not complete: a misdeal.

        The dealer starts a round: the cards before the press are not its cards (an extra
        card of the last round that implicit opening took for this one's first, or a round
        left unfinished). They are held aside by an ``open_in_round`` alarm, which blocks
        the result until the pit burns them or voids the round, and the round starts again
        from its burn and first card. Its burn cards stay in the discard.
        """
        hands = {"P": iter(rnd.player), "B": iter(rnd.banker)}
        held: list[Card | None] = [
            next(hands[d.position[0]]) for d in rnd.dealt if d.position != "burn"
        ]
        burns = sum(d.position == "burn" for d in rnd.dealt)
        declared = rnd.declared
        for alarm in [a for a in rnd.alarms if a.kind == "missing_card"]:
            self._clear(alarm, "open", rnd)  # the round starts again: nothing is due of it
        rnd.restart(self.profile.burn_per_round)
        shoe.burn_pressed = False  # the round's burn is announced again after this 'open'
        self._round_changed = rnd
        text = alarms.open_in_round(
            rnd.number, [c.code for c in held if c is not None], burns, declared
        )
        if held:
            self._raise("open_in_round", text, alarms.HELD_IN_ROUND, held=held, owner=rnd)
        else:
            self._raise("open_in_round", text, [], owner=rnd)

    def _on_reveal(self) -> None:
        shoe = self._require_any_shoe()
        rnd = self.round
        if rnd is None or rnd.void:
            raise RefusedError("no round to reveal")
        if rnd.published:
            if self.profile.reveal == "on_reveal":
                raise RefusedError(f"round {rnd.number} is already revealed")
            return  # immediate tables show every round at once; the button changes nothing
        if not rnd.complete:
            self._missing_card(rnd, "reveal")
            return
        rnd.revealed = True
        self._maybe_publish(shoe, rnd)

    def _missing_card(self, rnd: Round, signal: str) -> None:
        for alarm in rnd.alarms:
            if alarm.kind == "missing_card":
                raise RefusedError(
                    f"alarm #{alarm.id} missing_card is open: deal {rnd.next_card} or void"
                )
        self._raise(
            "missing_card",
            alarms.missing_card(rnd.number, str(rnd.next_card), signal),
            ["deal", "void"],
            owner=rnd,
        )

    def _on_declare(self, inp: Declare) -> None:
        """The declared winner, judged against the cards, or kept until they are all out.

        A matching ``declare`` settles ``result_mismatch``; from a person (not the dealer's
        button) it also settles a ``missing_card`` that the due card could not (a
        ``declare`` came between them), once the round is complete.
        """
        shoe = self._require_any_shoe()
        rnd = self.round
        if rnd is None or rnd.void:
            raise RefusedError("no round to declare")
        if rnd.winner is None:
            self._keep_declare(rnd, inp.winner)
            return
        mismatches = [a for a in rnd.alarms if a.kind == "result_mismatch"]
        if inp.winner == rnd.winner:
            settled = mismatches
            if inp.origin != "button":
                settled += [a for a in rnd.alarms if a.kind in ("missing_card", "burn_skipped")]
            for alarm in settled:
                self._clear(alarm, "declare", rnd)
            self._maybe_publish(shoe, rnd)
            return
        if mismatches:
            raise RefusedError(
                f"alarm #{mismatches[0].id} result_mismatch is open: the cards say "
                f"{rnd.winner}; declare {rnd.winner} or void"
            )
        self._raise(
            "result_mismatch",
            alarms.result_mismatch(inp.winner, rnd.winner, rnd.player_total, rnd.banker_total),
            ["declare", "void"],
            owner=rnd,
        )

    def _keep_declare(self, rnd: Round, winner: Winner) -> None:
        """``declare`` while a card is due: kept, judged when the round is complete.

        It raises ``missing_card`` if none is open; an open one that the due card would
        have settled now waits for a person: the dealer has moved on past it.
        """
        rnd.declared = winner
        missing = [a for a in rnd.alarms if a.kind == "missing_card"]
        if not missing:
            self._raise(
                "missing_card",
                alarms.missing_card(rnd.number, str(rnd.next_card), f"declare {winner}"),
                ["deal", "void"],
                owner=rnd,
            )
            return
        for alarm in missing:
            if alarm.by_deal:
                alarm.by_deal = False
                alarm.corrections = ["declare", "void"]
                alarm.text = alarms.missing_card_checked(alarm.text, f"declare {winner}")
                alarm.message = replace(
                    alarm.message, corrections=alarm.corrections, text=alarm.text
                )
                self._alarms_changed = True

    def _judge_kept(self, rnd: Round, declared: Winner) -> None:
        """The round is complete: a ``declare`` kept from before is judged now."""
        assert rnd.winner is not None
        if declared == rnd.winner or any(a.kind == "result_mismatch" for a in rnd.alarms):
            return
        self._raise(
            "result_mismatch",
            alarms.result_mismatch(
                declared, rnd.winner, rnd.player_total, rnd.banker_total, kept=True
            ),
            ["declare", "void"],
            owner=rnd,
        )

    def _on_void(self, inp: VoidRound) -> None:
        shoe = self._require_any_shoe()
        rnd = self.round
        if rnd is None or rnd.void:
            raise RefusedError("no round to void")
        if rnd.published and not inp.confirm:
            raise RefusedError(
                f"round {rnd.number}'s result ({rnd.winner}) is already published: voiding it "
                "takes it off the roads; send void with \"confirm\": true to do so"
            )
        # the dealer's 'open' that interrupted the round stands: the round he opened
        # follows, if he has dealt nothing into it yet
        reopen = rnd.dealt_since_open == 0 and any(
            a.kind == "open_in_round" for a in rnd.alarms
        )
        for alarm in list(rnd.alarms):
            self._clear(alarm, "void", rnd)
        was_published = rnd.published and not rnd.demo
        if was_published:
            shoe.results -= 1
            if self.roads is not None:
                self.roads.remove(rnd.number)
        rnd.void = True
        rnd.voided_by = inp.origin
        rnd.withheld.clear()
        self._emit(
            VoidMessage(
                seq=self._next_seq(),
                ts=self._ts,
                shoe=shoe.number,
                round=rnd.number,
                round_id=rnd.round_id,
                reason=inp.reason,
                demo=rnd.demo,
                origin=inp.origin,
            )
        )
        self._close_round(shoe, rnd, roads_changed=was_published)
        if reopen and shoe.phase != "closed":
            self._start_round(shoe)

    def _on_accept_as_burn(self, inp: AcceptAsBurn) -> None:
        shoe = self._require_any_shoe()
        found = self._oldest_held(shoe, inp.alarm)
        if found is None:
            if inp.alarm is not None:
                raise RefusedError(f"alarm #{inp.alarm} is not open or holds no card")
            raise RefusedError("no card is held aside by an alarm")
        alarm, owner = found
        card = alarm.cards.pop(0)  # one card per correction, the oldest first
        if alarm.foreign:  # not one of the shoe's cards: to the discard, but not counted
            self._emit_card(shoe, owner, "burn", card.code if card else None)
        else:
            self._burn_card(shoe, card, owner)
        if alarm.cards:
            self._recount(alarm)  # it still holds cards: one fewer
        else:
            self._clear(alarm, "accept_as_burn", owner)
        published_before = owner is not None and owner.published
        if owner is not None:
            self._maybe_publish(shoe, owner)
        if owner is None or owner.published == published_before:  # else closing the round
            self._emit_shoe()  # has just sent the shoe's state

    def _oldest_held(
        self, shoe: Shoe, alarm_id: int | None = None
    ) -> tuple[Alarm, Round | None] | None:
        """The alarm that holds the oldest card aside (of alarm ``alarm_id``, if given)."""
        candidates: list[tuple[Alarm, Round | None]] = [
            (a, None) for a in shoe.alarms if a.holds_card
        ]
        if self.round is not None:
            candidates += [(a, self.round) for a in self.round.alarms if a.holds_card]
        if alarm_id is not None:
            candidates = [(a, owner) for a, owner in candidates if a.id == alarm_id]
        if not candidates:
            return None
        return min(candidates, key=lambda pair: pair[0].id)

    def _on_burn(self, inp: Burn) -> None:
        shoe = self._require_between_rounds("burn (Art. 8)")
        if self.profile.continuous_shuffler:
            raise RefusedError("an automatic shuffler-dealer burns no cards")
        if shoe.phase == "burning":
            raise RefusedError(
                "the shoe's own burn is still in progress: "
                f"burn {alarms.burn_left(shoe.burn_due)} from the shoe"
            )
        if not 1 <= inp.count <= 60:
            raise RefusedError(f"burn 1 to 60 cards, not {inp.count}")
        shoe.burn_due = (shoe.burn_due or 0) + inp.count
        self._emit_shoe()

    def _on_exposed(self) -> None:
        rnd = self._open_round()
        if rnd is None or rnd.last_position is None:
            raise RefusedError("no card of an open round to mark as exposed")
        if rnd.last_position not in rnd.exposed:
            rnd.exposed.append(rnd.last_position)

    def _on_demo(self, inp: Demo) -> None:
        shoe = self._require_between_rounds("demo on/off")
        if inp.on == shoe.demo_on:
            return
        if not inp.on:
            shoe.demo_on = False
            self._emit_shoe()
            return
        if shoe.demo_rounds >= self.profile.max_demo_rounds:
            self._raise(
                "demo_limit",
                alarms.demo_limit(shoe.demo_rounds, self.profile.max_demo_rounds),
                [],
            )
            return
        shoe.demo_on = True
        self._emit_shoe()

    def _on_end(self) -> None:
        shoe = self._require_between_rounds("end shoe (Art. 3.2)")
        shoe.phase = "closed"
        shoe.ended = True
        self._burn_over(shoe, "end")
        self._emit_shoe()

    def _on_device(self, inp: DeviceReport) -> None:
        """A device's report: an alarm, or the end of a lasting one (``link_up``...)."""
        if inp.kind in alarms.NOTED:
            return
        raised_by = alarms.RECOVERS.get(inp.kind)
        if raised_by is not None:
            alarm = self._lasting.pop(raised_by, None)
            if alarm is not None:
                self._clear(alarm, inp.kind, None)
            return
        if inp.kind in self._lasting:
            return  # already open: one alarm until its device recovers
        kind = alarms.DEVICE_ALARM[inp.kind]
        rnd = self._open_round() if inp.kind == "restart" else None  # the round to check
        alarm = self._raise(kind, inp.text or kind.replace("_", " "), [], owner=rnd)
        if kind in alarms.LASTING:
            self._lasting[inp.kind] = alarm

    def left_by_rank(self) -> tuple[int, ...] | None:
        """Cards of each rank (ace .. king) the shoe in play holds still, as far as known.

        Out are the cards of the shoe's own that the engine counted out: dealt, burned and
        held aside by an alarm (a foreign card is none of the shoe's; a continuous shuffler
        has taken back its closed rounds' cards). An unreadable card is of no known rank:
        it is counted by :attr:`Shoe.cards_left` but not here. ``None`` without a shoe.
        """
        shoe = self.shoe
        if shoe is None:
            return None
        ranks = len(RANKS)
        return tuple(
            4 * shoe.decks - sum(shoe.counts[rank::ranks]) for rank in range(ranks)
        )

    def advantages(self) -> frozenset[Bet]:
        """The bets whose ``advantage`` notice stands (raised and not gone back)."""
        return frozenset(self._advantages)

    def _on_advantage(self, inp: Advantage) -> None:
        """The edge watch's crossing: raise the bet's ``advantage`` notice, or clear it."""
        shoe = self._require_any_shoe()
        left = self.left_by_rank() or ()
        out = shoe.total - sum(left)
        if (inp.shoe, inp.round, inp.cards_out) != (shoe.number, shoe.round_no, out):
            raise RefusedError(
                f"advantage computed for shoe {inp.shoe} round {inp.round} with "
                f"{inp.cards_out} cards out; shoe {shoe.number} round {shoe.round_no} has "
                f"{out} out: stale"
            )
        alarm = self._advantages.get(inp.bet)
        if inp.on == (alarm is not None):
            state = "stands already" if inp.on else "is not standing"
            raise RefusedError(f"the {inp.bet} advantage {state}")
        if alarm is not None:
            del self._advantages[inp.bet]
            self._clear(alarm, "edge", None)
            return
        rnd = self.round if self.round is not None and self.round.number == inp.round else None
        text = alarms.advantage(inp.bet, inp.player_edge, inp.threshold, inp.cards_out)
        self._advantages[inp.bet] = self._raise("advantage", text, [], owner=rnd)
    def _on_shuffle_suspect(self, inp: ShuffleSuspect) -> None:
        """The daemon's shuffle check found a repeat (decided outside: a notice as it says)."""
        text = alarms.shuffle_suspect(
            inp.table, inp.shoe, (inp.earlier_first, inp.earlier_last), (inp.first, inp.last),
            cards=inp.cards, gap=inp.gap,
        )
        self._raise("shuffle_suspect", text, [])

    def _on_journal_lost(self, inp: JournalLost) -> None:
        """Numbering goes on after the lost range; a lasting ``journal_damaged`` names it.

        Decided by the daemon at a start (outside the engine's inputs, so it is an input
        of its own, and a replay numbers on the same way).
        """
        if inp.first <= self.seq:
            raise RefusedError(
                f"seq {inp.first} to {inp.last} cannot be lost: this table has numbered up to"
                f" {self.seq}, and the journal holds their inputs"
            )
        self.seq = inp.last
        if self._journal_lost is not None:  # an earlier loss: this alarm names the newer
            self._clear(self._journal_lost, "journal_lost", None)
        self._journal_lost = self._raise(
            "journal_damaged", alarms.journal_lost(inp.first, inp.last), [], lasting=True,
            lost=(inp.first, inp.last),
        )

    @property
    def publish_refused(self) -> bool:
        """A ``publish_refused`` alarm is open (the broker refused the table's messages)."""
        return "publish_refused" in self._lasting


def _listed(open_alarms: list[Alarm]) -> str:
    return alarms.listed([(a.id, a.kind, len(a.cards)) for a in open_alarms])


def _settled_by(open_alarms: list[Alarm]) -> str:
    """The corrections that settle these alarms: ``declare or void``."""
    corrections = dict.fromkeys(c for a in open_alarms for c in a.corrections)
    return " or ".join(corrections)
