"""The rules engine: a pure, synchronous state machine.

``Engine.feed(input)`` takes one input (a card out of the shoe, a dealer's button, an
operator's command) and returns an :class:`Outcome`: the messages to publish, in order,
or a refusal that leaves the state unchanged. No I/O, no clock, no randomness: the same
inputs give the same messages, byte for byte (invariant 1).

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
(an extra card, a foreign or unreadable card, a card before ``open``, a card after the shoe
ended) is *held aside* by its alarm; it is in nobody's hand. ``accept_as_burn`` sends the
oldest held card to the discard and play goes on; ``void`` ends the round with no result.
A round with an uncorrected alarm publishes no result.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from baccarat.cards import RANKS, Card
from baccarat.controller.engine.inputs import (
    AcceptAsBurn,
    Burn,
    CutCardSeen,
    Declare,
    Demo,
    DeviceReport,
    DrawCard,
    EndShoe,
    Exposed,
    Input,
    NewShoe,
    OpenRound,
    Reveal,
    VoidRound,
)
from baccarat.messages.bodies import (
    AlarmClearedMessage,
    AlarmKind,
    AlarmMessage,
    CardMessage,
    Correction,
    DealtCard,
    HandResult,
    Message,
    PositionName,
    RecalledRound,
    RecallMessage,
    ResultMessage,
    RoundMessage,
    ShoeMessage,
    ShoePhase,
    VoidMessage,
    WinnerName,
)
from baccarat.rules import tableau
from baccarat.rules.profiles import Profile
from baccarat.rules.tableau import DEAL_ORDER

if TYPE_CHECKING:
    from baccarat.controller.engine.roads import Roads

RECALL_ROUNDS = 10
"""Rounds kept for game recall."""

ARTICLE: dict[AlarmKind, str] = {
    "extra_card": "9, 10",
    "missing_card": "9, 10",
    "card_before_open": "7, 10",
    "foreign_card": "1, 10",
    "unreadable_card": "10",
    "result_mismatch": "11, 10",
    "burn_incomplete": "2.1, 8",
    "shoe_closed": "3.1",
    "demo_limit": "2.2",
    "link_down": "device",
    "device_fault": "device",
    "bad_data": "device",
    "journal_damaged": "device",
}
_DEVICE_ALARM: dict[str, AlarmKind] = {
    "link_down": "link_down",
    "fault": "device_fault",
    "bad_data": "bad_data",
    "journal": "journal_damaged",
}


@dataclass(slots=True)
class Alarm:
    """An uncorrected deviation; ``held`` is the card it holds aside, if any."""

    id: int
    kind: AlarmKind
    corrections: list[Correction]
    held: Card | None = None
    holds_card: bool = False
    foreign: bool = False


@dataclass(slots=True)
class Round:
    """One round of a shoe."""

    number: int
    demo: bool
    round_id: str  # "<shoe>-<round>", unique within a table
    burn_due: int = 0
    player: list[Card] = field(default_factory=list)
    banker: list[Card] = field(default_factory=list)
    player_total: int = 0
    banker_total: int = 0
    alarms: list[Alarm] = field(default_factory=list)
    exposed: list[str] = field(default_factory=list)
    withheld: list[dict[str, Any]] = field(default_factory=list)
    last_position: str | None = None
    dealt: list[DealtCard] = field(default_factory=list)  # every card, in dealing order
    due: tableau.Position | None = "P1"  # kept equal to tableau.next_position of the hands
    complete: bool = False
    revealed: bool = False
    published: bool = False
    void: bool = False
    winner: WinnerName | None = None

    @property
    def closed(self) -> bool:
        """Complete, settled and shown (or void): the next round may begin."""
        return self.void or (self.published and not self.alarms)

    def next_position(self) -> tableau.Position | None:
        """Where the next card goes by the tableau; ``None`` when complete."""
        return self.due


@dataclass(slots=True)
class Shoe:
    """One shoe: inventory, burn, cut card, demo rounds, last round."""

    number: int
    decks: int
    counts: list[int]
    phase: ShoePhase = "burning"
    burn_due: int | None = 0
    drawn: int = 0
    burned: int = 0
    cut_card: bool = False
    last_round_no: int | None = None
    tie_extension: bool = False
    demo_on: bool = False
    demo_rounds: int = 0
    results: int = 0
    round_no: int = 0
    shoe_alarms: list[Alarm] = field(default_factory=list)
    taken: list[Card] = field(default_factory=list)
    ended: bool = False

    @property
    def total(self) -> int:
        """Cards in the shoe when full."""
        return self.decks * 52


class Outcome(NamedTuple):
    """What one input produced: messages to publish, or a refusal (state unchanged)."""

    messages: list[Message]
    refused: str | None = None


_outcome = tuple.__new__
"""``Outcome(messages)`` without the named tuple's Python-level ``__new__``, which costs a
few percent of a card's whole trip through the engine, on every input."""


