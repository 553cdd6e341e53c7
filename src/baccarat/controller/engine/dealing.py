"""The cards room: where each card goes, and the cards held aside by an alarm.

A card goes to the shoe's burn, the round's hands by the tableau (Art. 7, 9), or aside;
the round's burn and the dealer's burn button are here too.
"""

from __future__ import annotations

from baccarat.cards import RANKS, Card
from baccarat.controller.engine import alarms
from baccarat.controller.engine.core import EngineCore, RefusedError
from baccarat.controller.engine.handlers import handles
from baccarat.controller.engine.inputs import (
    AnnounceBurn,
    DrawCard,
)
from baccarat.controller.engine.state import EXTRA_BURNS_AT_MOST, Round, Shoe, WithheldCard


class DealingRoom(EngineCore):
    """The engine's cards room: its handlers."""

    @handles(
        DrawCard,
        "card",
        "A card out of the shoe: the shoe's burn, the round's next card, or held aside.",
    )
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
        for alarm in [a for a in shoe.alarms if a.kind == alarms.BURN_INCOMPLETE]:
            self._clear(alarm, by, None)

    def _round_card(self, shoe: Shoe, rnd: Round, card: Card | None) -> None:
        rnd.dealt_since_open += 1
        if rnd.burn_due and not self._burn_announced(shoe, rnd):
            rnd.burn_due = 0  # the dealer's buttons say he dealt without burning
            self._raise(
                alarms.BURN_SKIPPED,
                alarms.burn_skipped(rnd.number, self.profile.burn_per_round),
                ["declare", "void"],
                owner=rnd,
            )
        if rnd.burn_due:  # a plain burn card: its face does not matter
            rnd.burn_due -= 1
            self._burn_card(shoe, card, rnd)
            self._clear_missing(rnd)
        elif shoe.extra_burns and rnd.due is not None:
            self._extra_burn(shoe, rnd, card)
        elif card is None:
            self._hold_unreadable(shoe, rnd)
        elif rnd.due is None:
            self._take_extra_press(shoe)  # the card is held aside as extra_card anyway
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

    def _extra_burn(self, shoe: Shoe, rnd: Round, card: Card | None) -> None:
        """A card after a burn press the procedure did not call for: a burn card (Art. 8).

        The press is evidence and is never dropped: the card goes to the discard, not to a
        hand, and the round waits for a person (``declare`` if a card was burned, ``void``
        if the press had no card after it and the hands are one card off).
        """
        where = self._take_extra_press(shoe)
        self._burn_card(shoe, card, rnd)
        self._raise(
            alarms.EXTRA_BURN,
            alarms.extra_burn(rnd.number, card.code if card else None, where),
            ["declare", "void"],
            card=card,
            owner=rnd,
        )

    @staticmethod
    def _take_extra_press(shoe: Shoe) -> str:
        """Use up the oldest burn press that was not due; return where it was pressed."""
        return shoe.extra_burns.pop(0) if shoe.extra_burns else ""

    def _burn_announced(self, shoe: Shoe, rnd: Round) -> bool:
        """Whether the round's burn card may be taken as one (``burn_press``).

        Only where the press is required, and only for the round's first burn card: the
        press announces the round's burn whole, and is used up by it.
        """
        if self.profile.burn_press != "required" or rnd.burn_due < self.profile.burn_per_round:
            return True
        pressed, shoe.burn_pressed = shoe.burn_pressed, False
        return pressed

    @handles(
        AnnounceBurn,
        "announce_burn",
        "The dealer's burn button: the next card is a burn card (`burn_press`).",
    )
    def _on_announce_burn(self, inp: AnnounceBurn) -> None:
        """The dealer's burn button: the next card is a burn card (`burn_press`).

        Where the round's burn is due and not announced yet, the press announces it. Any
        other press (a second burn, a burn between hands or in the middle of a round) is
        evidence too: the next card is taken as a burn card, with an ``extra_burn`` alarm.
        """
        if self.profile.burn_press != "required":
            return  # the button changes nothing on this table
        shoe = self._require_shoe()
        if shoe.phase == "burning" or shoe.burn_due:
            return  # the shoe's own burn: checked by 'open' (burn_incomplete), not by presses
        if not self.profile.burn_per_round:
            raise RefusedError(f"profile {self.profile.name} burns no card at a round's start")
        rnd = self._open_round()
        explicit = self.profile.open_mode == "explicit"
        due = rnd.burn_due >= self.profile.burn_per_round if rnd is not None else not explicit
        if due and not shoe.burn_pressed:
            shoe.burn_pressed = True
            return
        if len(shoe.extra_burns) >= EXTRA_BURNS_AT_MOST:
            raise RefusedError(
                f"{len(shoe.extra_burns)} burn presses already wait for their burn cards"
            )
        if rnd is None:
            where = "between hands"
        elif due:
            where = "a second time before the round's burn card"
        elif rnd.player or rnd.banker:
            where = "in the middle of the hand"
        else:
            where = "again after the round's burn card"
        shoe.extra_burns.append(where)

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
        for alarm in [a for a in rnd.alarms if a.kind == alarms.MISSING_CARD and a.by_deal]:
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
        """Explicit opening: a card when no round is open.

        It is held aside; a burn press before it (between hands) is used up by it: the
        pit's ``accept_as_burn`` is the confirmation the press asks for.
        """
        self._take_extra_press(shoe)
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
            alarms.CARD_BEFORE_OPEN,
            alarms.card_before_open(card.code),
            ["accept_as_burn", "open"],
            card=card,
            holds_card=True,
        )
