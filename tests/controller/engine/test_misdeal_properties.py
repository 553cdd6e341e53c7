"""Article 10 as a property: one misdeal anywhere in a legal shoe, then each correction.

A dealer written here, independently of the engine (its own copy of Art. 9), deals a
seeded one-deck shoe legally under a profile and opening mode. At some point it makes
one misdeal of a given kind; the engine must raise the alarm docs/alarms.md's table gives,
and after each correction that alarm lists (each in a run of its own) the alarm must be
cleared, no other alarm raised, the round completed with the tableau's result or void,
and every other round's result the tableau's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from support.tables import Table, of

VALUE = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0} | {str(n): n for n in range(2, 10)}
BURN = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10} | {str(n): n for n in range(2, 10)}
BANKER_DRAWS = {  # Art. 9: Banker's total -> Player's third card values on which it draws
    0: set(range(10)), 1: set(range(10)), 2: set(range(10)),
    3: {0, 1, 2, 3, 4, 5, 6, 7, 9}, 4: {2, 3, 4, 5, 6, 7}, 5: {4, 5, 6, 7}, 6: {6, 7},
    7: set(), 8: set(), 9: set(),
}
DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
KINDS = ["foreign", "unreadable", "extra", "early", "wrong_declare", "early_open"]


def total(cards: list[str]) -> int:
    return sum(VALUE[c[0]] for c in cards) % 10


def due(player: list[str], banker: list[str]) -> str | None:
    """Where the next card goes (Art. 7, 9), or None when the round is complete."""
    if len(player) + len(banker) < 4:
        return ("P1", "B1", "P2", "B2")[len(player) + len(banker)]
    p2, b2 = total(player[:2]), total(banker[:2])
    if len(player) == 2 and len(banker) == 2:
        if p2 >= 8 or b2 >= 8:
            return None
        if p2 <= 5:
            return "P3"
        return "B3" if b2 <= 5 else None
    if len(player) == 3 and len(banker) == 2:
        return "B3" if VALUE[player[2][0]] in BANKER_DRAWS[b2] else None
    return None


def winner(player: list[str], banker: list[str]) -> str:
    p, b = total(player), total(banker)
    return "player" if p > b else "banker" if b > p else "tie"


@dataclass
class RoundModel:
    number: int
    burn_left: int
    player: list[str] = field(default_factory=list)
    banker: list[str] = field(default_factory=list)

    def next(self) -> str | None:
        return "burn" if self.burn_left else due(self.player, self.banker)

    def place(self, card: str) -> None:
        if self.burn_left:
            self.burn_left -= 1
        elif due(self.player, self.banker)[0] == "P":  # type: ignore[index]
            self.player.append(card)
        else:
            self.banker.append(card)


class Dealer:
    """Deals legally, and knows what each misdeal must raise (docs/alarms.md's table)."""

    def __init__(self, profile: str, open_mode: str, reveal: str, seed: int) -> None:
        self.explicit = open_mode == "explicit"
        self.squeeze = reveal == "on_reveal"
        self.csm = profile == "csm"
        self.burn_per_round = 1 if profile == "house6" else 0
        self.shoe_burn: int | None = {"macau": None, "house6": 8, "csm": 0}[profile]
        self.cards = DECK.copy()
        random.Random(seed).shuffle(self.cards)
        self.drawn: list[str] = []  # the shoe's cards out (a shuffler takes a round's back)
        self.round: RoundModel | None = None
        self.last: RoundModel | None = None  # the last finished round, if it has a result
        self.rounds = 0
        self.expected: dict[int, tuple[str, list[str], list[str]] | str] = {}

    # -- legal play

    def draw(self) -> str:
        card = self.cards.pop(0)
        self.drawn.append(card)
        return card

    def start_round(self) -> RoundModel:
        self.rounds += 1
        self.round = RoundModel(self.rounds, self.burn_per_round)
        return self.round

    def finish(self, rnd: RoundModel, *, void: bool = False) -> None:
        self.expected[rnd.number] = (
            "void" if void else (winner(rnd.player, rnd.banker), rnd.player, rnd.banker)
        )
        self.last = None if void else rnd
        if rnd is self.round:
            self.round = None
        if self.csm:
            self.drawn.clear()

    def done(self) -> bool:
        return self.round is None and (len(self.cards) < 10 or self.rounds >= 8)

    def legal(self) -> str:
        """The next legal input, applied to the model."""
        if self.shoe_burn is None:
            card = self.draw()
            self.shoe_burn = BURN[card[0]]
            return card
        if self.shoe_burn:
            self.shoe_burn -= 1
            return self.draw()
        if self.round is None:
            self.start_round()
            if self.explicit:
                return "open"
        rnd = self.round
        assert rnd is not None
        if rnd.next() is None:  # complete on a squeeze table
            self.finish(rnd)
            return "reveal"
        card = self.draw()
        rnd.place(card)
        if rnd.next() is None and not self.squeeze:
            self.finish(rnd)
        return card

    # -- one misdeal: (input, alarm kind or None, its round, its corrections) or None

    def misdeal(self, kind: str, rng: random.Random) -> tuple[str, str | None, int | None,
                                                             list[str]] | None:
        between = self.round is None and self.shoe_burn == 0
        burning = not between and self.round is None
        if kind == "foreign":
            if not self.drawn:
                return None
            card = rng.choice(self.drawn)  # one more of it than a one-deck shoe holds
            return card, "foreign_card", *self.holder()
        if kind == "unreadable":
            if self.shoe_burn is None:
                return "unreadable", "unreadable_card", None, ["accept_as_burn"]
            if self.shoe_burn:
                self.shoe_burn -= 1  # a plain burn card: its face does not matter
                return "unreadable", None, None, []
            if between and not self.explicit:
                self.start_round()
            if self.round is not None and self.round.burn_left:
                self.round.burn_left -= 1
                return "unreadable", None, None, []
            return "unreadable", "unreadable_card", *self.holder()
        if kind == "extra":
            spare = self.cards.pop()  # a card of the shoe's own, dealt when none is due
            if between and self.explicit and self.last is not None:
                return spare, "extra_card", self.last.number, ["accept_as_burn", "void"]
            if between and self.explicit and self.rounds == 0:
                return spare, "card_before_open", None, ["accept_as_burn", "open"]
            if self.round is not None and self.round.next() is None:
                return spare, "extra_card", self.round.number, ["accept_as_burn", "void"]
            self.cards.append(spare)
            return None
        if kind == "early":
            if self.round is None or self.round.next() is None:
                return None
            # an early declare is kept and judged when the cards are out: this dealer
            # declares what they will show (a wrong one is a result_mismatch then)
            signal = rng.choice(["reveal", f"declare {self.future_winner()}"])
            return signal, "missing_card", self.round.number, ["deal", "void"]
        if kind == "wrong_declare":
            rnd = self.last if self.round is None else self.round
            if rnd is None or rnd.next() is not None:
                return None
            wrong = next(w for w in ("banker", "player", "tie")
                         if w != winner(rnd.player, rnd.banker))
            return f"declare {wrong}", "result_mismatch", rnd.number, ["declare", "void"]
        if kind == "early_open":
            if not burning or self.csm:
                return None
            return "open", "burn_incomplete", None, ["burn"]
        raise AssertionError(kind)

    def future_winner(self) -> str:
        """The winner the open round will have, from the cards to come."""
        assert self.round is not None
        rnd = RoundModel(self.round.number, self.round.burn_left,
                         list(self.round.player), list(self.round.banker))
        upcoming = iter(self.cards)
        while rnd.next() is not None:
            rnd.place(next(upcoming))
        return winner(rnd.player, rnd.banker)

    def holder(self) -> tuple[int | None, list[str]]:
        """The round that holds a card put aside now, and the alarm's corrections."""
        if self.round is None and self.shoe_burn == 0 and not self.explicit:
            self.start_round()  # implicit: the card opens the next round
        if self.round is not None:
            return self.round.number, ["accept_as_burn", "void"]
        return None, ["accept_as_burn"]

    # -- the correction, applied to the model

    def correct(self, correction: str, card: str, alarm_round: int | None) -> str | None:
        """The input that makes the correction (None: the dealer just plays on)."""
        if correction in ("deal", "burn"):
            return None
        if correction == "declare":
            rnd = self.last if self.round is None else self.round
            assert rnd is not None
            return f"declare {winner(rnd.player, rnd.banker)}"
        if correction == "void":
            rnd = self.round if self.round is not None else self.last
            assert rnd is not None
            assert rnd.number == alarm_round
            self.finish(rnd, void=True)
            return "void"
        if correction == "open":
            self.start_round().place(card)
            self.drawn.append(card)
            return "open"
        assert correction == "accept_as_burn"
        return "accept_as_burn"


def run(
    params: dict, correction: str | None, *, play_on: bool = True
) -> tuple[list, Dealer, tuple]:
    """Play the shoe with the misdeal, then the correction (``None``: none) and the rest.

    Return the engine's messages, the dealer, and the misdeal made.
    """
    dealer = Dealer(params["profile"], params["open_mode"], params["reveal"], params["seed"])
    table = Table(
        params["profile"], decks=1, open_mode=params["open_mode"], reveal=params["reveal"]
    )
    table.do("shoe")
    rng = random.Random(params["seed"])
    for _ in range(params["step"]):
        if dealer.done():
            break
        table.do(dealer.legal())
    made = None
    while made is None and not dealer.done():
        made = dealer.misdeal(params["kind"], rng)
        if made is None:
            table.do(dealer.legal())
    assume(made is not None)
    assert made is not None
    line, _kind, alarm_round, _corrections = made
    table.do(line)
    if not play_on:
        return table.log, dealer, made
    if correction is not None:
        fix = dealer.correct(correction, line, alarm_round)
        if fix is not None:
            table.do(fix)
    while not dealer.done():
        table.do(dealer.legal())
    return table.log, dealer, made


@settings(max_examples=400, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    profile=st.sampled_from(["macau", "house6", "csm"]),
    open_mode=st.sampled_from(["implicit", "explicit"]),
    reveal=st.sampled_from(["immediate", "on_reveal"]),
    kind=st.sampled_from(KINDS),
    step=st.integers(0, 60),
)
def test_every_misdeal_is_settled_by_each_correction_it_lists(**params: object) -> None:
    log, _dealer, made = run(params, correction=None, play_on=False)
    _line, kind, alarm_round, corrections = made
    alarms = of(log, "alarm")
    event(f"{params['kind']} -> {kind}")
    if kind is None:  # an unreadable plain burn card: nothing to correct
        assert alarms == []
        corrections = [None]
    else:
        assert [(a.kind, a.round, a.corrections) for a in alarms] == [
            (kind, alarm_round, corrections)
        ]
    for correction in corrections:
        log, dealer, _made = run(params, correction)
        alarms = of(log, "alarm")
        assert len(alarms) == (0 if kind is None else 1), alarms
        cleared = of(log, "alarm_cleared")
        assert [(c.id, c.by) for c in cleared] == [(a.id, correction) for a in alarms]
        check_results(log, dealer)


def check_results(log: list, dealer: Dealer) -> None:
    """Every round the dealer finished has the tableau's result, or is void, and no other."""
    shown: dict[int, object] = {}
    for message in log:
        if message.type == "result":
            shown[message.round] = (
                message.winner, message.player.cards, message.banker.cards
            )
        elif message.type == "void":
            shown[message.round] = "void"
    expected = {
        number: value if value == "void" else tuple(value)
        for number, value in dealer.expected.items()
    }
    assert shown == expected