class RefusedError(Exception):
    """An input the engine does not accept in its current state."""


class Engine:
    """The pure state machine of one table. Feed it inputs; publish what it returns."""

    def __init__(self, profile: Profile, *, roads: bool = True) -> None:
        self.profile = profile
        self._squeeze = profile.reveal == "on_reveal"
        self._continuous = profile.continuous_shuffler
        self._implicit = profile.open_mode == "implicit"
        self.seq = 0
        self.alarm_seq = 0
        self.shoe: Shoe | None = None
        self.round: Round | None = None
        self.roads: Roads | None = None
        if roads:
            from baccarat.controller.engine.roads import Roads

            self.roads = Roads()
        self._out: list[Message] = []
        self._ts: float | None = None
        self._handlers: dict[type[Any], Any] = {
            DrawCard: self._on_card,
            NewShoe: self._on_new_shoe,
            CutCardSeen: self._on_cut,
            OpenRound: self._on_open,
            Reveal: self._on_reveal,
            VoidRound: self._on_void,
            AcceptAsBurn: self._on_accept_as_burn,
            Burn: self._on_burn,
            Exposed: self._on_exposed,
            Declare: self._on_declare,
            Demo: self._on_demo,
            EndShoe: self._on_end,
            DeviceReport: self._on_device,
        }
        self._link_alarm: Alarm | None = None
        self.recall: deque[RecalledRound] = deque(maxlen=RECALL_ROUNDS)
        self._last_shoe_number = 0

    @classmethod
    def resume(cls, profile: Profile, counters: dict[str, int], *, roads: bool = True) -> Engine:
        """An engine that continues the numbering of another (see :meth:`counters`)."""
        engine = cls(profile, roads=roads)
        engine.seq = int(counters.get("seq", 0))
        engine.alarm_seq = int(counters.get("alarm_seq", 0))
        engine._last_shoe_number = int(counters.get("shoe", 0))
        return engine

    def counters(self) -> dict[str, int]:
        """What a fresh engine needs to continue this one's numbering at a new shoe."""
        return {
            "seq": self.seq,
            "alarm_seq": self.alarm_seq,
            "shoe": self.shoe.number if self.shoe else self._last_shoe_number,
        }

    # ------------------------------------------------------------------ entry point

    def feed(self, inp: Input) -> Outcome:
        """Apply one input; return the messages it produced or why it was refused.

        A refused input changes nothing: each handler checks before it changes state.
        """
        self._out = []
        self._ts = inp.ts
        try:
            if type(inp) is DrawCard:  # nine inputs in ten
                self._on_card(inp)
            else:
                self._handlers[type(inp)](inp)
        except RefusedError as exc:
            if self._out:  # a handler must refuse before it emits; guard the invariant
                raise RuntimeError("handler refused after emitting") from exc
            return Outcome([], str(exc))
        return _outcome(Outcome, (self._out, None))

    # ------------------------------------------------------------------ emitting

    def _emit(self, cls: type[Message], **fields: Any) -> None:
        self.seq += 1
        self._out.append(cls(seq=self.seq, ts=self._ts, **fields))

    def _emit_shoe(self) -> None:
        shoe = self.shoe
        if shoe is None:
            return
        self.seq += 1
        self._out.append(
            ShoeMessage(
                shoe.number,
                self.profile.name,
                shoe.decks,
                shoe.drawn - shoe.burned,  # cards_dealt
                shoe.burned,  # cards_burned
                shoe.decks * 52 - shoe.drawn,  # cards_left
                shoe.burn_due or 0,
                shoe.phase,
                shoe.cut_card,
                shoe.last_round_no is not None and self._is_last_round(),
                shoe.results,  # rounds
                shoe.demo_on,  # demo
                shoe.demo_rounds,
                seq=self.seq,
                ts=self._ts,
            )
        )

    def _emit_roads(self) -> None:
        if self.roads is None or self.shoe is None:
            return
        self.seq += 1
        shoe = self.shoe
        self._out.append(
            self.roads.message(
                seq=self.seq, shoe=shoe.number, cards_left=shoe.total - shoe.drawn, ts=self._ts
            )
        )

    def _raise_alarm(
        self,
        kind: AlarmKind,
        text: str,
        corrections: list[Correction],
        *,
        card: Card | None = None,
        holds_card: bool = False,
        foreign: bool = False,
        on_round: Round | None = None,
        pending: bool = True,
    ) -> Alarm:
        self.alarm_seq += 1
        alarm = Alarm(
            self.alarm_seq, kind, corrections, held=card, holds_card=holds_card, foreign=foreign
        )
        if pending and corrections:
            if on_round is not None:
                on_round.alarms.append(alarm)
            elif self.shoe is not None:
                self.shoe.shoe_alarms.append(alarm)
        self._emit(
            AlarmMessage,
            id=alarm.id,
            kind=kind,
            article=ARTICLE[kind],
            correctable=bool(corrections),
            corrections=corrections,
            shoe=self.shoe.number if self.shoe else None,
            round=on_round.number if on_round else None,
            card=card.code if card else None,
            text=text,
        )
        return alarm

    def _clear_alarm(self, alarm: Alarm, by: str, rnd: Round | None) -> None:
        if rnd is not None and alarm in rnd.alarms:
            rnd.alarms.remove(alarm)
        elif self.shoe is not None and alarm in self.shoe.shoe_alarms:
            self.shoe.shoe_alarms.remove(alarm)
        self._emit(
            AlarmClearedMessage,
            id=alarm.id,
            kind=alarm.kind,
            by=by,
            shoe=self.shoe.number if self.shoe else None,
            round=rnd.number if rnd else None,
        )

    # ------------------------------------------------------------------ cards

    def _on_card(self, inp: DrawCard) -> None:
        card, shoe, rnd = inp.card, self.shoe, self.round
        if (
            card is not None
            and shoe is not None
            and rnd is not None
            and shoe.phase == "in_round"
            and rnd.due is not None
            and not rnd.burn_due
            and not rnd.void
            and shoe.counts[card.index] < shoe.decks
        ):  # the common case, a card due to a hand of the open round: straight to it
            shoe.drawn += 1
            shoe.counts[card.index] += 1
            if self._continuous:
                shoe.taken.append(card)
            self._deal(shoe, rnd, rnd.due, card)
            return
        if (
            card is not None
            and shoe is not None
            and shoe.phase == "ready"
            and self._implicit
            and not shoe.burn_due
            and (rnd is None or rnd.closed)
            and shoe.counts[card.index] < shoe.decks
        ):  # the next common case: the card that opens the next round (implicit opening)
            shoe.drawn += 1
            shoe.counts[card.index] += 1
            if self._continuous:
                shoe.taken.append(card)
            self._round_card(shoe, self._start_round(shoe), card)
            return
        if shoe is None or shoe.phase == "closed":
            self._raise_alarm(
                "shoe_closed",
                "a card came out but no shoe is in play"
                if shoe is None
                else f"a card came out after shoe {shoe.number} ended",
                [],
                card=card,
            )
            return
        if card is not None and shoe.counts[card.index] >= shoe.decks:
            self._hold_foreign(shoe, card)
            return
        self._take(shoe, card)
        if card is None and not self._burning_plain(shoe):
            self._hold_unreadable(shoe)
            return
        self._place(shoe, card)

    def _take(self, shoe: Shoe, card: Card | None) -> None:
        """Count a card of our own out of the shoe (it is dealt, burned or held)."""
        shoe.drawn += 1
        if card is not None:
            shoe.counts[card.index] += 1
            if self._continuous:
                shoe.taken.append(card)

    def _burning_plain(self, shoe: Shoe) -> bool:
        """A burn card whose face does not matter is due next."""
        if shoe.phase == "burning":
            return shoe.burn_due is not None
        rnd = self.round
        if rnd is not None and not rnd.closed:
            return rnd.burn_due > 0
        return bool(shoe.burn_due)

    def _hold_foreign(self, shoe: Shoe, card: Card) -> None:
        rnd = self._open_round_or_none()
        self._raise_alarm(
            "foreign_card",
            f"{card.code} is one more than the {shoe.decks} of it that a {shoe.decks}-deck "
            "shoe holds: a foreign or duplicate card",
            ["accept_as_burn", "void"] if rnd else ["accept_as_burn"],
            card=card,
            holds_card=True,
            foreign=True,
            on_round=rnd,
        )

    def _hold_unreadable(self, shoe: Shoe) -> None:
        rnd = self._open_round_or_none()
        what = "the face-up burn card" if shoe.phase == "burning" else "a card"
        self._raise_alarm(
            "unreadable_card",
            f"the shoe could not read {what}; it is held aside until corrected",
            ["accept_as_burn", "void"] if rnd else ["accept_as_burn"],
            holds_card=True,
            on_round=rnd,
        )

    def _open_round_or_none(self) -> Round | None:
        rnd = self.round
        return rnd if rnd is not None and not rnd.closed else None

    def _place(self, shoe: Shoe, card: Card | None) -> None:
        """Put a counted card where it belongs: shoe burn, round burn, a hand, or aside."""
        if shoe.phase == "burning":
            self._shoe_burn(shoe, card)
            return
        rnd = self.round
        if rnd is not None and not rnd.closed:
            self._round_card(shoe, rnd, card)
            return
        if shoe.burn_due:
            shoe.burn_due = shoe.burn_due - 1
            self._burn_card(shoe, card, rnd=None)
            if not shoe.burn_due:
                self._emit_shoe()
            return
        if self.profile.open_mode == "explicit":
            self._hold_before_open(shoe, card)
            return
        self._start_round(shoe)
        assert self.round is not None
        self._round_card(shoe, self.round, card)

    def _shoe_burn(self, shoe: Shoe, card: Card | None) -> None:
        due = shoe.burn_due
        face_up = due is None
        if due is None:
            assert card is not None  # an unreadable face-up card is held, never burned here
            due = self.profile.initial_burn(RANKS[card.rank - 1]) or 0
        shoe.burn_due = max(due - 1, 0)
        self._burn_card(shoe, card, rnd=None, face_up=face_up)
        if shoe.burn_due == 0:
            shoe.phase = "ready"
            self._emit_shoe()

    def _burn_card(
        self, shoe: Shoe, card: Card | None, rnd: Round | None, *, face_up: bool = False
    ) -> None:
        shoe.burned += 1
        if rnd is not None:
            rnd.dealt.append(_dealt_card("burn", card.code if card else None))
        self._emit(
            CardMessage,
            shoe=shoe.number,
            round=rnd.number if rnd else None,
            position="burn",
            card=card.code if card else None,
            face_up=face_up,
            demo=rnd.demo if rnd else False,
        )

    def _hold_before_open(self, shoe: Shoe, card: Card | None) -> None:
        last = self.round
        code = card.code if card else "an unreadable card"
        if last is not None and not last.void:
            self._raise_alarm(
                "extra_card",
                f"{code} came out after round {last.number} was complete and before 'open': "
                "a third card against the tableau, or the next round dealt without 'open'",
                ["accept_as_burn", "void"],
                card=card,
                holds_card=True,
                on_round=last,
            )
            return
        self._raise_alarm(
            "card_before_open",
            f"{code} came out before the round was opened",
            ["accept_as_burn", "open"],
            card=card,
            holds_card=True,
        )

    def _round_card(self, shoe: Shoe, rnd: Round, card: Card | None) -> None:
        if rnd.burn_due > 0:
            rnd.burn_due -= 1
            self._burn_card(shoe, card, rnd)
            return
        position = rnd.due
        if position is None:
            self._raise_alarm(
                "extra_card",
                f"{card.code if card else 'an unreadable card'} came out but round "
                f"{rnd.number} is complete: no card is due (Art. 9)",
                ["accept_as_burn", "void"],
                card=card,
                holds_card=True,
                on_round=rnd,
            )
            return
        assert card is not None  # unreadable cards in a round are held before this
        self._deal(shoe, rnd, position, card)

    def _deal(self, shoe: Shoe, rnd: Round, position: tableau.Position, card: Card) -> None:
        value = card.value
        player, banker = rnd.player, rnd.banker
        if position[0] == "P":
            player.append(card)
            rnd.player_total = (rnd.player_total + value) % 10
        else:
            banker.append(card)
            rnd.banker_total = (rnd.banker_total + value) % 10
        rnd.last_position = position
        dealt = len(player) + len(banker)
        if dealt < 4:
            due: tableau.Position | None = DEAL_ORDER[dealt]
        elif dealt == 4:
            due = tableau.third_card_due(rnd.player_total, rnd.banker_total)
        elif position == "P3":
            due = tableau.after_player_third(rnd.banker_total, value)
        else:
            due = None
        rnd.due = due
        code = card.code
        rnd.dealt.append(_DEALT_CARDS.get((position, code)) or _dealt_card(position, code))
        if rnd.alarms:
            for alarm in [a for a in rnd.alarms if a.kind == "missing_card"]:
                self._clear_alarm(alarm, "deal", rnd)
        if self._squeeze and not rnd.revealed:
            rnd.withheld.append(
                {
                    "shoe": shoe.number,
                    "round": rnd.number,
                    "position": position,
                    "card": code,
                    "player_total": rnd.player_total,
                    "banker_total": rnd.banker_total,
                    "demo": rnd.demo,
                }
            )
        else:
            self.seq += 1
            self._out.append(
                CardMessage(  # positional: see messages.py
                    shoe.number,
                    rnd.number,
                    position,
                    code,
                    False,  # face_up
                    rnd.player_total,
                    rnd.banker_total,
                    rnd.demo,
                    seq=self.seq,
                    ts=self._ts,
                )
            )
        if due is None:
            rnd.complete = True
            rnd.winner = tableau.winner(rnd.player_total, rnd.banker_total)
            self._maybe_publish(shoe, rnd)

    # ------------------------------------------------------------------ rounds

    def _start_round(self, shoe: Shoe) -> Round:
        shoe.round_no += 1
        demo = False
        if shoe.demo_on:
            demo = True
            shoe.demo_rounds += 1
            if shoe.demo_rounds >= self.profile.max_demo_rounds:
                shoe.demo_on = False
        number = shoe.round_no
        rnd = Round(number, demo, f"{shoe.number}-{number}", self.profile.burn_per_round)
        self.round = rnd
        shoe.phase = "in_round"
        self.seq += 1
        self._out.append(
            RoundMessage(
                shoe.number,
                number,
                rnd.round_id,
                "open",
                "burn" if rnd.burn_due else "P1",  # next
                seq=self.seq,
                ts=self._ts,
                demo=demo,
            )
        )
        return rnd

    def _maybe_publish(self, shoe: Shoe, rnd: Round) -> None:
        """Publish the result once the rules allow: complete, no alarm, revealed if squeeze."""
        if not rnd.complete or rnd.alarms or rnd.published or rnd.void:
            return
        if self._squeeze and not rnd.revealed:
            return
        for fields in rnd.withheld:
            self._emit(CardMessage, **fields)
        rnd.withheld.clear()
        rnd.published = True
        assert rnd.winner is not None
        self.seq += 1
        self._out.append(
            ResultMessage(
                shoe.number,
                rnd.number,
                rnd.round_id,
                rnd.winner,
                _hand(rnd.player, rnd.player_total),
                _hand(rnd.banker, rnd.banker_total),
                rnd.demo,
                list(rnd.exposed),
                seq=self.seq,
                ts=self._ts,
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
                    _is_pair(rnd.player),
                    _is_pair(rnd.banker),
                    _natural(rnd.player) or _natural(rnd.banker),
                )
        self._close_round(shoe, rnd, roads_changed=not rnd.demo)

    def _close_round(self, shoe: Shoe, rnd: Round, *, roads_changed: bool) -> None:
        self.seq += 1
        self._out.append(
            RoundMessage(
                shoe.number,
                rnd.number,
                rnd.round_id,
                "void" if rnd.void else "complete",
                None,  # next
                seq=self.seq,
                ts=self._ts,
                demo=rnd.demo,
            )
        )
        if self._continuous:
            self._return_cards(shoe, rnd)
        shoe.phase = "closed" if shoe.ended else "ready"
        self._check_last_round(shoe, rnd)
        self._emit_shoe()
        if roads_changed:
            self._emit_roads()
        self._emit_recall(shoe, rnd)

    def _emit_recall(self, shoe: Shoe, rnd: Round) -> None:
        void = rnd.void
        recalled = RecalledRound(
            shoe.number,
            rnd.number,
            rnd.round_id,
            "void" if void else "result",
            None if void else rnd.winner,
            rnd.player_total,
            rnd.banker_total,
            rnd.demo,
            rnd.dealt.copy(),
            rnd.exposed.copy(),
        )
        recall = self.recall
        if void and recall and recall[-1].round_id == recalled.round_id:
            recall.pop()  # a shown round voided afterwards: replace its entry
        recall.append(recalled)
        self.seq += 1
        self._out.append(RecallMessage(list(self.recall), seq=self.seq, ts=self._ts))

    def _return_cards(self, shoe: Shoe, rnd: Round) -> None:
        """Art. 7.2: the automatic shuffler-dealer takes the round's cards back."""
        for card in shoe.taken:
            shoe.counts[card.index] -= 1
        shoe.drawn = 0
        shoe.burned = 0
        shoe.taken.clear()

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
        rnd = self.round
        current = rnd.number if rnd is not None and not rnd.closed else shoe.round_no + 1
        return current >= shoe.last_round_no

    # ------------------------------------------------------------------ dealer and operator

    def _require_shoe(self) -> Shoe:
        if self.shoe is None:
            raise RefusedError("no shoe in play: start one with 'shoe'")
        if self.shoe.phase == "closed":
            raise RefusedError(f"shoe {self.shoe.number} has ended: start a new one with 'shoe'")
        return self.shoe

    def _require_between_rounds(self, what: str) -> Shoe:
        shoe = self._require_shoe()
        rnd = self.round
        if rnd is not None and not rnd.closed:
            raise RefusedError(f"{what} only between rounds: round {rnd.number} is not closed")
        return shoe

    def _on_new_shoe(self, inp: NewShoe) -> None:
        rnd = self.round
        if rnd is not None and not rnd.closed:
            raise RefusedError(f"round {rnd.number} is in progress: finish or void it first")
        decks = inp.decks or self.profile.decks
        if not 1 <= decks <= 12:
            raise RefusedError(f"a shoe holds 1 to 12 decks, not {decks}")
        number = (self.shoe.number if self.shoe else self._last_shoe_number) + 1
        burn = self.profile.initial_burn()
        if self.profile.burn == "decks":
            burn = decks
        shoe = Shoe(number=number, decks=decks, counts=[0] * 52, burn_due=burn)
        shoe.phase = "burning" if burn is None or burn > 0 else "ready"
        self.shoe, self.round = shoe, None
        if self.roads is not None:
            self.roads.clear()
        self._emit_shoe()
        self._emit_roads()  # the retained roads start empty with the new shoe
        self.recall.clear()  # recall is of the shoe in play; the journal keeps older shoes

    def _on_cut(self, inp: CutCardSeen) -> None:
        shoe = self._require_shoe()
        if not self.profile.cut_card:
            raise RefusedError(f"profile {self.profile.name} has no cut card")
        if shoe.cut_card:
            raise RefusedError("the cut card has already come out")
        shoe.cut_card = True
        rnd = self.round
        in_round = rnd is not None and not rnd.closed
        current = rnd.number if rnd is not None and in_round else shoe.round_no + 1
        after = self.profile.after_cut
        shoe.last_round_no = current + 1 if after == "one_more_round" else current
        shoe.tie_extension = after == "one_more_if_tie"
        self._emit_shoe()

    def _on_open(self, inp: OpenRound) -> None:
        shoe = self._require_shoe()
        rnd = self.round
        if rnd is not None and not rnd.closed:
            if not (rnd.player or rnd.banker or rnd.alarms):
                raise RefusedError(f"round {rnd.number} is already open")
            pending = ", ".join(f"#{a.id} {a.kind}" for a in rnd.alarms)
            raise RefusedError(
                f"round {rnd.number} is not closed"
                + (f": settle alarm {pending} first (accept_as_burn or void)" if pending else "")
            )
        before_open = [a for a in shoe.shoe_alarms if a.kind == "card_before_open"]
        if shoe.phase == "burning" or shoe.burn_due:
            self._burn_incomplete(shoe)
            return
        new = self._start_round(shoe)
        for alarm in before_open:  # the dealer dealt, then pressed open: the cards are his
            self._clear_alarm(alarm, "open", None)
            self._round_card(shoe, new, alarm.held)

    def _burn_incomplete(self, shoe: Shoe) -> None:
        due = shoe.burn_due
        left = "the face-up first card" if due is None else f"{due} more card(s)"
        self._raise_alarm(
            "burn_incomplete",
            f"'open' before the burn was complete: burn {left} first, then open",
            ["burn"],
            pending=False,
        )

    def _on_reveal(self, inp: Reveal) -> None:
        shoe = self._require_shoe()
        rnd = self.round
        if rnd is None or rnd.void:
            raise RefusedError("no round to reveal")
        if rnd.published:
            if self.profile.reveal == "on_reveal":
                raise RefusedError(f"round {rnd.number} is already revealed")
            return  # immediate tables show every round at once; the button changes nothing
        if not rnd.complete:
            self._missing_card(rnd, "burn" if rnd.burn_due else str(rnd.next_position()), "reveal")
            return
        rnd.revealed = True
        self._maybe_publish(shoe, rnd)

    def _missing_card(self, rnd: Round, due: str, signal: str) -> None:
        if any(a.kind == "missing_card" for a in rnd.alarms):
            return
        self._raise_alarm(
            "missing_card",
            f"'{signal}' in round {rnd.number} while {due} is still due by the tableau",
            ["deal", "void"],
            on_round=rnd,
        )

    def _on_declare(self, inp: Declare) -> None:
        shoe = self._require_shoe_for_void()
        rnd = self.round
        if rnd is None or rnd.void:
            raise RefusedError("no round to declare")
        if not rnd.complete:
            due = "burn" if rnd.burn_due else str(rnd.next_position())
            self._missing_card(rnd, due, f"declare {inp.winner}")
            return
        mismatches = [a for a in rnd.alarms if a.kind == "result_mismatch"]
        if inp.winner == rnd.winner:
            for alarm in mismatches:
                self._clear_alarm(alarm, "declare", rnd)
            self._maybe_publish(shoe, rnd)
            return
        if mismatches:
            return
        self._raise_alarm(
            "result_mismatch",
            f"declared {inp.winner} but the cards say {rnd.winner} "
            f"(player {rnd.player_total}, banker {rnd.banker_total})",
            ["declare", "void"],
            on_round=rnd,
        )

    def _on_void(self, inp: VoidRound) -> None:
        shoe = self._require_shoe_for_void()
        rnd = self.round
        if rnd is None or rnd.void:
            raise RefusedError("no round to void")
        for alarm in list(rnd.alarms):
            self._clear_alarm(alarm, "void", rnd)
        was_published = rnd.published and not rnd.demo
        if was_published:
            shoe.results -= 1
            if self.roads is not None:
                self.roads.remove(rnd.number)
        rnd.void = True
        rnd.withheld.clear()
        self._emit(
            VoidMessage,
            shoe=shoe.number,
            round=rnd.number,
            round_id=rnd.round_id,
            reason=inp.reason,
            demo=rnd.demo,
        )
        self._close_round(shoe, rnd, roads_changed=was_published)

    def _require_shoe_for_void(self) -> Shoe:
        if self.shoe is None:
            raise RefusedError("no shoe in play")
        return self.shoe

    def _burn_held(self, shoe: Shoe, alarm: Alarm, rnd: Round | None) -> None:
        """A held card goes to the discard; a foreign card is not one of the shoe's."""
        if not alarm.foreign:
            self._burn_card(shoe, alarm.held, rnd)
        else:
            self._emit(
                CardMessage,
                shoe=shoe.number,
                round=rnd.number if rnd else None,
                position="burn",
                card=alarm.held.code if alarm.held else None,
                demo=rnd.demo if rnd else False,
            )

    def _on_accept_as_burn(self, inp: AcceptAsBurn) -> None:
        shoe = self._require_shoe_for_void()
        rnd = self.round
        found = self._oldest_held(shoe, rnd)
        if found is None:
            raise RefusedError("no card is held aside by an alarm")
        alarm, owner = found
        self._burn_held(shoe, alarm, owner)
        self._clear_alarm(alarm, "accept_as_burn", owner)
        published_before = owner.published if owner else True
        if owner is not None:
            self._maybe_publish(shoe, owner)
        if published_before:  # otherwise publishing the result just sent the shoe's state
            self._emit_shoe()

    def _oldest_held(self, shoe: Shoe, rnd: Round | None) -> tuple[Alarm, Round | None] | None:
        candidates: list[tuple[Alarm, Round | None]] = [
            (a, None) for a in shoe.shoe_alarms if a.holds_card
        ]
        if rnd is not None:
            candidates += [(a, rnd) for a in rnd.alarms if a.holds_card]
        if not candidates:
            return None
        return min(candidates, key=lambda pair: pair[0].id)

    def _on_burn(self, inp: Burn) -> None:
        shoe = self._require_between_rounds("burn (Art. 8)")
        if self.profile.continuous_shuffler:
            raise RefusedError("an automatic shuffler-dealer burns no cards")
        if shoe.phase == "burning":
            raise RefusedError("the shoe's own burn is still in progress")
        if not 1 <= inp.count <= 60:
            raise RefusedError(f"burn 1 to 60 cards, not {inp.count}")
        shoe.burn_due = (shoe.burn_due or 0) + inp.count
        self._emit_shoe()

    def _on_exposed(self, inp: Exposed) -> None:
        rnd = self.round
        if rnd is None or rnd.closed or rnd.last_position is None:
            raise RefusedError("no card of an open round to mark as exposed")
        if rnd.last_position not in rnd.exposed:
            rnd.exposed.append(rnd.last_position)

    def _on_demo(self, inp: Demo) -> None:
        shoe = self._require_between_rounds("demo on/off")
        if not inp.on:
            if shoe.demo_on:
                shoe.demo_on = False
                self._emit_shoe()
            return
        if shoe.demo_on:
            return
        if shoe.demo_rounds >= self.profile.max_demo_rounds:
            self._raise_alarm(
                "demo_limit",
                f"{shoe.demo_rounds} demonstration rounds already played in this shoe; "
                f"at most {self.profile.max_demo_rounds} are allowed",
                [],
            )
            return
        shoe.demo_on = True
        self._emit_shoe()

    def _on_end(self, inp: EndShoe) -> None:
        shoe = self._require_between_rounds("end shoe (Art. 3.2)")
        shoe.phase = "closed"
        shoe.ended = True
        self._emit_shoe()

    def _on_device(self, inp: DeviceReport) -> None:
        if inp.kind == "link_up":
            alarm, self._link_alarm = self._link_alarm, None
            if alarm is not None:
                self._emit(
                    AlarmClearedMessage,
                    id=alarm.id,
                    kind=alarm.kind,
                    by="link_up",
                    shoe=self.shoe.number if self.shoe else None,
                    round=None,
                )
            return
        if inp.kind == "link_down" and self._link_alarm is not None:
            return  # already down: one alarm until it is back
        kind = _DEVICE_ALARM[inp.kind]
        alarm = self._raise_alarm(kind, inp.text or kind.replace("_", " "), [], pending=False)
        if inp.kind == "link_down":
            self._link_alarm = alarm


_DEALT_CARDS: dict[tuple[str, str | None], DealtCard] = {}


def _dealt_card(position: PositionName, code: str | None) -> DealtCard:
    """The recall entry of one card; immutable, so each (position, card) is made only once."""
    key = (position, code)
    entry = _DEALT_CARDS.get(key)
    if entry is None:
        entry = _DEALT_CARDS[key] = DealtCard(position=position, card=code)
    return entry


def _hand(cards: list[Card], total: int) -> HandResult:
    """A complete hand (two or three cards) as the result shows it."""
    first, second = cards[0], cards[1]
    return HandResult(
        [c.code for c in cards],
        total,
        tableau.is_natural((first.value + second.value) % 10),  # natural
        first.rank == second.rank,  # pair (Art. 13)
    )


def _natural(cards: list[Card]) -> bool:
    """Art. 9: the hand's first two cards total 8 or 9."""
    return len(cards) >= 2 and tableau.is_natural((cards[0].value + cards[1].value) % 10)


def _is_pair(cards: list[Card]) -> bool:
    """Art. 13: the first two cards of the hand have the same rank (J-J yes, J-Q no)."""
    return len(cards) >= 2 and cards[0].rank == cards[1].rank

