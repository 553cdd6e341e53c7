"""The rounds room: a round opened, published, closed and recalled.

Its result is published when the rules allow; ``open`` mid-deal, ``reveal``, ``exposed``
and the shoe's last round are here too.
"""

from __future__ import annotations

from baccarat.cards import Card
from baccarat.controller.engine import alarms
from baccarat.controller.engine.core import (
    EngineCore,
    RefusedError,
    listed_alarms,
    settling_corrections,
)
from baccarat.controller.engine.handlers import handles
from baccarat.controller.engine.inputs import (
    Exposed,
    OpenRound,
    Reveal,
)
from baccarat.controller.engine.state import Round, Shoe
from baccarat.messages.bodies import (
    RecallMessage,
    ResultMessage,
    SideBetResults,
)
from baccarat.rules import side_bets


class RoundsRoom(EngineCore):
    """The engine's rounds room: its handlers."""

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

    def _side_bets(self, rnd: Round) -> tuple[SideBetResults | None, bool | None]:
        """The result's side bets and EZ banker push, where the profile has them."""
        dealt = self.profile.side_bets
        pushes = self.profile.payouts.banker_push_on_three_card_7
        if not dealt and not pushes:
            return None, None
        outcome = side_bets.outcome(
            len(rnd.player), len(rnd.banker), rnd.player_total, rnd.banker_total
        )
        settled = SideBetResults(
            dragon7=outcome == "dragon7" if "dragon7" in dealt else None,
            panda8=outcome == "panda8" if "panda8" in dealt else None,
        ) if dealt else None
        return settled, outcome == "dragon7" if pushes else None

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
        player, banker = rnd.hands()
        settled, push = self._side_bets(rnd)
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
                side_bets=settled,
                banker_push=push,
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

    @handles(
        OpenRound,
        "open",
        "Open the next round; mid-deal, the round starts again from its first card.",
    )
    def _on_open(self, inp: OpenRound) -> None:
        shoe = self._require_shoe()
        rnd = self._open_round()
        if rnd is not None and not rnd.complete:
            if rnd.player or rnd.banker or (rnd.dealt and rnd.alarms):
                self._open_in_round(shoe, rnd)
                return
            missing = [a for a in rnd.alarms if a.kind == alarms.MISSING_CARD]
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
                    f": settle alarm {listed_alarms(rnd.alarms)} first "
                    f"({settling_corrections(rnd.alarms)})"
                    if rnd.alarms
                    else ""
                )
            )
        if shoe.phase == "burning" or shoe.burn_due:
            for alarm in shoe.alarms:
                if alarm.kind == alarms.BURN_INCOMPLETE:
                    raise RefusedError(
                        f"alarm #{alarm.id} burn_incomplete is open: "
                        f"burn {alarms.burn_left(shoe.burn_due)} first, then open"
                    )
            self._raise(alarms.BURN_INCOMPLETE, alarms.burn_incomplete(shoe.burn_due), ["burn"])
            return
        # The pit's 'open' says the cards dealt before it are the round's (the dealer forgot
        # to press it). The dealer's own press after them says they are not: they stay held.
        before_open = [] if inp.origin == "button" else [
            a for a in shoe.alarms if a.kind == alarms.CARD_BEFORE_OPEN
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
        for alarm in [a for a in rnd.alarms if a.kind == alarms.MISSING_CARD]:
            self._clear(alarm, "open", rnd)  # the round starts again: nothing is due of it
        rnd.restart(self.profile.burn_per_round)
        shoe.burn_pressed = False  # the round's burn is announced again after this 'open'
        self._round_changed = rnd
        text = alarms.open_in_round(
            rnd.number, [c.code for c in held if c is not None], burns, declared
        )
        if held:
            self._raise(alarms.OPEN_IN_ROUND, text, alarms.HELD_IN_ROUND, held=held, owner=rnd)
        else:
            self._raise(alarms.OPEN_IN_ROUND, text, [], owner=rnd)

    @handles(Reveal, "reveal", "Show the round's withheld cards and its result (squeeze tables).")
    def _on_reveal(self, inp: Reveal) -> None:
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

    @handles(Exposed, "exposed", "Mark the last card dealt as exposed.")
    def _on_exposed(self, inp: Exposed) -> None:
        rnd = self._open_round()
        if rnd is None or rnd.last_position is None:
            raise RefusedError("no card of an open round to mark as exposed")
        if rnd.last_position not in rnd.exposed:
            rnd.exposed.append(rnd.last_position)
