"""The dealer model: correct rounds by the tableau, burns, cut card, buttons, mistakes."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from baccarat.cards import Card, deck
from baccarat.drivers.codec import get_codec
from baccarat.drivers.events import CardDrawn, CutCard, DealerButton, ShoeInserted, ShoeRemoved
from baccarat.rules.tableau import next_position, total, winner
from baccarat.sim_hardware.dealer import (
    MISTAKES,
    Dealer,
    Mistake,
    Step,
    first_card_burn_count,
    shuffled_shoe,
)


def rounds_of(steps: list[Step]) -> dict[int, list[Step]]:
    by_round: dict[int, list[Step]] = defaultdict(list)
    for step in steps:
        by_round[step.round_no].append(step)
    return by_round


def hand_cards(steps: list[Step]) -> list[tuple[str, Card]]:
    return [
        (s.role, s.event.card)
        for s in steps
        if isinstance(s.event, CardDrawn) and s.role[:1] in "PB" and len(s.role) == 2
    ]


def check_round_follows_tableau(steps: list[Step]) -> None:
    player: list[int] = []
    banker: list[int] = []
    for role, card in hand_cards(steps):
        assert role == next_position(player, banker)
        (player if role.startswith("P") else banker).append(card.value)
    assert next_position(player, banker) is None


def test_a_clean_shoe_deals_every_round_by_the_tableau() -> None:
    dealer = Dealer(decks=8, seed=11)
    steps = list(dealer.steps())
    rounds = rounds_of(steps)
    assert isinstance(steps[0].event, ShoeInserted)
    assert isinstance(steps[-1].event, ShoeRemoved)
    for round_no, round_steps in rounds.items():
        if round_no == 0:
            continue
        check_round_follows_tableau(round_steps)
        buttons = [s.event.button for s in round_steps if isinstance(s.event, DealerButton)]
        assert buttons[0] == "open"
        assert buttons[-2] == "reveal"
        cards = dict(hand_cards(round_steps))
        player = [c.value for r, c in cards.items() if r.startswith("P")]
        banker = [c.value for r, c in cards.items() if r.startswith("B")]
        assert buttons[-1] == "declare_" + winner(total(player), total(banker))
    assert len(rounds) > 60


def test_the_cards_dealt_are_the_shoe_in_order() -> None:
    cards = shuffled_shoe(8, seed=4)
    dealer = Dealer(decks=8, seed=4)
    dealt = [e.card for e in dealer.events() if isinstance(e, CardDrawn)]
    assert dealt == cards[: len(dealt)]
    assert Counter(cards) == Counter(deck(8))


def test_first_card_burn() -> None:
    assert [first_card_burn_count(Card(r, "S")) for r in (1, 5, 9, 10, 11, 13)] == [
        1,
        5,
        9,
        10,
        10,
        10,
    ]
    dealer = Dealer(decks=8, seed=2)
    burn = [s for s in dealer.steps() if s.round_no == 0 and s.role == "burn"]
    first = burn[0].event.card  # type: ignore[attr-defined]
    assert len(burn) == 1 + first_card_burn_count(first)


def test_fixed_burn_and_round_burns() -> None:
    steps = list(Dealer(decks=6, seed=3, burn=8, round_burn=1).steps())
    rounds = rounds_of(steps)
    assert sum(s.role == "burn" for s in rounds[0]) == 8
    assert all(sum(s.role == "burn" for s in rounds[r]) == 1 for r in rounds if r > 0)


def test_the_cut_card_comes_out_at_its_place_and_ends_the_shoe() -> None:
    dealer = Dealer(decks=8, seed=9, cut_from_end=14)
    steps = list(dealer.steps())
    cut_at = next(i for i, s in enumerate(steps) if isinstance(s.event, CutCard))
    cards_before = sum(isinstance(s.event, CardDrawn) for s in steps[:cut_at])
    assert cards_before == 416 - 14
    cut_round = steps[cut_at].round_no
    assert steps[-1].round_no == cut_round  # that round was the last
    one_more = list(Dealer(decks=8, seed=9, cut_from_end=14, rounds_after_cut=1).steps())
    assert one_more[-1].round_no == cut_round + 1


def test_without_buttons_only_cards_and_shoe_events() -> None:
    events = list(Dealer(decks=8, seed=1, buttons=False).events())
    assert not any(isinstance(e, DealerButton) for e in events)
    line_events = list(Dealer(decks=8, seed=1).events(get_codec("line").carries))
    assert all(isinstance(e, CardDrawn) for e in line_events)


def test_same_seed_same_shoe() -> None:
    first = list(Dealer(decks=8, seed=42, mistake_rate=0.2).steps())
    second = list(Dealer(decks=8, seed=42, mistake_rate=0.2).steps())
    assert first == second
    assert first != list(Dealer(decks=8, seed=43, mistake_rate=0.2).steps())


@pytest.mark.parametrize("mistake", MISTAKES)
def test_each_scripted_mistake(mistake: Mistake) -> None:
    round_burn = 1 if mistake == "skipped_burn" else 0
    clean = rounds_of(list(Dealer(decks=8, seed=5, round_burn=round_burn).steps()))
    dealer = Dealer(decks=8, seed=5, round_burn=round_burn, mistakes_at={3: mistake})
    faulty = rounds_of(list(dealer.steps()))
    assert dealer.mistakes_made == [(3, mistake)]
    assert clean[2] == faulty[2]
    good, bad = clean[3], faulty[3]
    good_cards = [s.event for s in good if isinstance(s.event, CardDrawn)]
    bad_cards = [s.event for s in bad if isinstance(s.event, CardDrawn)]
    if mistake == "extra_card":
        assert bad[-3].role == "extra"
        assert bad[-3].mistake == "extra_card"
        assert len(bad_cards) == len(good_cards) + 1
        assert bad_cards[:-1] == good_cards
    elif mistake == "missing_card":
        assert len(bad_cards) == len(good_cards) - 1
        assert bad_cards == good_cards[:-1]
    elif mistake == "skipped_burn":
        assert not any(s.role == "burn" for s in bad)
    elif mistake == "wrong_declare":
        assert bad[-1].mistake == "wrong_declare"
        assert bad[-1].event != good[-1].event
        assert bad_cards == good_cards
    elif mistake == "foreign_card":
        foreign = [s for s in bad if s.mistake == "foreign_card"]
        assert len(foreign) == 1
        check_round_follows_tableau(bad)  # the dealer plays the foreign card as dealt
        # the shoe's own cards keep their order: the foreign one did not come from it
        shoe_cards = [s.event for r in sorted(clean) if r >= 3 for s in clean[r]]
        shoe_cards = [e for e in shoe_cards if isinstance(e, CardDrawn)]
        own = [s.event for s in bad if isinstance(s.event, CardDrawn) and not s.mistake]
        assert own == shoe_cards[: len(own)]


def test_skipped_burn_without_round_burns_skips_the_shoe_burn() -> None:
    dealer = Dealer(decks=8, seed=5, mistakes_at={1: "skipped_burn"})
    assert not any(s.role == "burn" for s in dealer.steps())


def test_a_foreign_card_is_one_the_shoe_has_run_out_of_when_there_is_one() -> None:
    cards = [Card(1, "S")] * 20 + shuffled_shoe(1, seed=1)
    dealer = Dealer(decks=1, cards=cards, burn=0, mistakes_at={2: "foreign_card"})
    foreign = [s for s in dealer.steps() if s.mistake == "foreign_card"]
    assert foreign[0].event == CardDrawn(Card(1, "S"))


def test_mistakes_at_a_rate_are_of_every_kind() -> None:
    made: Counter[str] = Counter()
    for seed in range(10):
        dealer = Dealer(decks=8, seed=seed, round_burn=1, mistake_rate=0.3)
        list(dealer.steps())
        made.update(m for _, m in dealer.mistakes_made)
    assert set(made) == set(MISTAKES)
