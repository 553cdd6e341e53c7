"""A dealer model: the events a shoe sends while a dealer deals a whole shoe.

It deals correct rounds by the tableau (:func:`baccarat.rules.tableau.next_position`,
never a copy of it), burns per profile, signals the cut card when it is reached, presses
the dealer buttons, and makes a chosen mistake at a given rate or at scripted rounds:

* ``extra_card``: one card more than the tableau allows, after the round is complete;
* ``missing_card``: the round's last card is never dealt (it stays in the shoe);
* ``skipped_burn``: the round's burn (or, without round burns, the shoe's burn before
  round 1) is skipped;
* ``double_burn``: after the round's burn (its press and card), the dealer presses ``burn``
  again and burns a second card (a deviation from the procedure, with its evidence);
* ``burn_press_no_card``: after the round's burn the dealer presses ``burn`` again but burns
  no card: the press says a burn card that never comes;
* ``wrong_declare``: the declare button names a winner other than the real one;
* ``foreign_card``: a card that is not from this shoe comes out in place of one (a card
  of which every copy has already been dealt, if there is one, else a random card).

With buttons a round goes: ``open``, the round's burn (the ``burn`` button and its cards),
the hand's cards, ``reveal``, a ``declare`` button. :meth:`Dealer.for_profile` deals the
shoe a rule profile describes (decks, burns, cut card, rounds after the cut).

Everything is deterministic from ``seed`` (``random.Random(seed)``). Each :class:`Step`
says what a card or button was for (round, position, mistake), so tests can check what
the controller made of it. A protocol that carries only cards (``line``) sees only the
:class:`~baccarat.drivers.events.CardDrawn` events; use :meth:`Dealer.events` with the
codec's ``carries`` to filter.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from baccarat.cards import ALL_CARDS, Card, shuffled_shoe
from baccarat.drivers.events import (
    Button,
    CardDrawn,
    CutCard,
    DealerButton,
    DeviceEvent,
    ShoeInserted,
    ShoeRemoved,
)
from baccarat.rules.profiles import Profile
from baccarat.rules.tableau import next_position, total, winner

Mistake = Literal[
    "extra_card", "missing_card", "skipped_burn", "double_burn", "burn_press_no_card",
    "wrong_declare", "foreign_card",
]
MISTAKES: Final[tuple[Mistake, ...]] = (
    "extra_card",
    "missing_card",
    "skipped_burn",
    "double_burn",
    "burn_press_no_card",
    "wrong_declare",
    "foreign_card",
)
BURN_PRESS_MISTAKES: Final = frozenset({"double_burn", "burn_press_no_card"})
"""Mistakes of the round's burn that need the burn button and a round burn to be made."""
BurnMethod = int | Literal["first_card"]
ROUND_MAX_CARDS: Final = 6
"""A round needs at most six cards; the dealer stops when fewer remain."""
CUT_FROM_END: Final = 14
"""Where the dealer puts the cut card in a profile's shoe: this many cards from the end."""


@dataclass(frozen=True, slots=True)
class Step:
    """One event of the shoe, with what it was for.

    ``round_no`` is 0 before the first round (shoe burn), then 1, 2, ...; ``role`` is
    ``"shoe"``, ``"burn"``, ``"cut"``, ``"button"``, a position (``"P1"`` .. ``"B3"``)
    or ``"extra"``; ``mistake`` is the mistake this step belongs to, if any.
    """

    event: DeviceEvent
    round_no: int
    role: str
    mistake: Mistake | None = None

    def record(self, shoe_no: int) -> dict[str, Any]:
        """The step as one line of ``baccarat sim shoe --record``: what the dealer did.

        ``{"shoe", "round", "role", "card", "button", "mistake"}``: ``card`` is the card's
        code (``"AS"``) or ``None``, ``button`` the button's name or ``None``. A shoe's
        first ``"shoe"`` step is its insertion, its last the removal.
        """
        event = self.event
        return {
            "shoe": shoe_no,
            "round": self.round_no,
            "role": self.role,
            "card": event.card.code if isinstance(event, CardDrawn) else None,
            "button": event.button if isinstance(event, DealerButton) else None,
            "mistake": self.mistake,
        }


