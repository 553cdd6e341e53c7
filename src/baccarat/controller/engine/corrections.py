"""The corrections room: ``declare``, ``void`` and ``accept_as_burn`` (Art. 10, 11).

The dealer's ``declare`` is judged against the cards; a press while a card is due proves
a missing card.
"""

from __future__ import annotations

from dataclasses import replace

from baccarat.controller.engine import alarms
from baccarat.controller.engine.core import EngineCore, RefusedError
from baccarat.controller.engine.handlers import handles
from baccarat.controller.engine.inputs import (
    AcceptAsBurn,
    Declare,
    VoidRound,
)
from baccarat.controller.engine.state import Alarm, Round, Shoe
from baccarat.messages.bodies import (
    VoidMessage,
)
from baccarat.rules.tableau import Winner


class CorrectionsRoom(EngineCore):
    """The engine's corrections room: its handlers."""

    def _missing_card(self, rnd: Round, signal: str) -> None:
        for alarm in rnd.alarms:
            if alarm.kind == alarms.MISSING_CARD:
                raise RefusedError(
                    f"alarm #{alarm.id} missing_card is open: deal {rnd.next_card} or void"
                )
        self._raise(
            alarms.MISSING_CARD,
            alarms.missing_card(rnd.number, str(rnd.next_card), signal),
            ["deal", "void"],
            owner=rnd,
        )

    @handles(
        Declare,
        "declare",
        "The dealer's winner, judged against the cards (kept until they are all out).",
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
                checked = (alarms.MISSING_CARD, alarms.BURN_SKIPPED, alarms.EXTRA_BURN)
                settled += [a for a in rnd.alarms if a.kind in checked]
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
        missing = [a for a in rnd.alarms if a.kind == alarms.MISSING_CARD]
        if not missing:
            self._raise(
                alarms.MISSING_CARD,
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

    @handles(
        VoidRound,
        "void",
        "Void the round (Art. 10): no result; a published one leaves the roads.",
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
            a.kind == alarms.OPEN_IN_ROUND for a in rnd.alarms
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

    @handles(
        AcceptAsBurn,
        "accept_as_burn",
        "Send the oldest card an alarm holds aside to the discard (Art. 10).",
    )
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
