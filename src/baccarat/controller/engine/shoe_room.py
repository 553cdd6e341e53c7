"""The shoe and device room: the shoe's life and what the devices report.

A new shoe, the cut card, burns, demonstration rounds, the shoe's end; the devices'
reports, the edge watch's and the shuffle check's notices.
"""

from __future__ import annotations

from baccarat.cards import RANKS
from baccarat.controller.engine import alarms
from baccarat.controller.engine.core import EngineCore, RefusedError, listed_alarms
from baccarat.controller.engine.handlers import handles
from baccarat.controller.engine.inputs import (
    Advantage,
    Burn,
    CutCardSeen,
    Demo,
    DeviceReport,
    EndShoe,
    JournalLost,
    NewShoe,
    ShuffleSuspect,
)
from baccarat.controller.engine.state import Alarm, Shoe
from baccarat.messages.bodies import AlarmMessage
from baccarat.rules.edge import Bet


class ShoeRoom(EngineCore):
    """The engine's shoe and device room: its handlers."""

    @handles(
        NewShoe,
        "shoe",
        "Start a new shoe (Art. 2.1); refused while a round or a held card waits.",
    )
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
            waiting = f" with open alarm {listed_alarms(rnd.alarms)}" if rnd.alarms else ""
            return f"round {rnd.number} is in progress{waiting}: finish or void it first"
        decks = inp.decks or self.profile.decks
        if not 1 <= decks <= 12:
            return f"a shoe holds 1 to 12 decks, not {decks}"
        shoe = self.shoe
        held = [a for a in shoe.alarms if a.holds_card] if shoe else []
        if shoe is not None and held:
            return (
                f"shoe {shoe.number} holds a card aside: settle alarm "
                f"{listed_alarms(held)} first (accept_as_burn)"
            )
        return None

    @handles(CutCardSeen, "cut", "The cut card came out: the shoe's last round is set (Art. 3).")
    def _on_cut(self, inp: CutCardSeen) -> None:
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

    @handles(Burn, "burn", "Burn cards before the next round (Art. 8).")
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

    @handles(Demo, "demo", "Demonstration rounds on or off (Art. 2.2).")
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

    @handles(EndShoe, "end", "End the shoe between rounds (Art. 3.2).")
    def _on_end(self, inp: EndShoe) -> None:
        shoe = self._require_between_rounds("end shoe (Art. 3.2)")
        shoe.phase = "closed"
        shoe.ended = True
        self._burn_over(shoe, "end")
        self._emit_shoe()

    @handles(
        DeviceReport,
        "device",
        "A device's report: raise its alarm, or end the lasting one it recovers from.",
    )
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

    @handles(
        Advantage,
        "advantage",
        "The edge watch's crossing: raise or clear a bet's notice (Art. 17, 18).",
    )
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

    @handles(
        ShuffleSuspect,
        "shuffle_suspect",
        "The shuffle check's finding: a notice for surveillance.",
    )
    def _on_shuffle_suspect(self, inp: ShuffleSuspect) -> None:
        """The daemon's shuffle check found a repeat (decided outside: a notice as it says)."""
        text = alarms.shuffle_suspect(
            inp.table, inp.shoe, (inp.earlier_first, inp.earlier_last), (inp.first, inp.last),
            cards=inp.cards, gap=inp.gap,
        )
        self._raise("shuffle_suspect", text, [])

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
        alarm = Alarm(int(counters["lost_alarm"]), alarms.DEVICE_ALARM["journal"], [],
                      alarms.journal_lost(first, last))
        alarm.message = AlarmMessage(
            seq=int(counters["lost_seq"]), ts=None if ts is None else int(ts) / 1e6,
            id=alarm.id, kind=alarm.kind, article=alarms.ARTICLE[alarm.kind],
            correctable=False, corrections=[], shoe=shoe, round=None, text=alarm.text,
            lasting=True, lost_first=first, lost_last=last,
        )
        self._open_alarms[alarm.id] = alarm
        self._journal_lost = alarm

    @handles(
        JournalLost,
        "journal_lost",
        "The journal lost messages already made: numbering goes on past them, alarmed.",
    )
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
            alarms.DEVICE_ALARM["journal"], alarms.journal_lost(inp.first, inp.last), [],
            lasting=True, lost=(inp.first, inp.last),
        )

    @property
    def publish_refused(self) -> bool:
        """A ``publish_refused`` alarm is open (the broker refused the table's messages)."""
        return alarms.RECOVERS["publish_accepted"] in self._lasting  # the report it ends