def first_card_burn_count(card: Card) -> int:
    """Burn count of the "first card" method: its face value, 10/J/Q/K counting 10."""
    return min(card.rank, 10)


class Dealer:
    """Deals one shoe and yields its :class:`Step` s.

    ``cards``: the shoe in dealing order (default: ``decks`` decks shuffled from ``seed``);
    ``burn``: the shoe's burn, a card count or ``"first_card"`` (the first card, then as
    many as its value: ``burn_values`` by rank letter, else 1 for an ace .. 10 for a ten
    or a face); ``round_burn``: cards burned at the start of every round, after ``open``;
    ``cut_from_end``: where the cut card sits (0: no cut card, deal until the shoe runs
    out); ``rounds_after_cut``: rounds played after the one in which the cut card came
    out; ``one_more_if_tie``: one round more if that round was a tie (house6);
    ``buttons``: whether the shoe has dealer buttons;
    ``mistake_rate``: probability of a mistake per round (chosen among those that apply);
    ``mistakes_at``: round number -> mistake, on top of the rate; ``mistake_kinds``: the
    mistakes the rate chooses among (default: all that apply).
    """

    def __init__(
        self,
        *,
        decks: int = 8,
        seed: int = 0,
        cards: Sequence[Card] | None = None,
        burn: BurnMethod = "first_card",
        burn_values: Mapping[str, int] | None = None,
        round_burn: int = 0,
        cut_from_end: int = CUT_FROM_END,
        rounds_after_cut: int = 0,
        one_more_if_tie: bool = False,
        buttons: bool = True,
        mistake_rate: float = 0.0,
        mistakes_at: Mapping[int, Mistake] | None = None,
        mistake_kinds: Collection[Mistake] | None = None,
    ) -> None:
        self.decks = decks
        self.seed = seed
        self.cards = list(cards) if cards is not None else shuffled_shoe(decks, seed)
        self.burn = burn
        self.burn_values = dict(burn_values) if burn_values is not None else None
        self.round_burn = round_burn
        self.cut_index = len(self.cards) - cut_from_end if cut_from_end else None
        self.rounds_after_cut = rounds_after_cut
        self.one_more_if_tie = one_more_if_tie
        self._last_winner: str | None = None
        self.buttons = buttons
        self.mistake_rate = mistake_rate
        self.mistakes_at = dict(mistakes_at or {})
        self.mistake_kinds = tuple(mistake_kinds) if mistake_kinds else MISTAKES
        self._rng = random.Random(seed ^ 0x5EED)
        self._next = 0
        self._cut_seen = False
        self._dealt: Counter[Card] = Counter()
        self._foreign: Card | None = None
        self.mistakes_made: list[tuple[int, Mistake]] = []
        """(round number, mistake) for every mistake made so far, in order."""

    @classmethod
    def for_profile(
        cls,
        profile: Profile,
        *,
        seed: int = 0,
        mistake_rate: float = 0.0,
        buttons: bool = True,
        mistakes_at: Mapping[int, Mistake] | None = None,
        mistake_kinds: Collection[Mistake] | None = None,
    ) -> Dealer:
        """A dealer dealing the shoe of ``profile``: its decks, burns, cut card and end.

        The shoe's burn by ``burn`` (``first_card`` by its ``burn_values``, ``fixed``
        ``burn_count`` cards, ``decks`` one a deck, ``none``), ``burn_per_round`` at every
        round, the cut card :data:`CUT_FROM_END` cards from the end (none without
        ``cut_card``), and after the cut round ``after_cut``: no more, one more, or one
        more if it was a tie. A continuous shuffler has no cut card and no burn.
        """
        shuffler = profile.continuous_shuffler
        initial = profile.initial_burn()
        burn: BurnMethod = "first_card" if initial is None else initial
        return cls(
            decks=profile.decks,
            seed=seed,
            burn=0 if shuffler else burn,
            burn_values=profile.burn_values,
            round_burn=0 if shuffler else profile.burn_per_round,
            cut_from_end=CUT_FROM_END if profile.cut_card and not shuffler else 0,
            rounds_after_cut=1 if profile.after_cut == "one_more_round" else 0,
            one_more_if_tie=profile.after_cut == "one_more_if_tie",
            buttons=buttons,
            mistake_rate=mistake_rate,
            mistakes_at=mistakes_at,
            mistake_kinds=mistake_kinds,
        )

    @property
    def remaining(self) -> int:
        """Cards still in the shoe."""
        return len(self.cards) - self._next

    def events(self, carries: Collection[type[DeviceEvent]] | None = None) -> Iterator[DeviceEvent]:
        """The events of the whole shoe, only those of the given types if ``carries``."""
        for step in self.steps():
            if carries is None or type(step.event) in carries:
                yield step.event

    def steps(self) -> Iterator[Step]:
        """Deal the whole shoe: insert, burn, rounds until the cut card says stop, remove."""
        yield Step(ShoeInserted(), 0, "shoe")
        first_mistake = self._mistake_for(1)
        if not (first_mistake == "skipped_burn" and not self.round_burn):
            yield from self._shoe_burn()
        rounds_left: int | None = None  # counted down once the cut card is out
        round_no = 1
        while self.remaining >= ROUND_MAX_CARDS + self.round_burn and rounds_left != 0:
            mistake = first_mistake if round_no == 1 else self._mistake_for(round_no)
            yield from self._round(round_no, mistake)
            if rounds_left is not None:
                rounds_left -= 1
            elif self._cut_seen:
                tie = self.one_more_if_tie and self._last_winner == "tie"
                rounds_left = self.rounds_after_cut + (1 if tie else 0)
            round_no += 1
        yield Step(ShoeRemoved(), round_no - 1, "shoe")

    # -- the shoe's start ------------------------------------------------------------

    def _shoe_burn(self) -> Iterator[Step]:
        if self.burn == 0:
            return  # nothing to burn: no burn button either
        if self.buttons:
            yield self._button("burn", 0)
        if self.burn == "first_card":
            first = yield from self._draw(0, "burn")
            values = self.burn_values
            count = first_card_burn_count(first) if values is None else values[first.code[0]]
        else:
            count = self.burn
        for _ in range(count):
            yield from self._draw(0, "burn")

    # -- a round ---------------------------------------------------------------------

    def _round(self, round_no: int, mistake: Mistake | None) -> Iterator[Step]:
        if self.buttons:
            yield self._button("open", round_no)
        if self.round_burn and mistake != "skipped_burn":
            if self.buttons:
                yield self._button("burn", round_no)
            for _ in range(self.round_burn):
                yield from self._draw(round_no, "burn")
            if mistake in BURN_PRESS_MISTAKES and self.buttons:
                yield Step(DealerButton("burn"), round_no, "button", mistake)
                if mistake == "double_burn" and self.remaining > ROUND_MAX_CARDS:
                    yield from self._draw(round_no, "burn", None, mistake)
        plan = self._plan_round(mistake)
        player: list[int] = []
        banker: list[int] = []
        for position, foreign in plan:
            card = self._foreign_card() if foreign else None
            tag: Mistake | None = "foreign_card" if foreign else None
            if position == "extra":
                tag = "extra_card"
            card = yield from self._draw(round_no, position, card, tag)
            if position != "extra":
                (player if position.startswith("P") else banker).append(card.value)
        self._last_winner = winner(total(player), total(banker))
        if self.buttons:
            yield from self._declare(round_no, player, banker, mistake)

    def _plan_round(self, mistake: Mistake | None) -> list[tuple[str, bool]]:
        """Positions of the round's cards by the tableau, with the mistake applied.

        Each entry is (position or ``"extra"``, whether it is the foreign card).
        """
        upcoming = self.cards[self._next : self._next + ROUND_MAX_CARDS + 1]
        foreign_at = self._rng.randrange(4) if mistake == "foreign_card" else None
        player: list[int] = []
        banker: list[int] = []
        plan: list[tuple[str, bool]] = []
        source = iter(upcoming)
        while (position := next_position(player, banker)) is not None:
            is_foreign = len(plan) == foreign_at
            value = self._foreign_preview().value if is_foreign else next(source).value
            (player if position.startswith("P") else banker).append(value)
            plan.append((position, is_foreign))
        if mistake == "missing_card":
            plan.pop()
        elif mistake == "extra_card":
            plan.append(("extra", False))
        return plan

    def _declare(
        self, round_no: int, player: list[int], banker: list[int], mistake: Mistake | None
    ) -> Iterator[Step]:
        yield self._button("reveal", round_no)
        real = winner(total(player), total(banker))
        declared = real
        tag: Mistake | None = None
        if mistake == "wrong_declare":
            declared = self._rng.choice([w for w in ("banker", "player", "tie") if w != real])
            tag = "wrong_declare"
        button: Button = (
            "declare_banker"
            if declared == "banker"
            else "declare_player"
            if declared == "player"
            else "declare_tie"
        )
        yield Step(DealerButton(button), round_no, "button", tag)

    # -- cards -----------------------------------------------------------------------

    def _draw(
        self,
        round_no: int,
        role: str,
        foreign: Card | None = None,
        mistake: Mistake | None = None,
    ) -> Generator[Step, None, Card]:
        """Yield the cut card if it is next, then the card; return the card (generator)."""
        if foreign is not None:
            yield Step(CardDrawn(foreign), round_no, role, mistake)
            return foreign
        if self._next == self.cut_index and not self._cut_seen:
            self._cut_seen = True
            yield Step(CutCard(), round_no, "cut")
        card = self.cards[self._next]
        self._next += 1
        self._dealt[card] += 1
        yield Step(CardDrawn(card), round_no, role, mistake)
        return card

    def _foreign_preview(self) -> Card:
        """The foreign card the next round will see (chosen once, when first planned)."""
        if self._foreign is None:
            self._foreign = self._choose_foreign()
        return self._foreign

    def _foreign_card(self) -> Card:
        card = self._foreign_preview()
        self._foreign = None
        return card

    def _choose_foreign(self) -> Card:
        exhausted = [c for c in ALL_CARDS if self._dealt[c] >= self.decks]
        return self._rng.choice(exhausted or list(ALL_CARDS))

    def _button(self, button: Button, round_no: int) -> Step:
        return Step(DealerButton(button), round_no, "button")

    def _mistake_for(self, round_no: int) -> Mistake | None:
        mistake = self.mistakes_at.get(round_no)
        if mistake is None and self.mistake_rate and self._rng.random() < self.mistake_rate:
            applicable = self._applicable_mistakes(round_no)
            mistake = self._rng.choice(applicable) if applicable else None
        if mistake is not None:
            self.mistakes_made.append((round_no, mistake))
        return mistake

    def _applicable_mistakes(self, round_no: int) -> list[Mistake]:
        left = set(self.mistake_kinds)
        if not self.buttons:
            left.discard("wrong_declare")
        if not self.round_burn and round_no != 1:
            left.discard("skipped_burn")
        if not (self.round_burn and self.buttons):
            left -= BURN_PRESS_MISTAKES
        if self.remaining <= ROUND_MAX_CARDS + self.round_burn:
            left -= {"extra_card", "double_burn"}  # no card left for it after a six-card round
        return [m for m in MISTAKES if m in left]
