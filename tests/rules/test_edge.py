"""The live edge (issue 24): the fast update against the plain enumeration, and known figures."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baccarat.cards import Card, deck, parse_card, shuffled_shoe
from baccarat.rules.edge import (
    EdgeError,
    LiveOdds,
    ShoeTooShortError,
    cards_left,
    live_odds,
)
from baccarat.rules.edge_enumeration import enumerate_live_odds
from baccarat.rules.odds import compute_odds
from baccarat.rules.profiles import Payouts, Profile, load_profile

# The built-in profiles share the default payouts; "tie9" prices other ones too.
PROFILES = [
    load_profile("macau"),
    load_profile("house6"),
    load_profile("csm"),
    load_profile("ez"),
    Profile(
        name="tie9", decks=6,
        payouts=Payouts(tie=9, pair=12, banker_commission=0.04, banker=0.95),
    ),
]
CHUNKS = 20
SHOES_PER_CHUNK = 50  # 1,000 depleted shoes in all, in chunks a worker takes one by one


def _left(profile: Profile, rng: random.Random) -> tuple[int, ...]:
    """A shoe of the profile dealt down to a random depth: a quarter of them to 6-20 cards."""
    full = 52 * profile.decks
    n = rng.randint(6, 20) if rng.random() < 0.25 else rng.randint(6, full)
    shoe = shuffled_shoe(profile.decks, rng.randrange(2**32))
    return cards_left(profile, shoe[: full - n])


def _full(profile: Profile) -> tuple[int, ...]:
    return (4 * profile.decks,) * 13


@pytest.mark.slow  # about 3 s of CPU a chunk: the enumeration takes 0.05-0.1 s a shoe
@pytest.mark.timeout(600)  # pure CPU: on a loaded machine a chunk waits for a core, no hang
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fast_update_equals_the_enumeration_on_depleted_shoes(chunk: int) -> None:
    rng = random.Random(24_000 + chunk)
    for i in range(SHOES_PER_CHUNK):
        profile = PROFILES[i % len(PROFILES)]
        left = _left(profile, rng)
        assert live_odds(profile, left) == enumerate_live_odds(profile, left), left


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_full_shoe_equals_the_enumeration_and_the_full_shoe_odds(profile: Profile) -> None:
    live = live_odds(profile, _full(profile))
    assert live == enumerate_live_odds(profile, _full(profile))
    full = compute_odds(profile.decks, profile.payouts)
    floats = live.as_floats()
    for name in ("banker", "player", "tie", "player_pair", "banker_pair"):
        assert floats[name] == pytest.approx(getattr(full, name), abs=1e-12)
    if profile.payouts == Payouts():
        assert floats["edge_banker"] == pytest.approx(full.edge_banker, abs=1e-12)
        assert floats["edge_player_pair"] == pytest.approx(full.edge_pair, abs=1e-12)


def test_full_eight_deck_shoe_gives_the_readme_figures() -> None:
    live = live_odds(load_profile("macau"), (32,) * 13).as_floats()
    assert {k: round(v, 6) for k, v in live.items() if not k.startswith("edge")} == {
        "banker": 0.458597, "player": 0.446247, "tie": 0.095156,
        "player_pair": 0.074699, "banker_pair": 0.074699, "dragon7": 0.022534,
        "panda8": 0.034543,
    }
    assert round(live["edge_banker"] * 100, 2) == 1.06
    assert round(live["edge_player"] * 100, 2) == 1.24
    assert round(live["edge_tie"] * 100, 2) == 14.36
    assert live["edge_player_pair"] == live["edge_banker_pair"]


def test_chances_are_exact_fractions_that_add_up() -> None:
    live = live_odds(load_profile("house6"), _left(load_profile("house6"), random.Random(1)))
    assert all(isinstance(v, Fraction) for k, v in vars(live).items() if k != "cards_left")
    assert live.banker + live.player + live.tie == 1


def test_six_cards_is_the_least_that_has_odds() -> None:
    profile = load_profile("macau")
    six = (0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1, 1)  # six cards worth 0: always a tie
    assert live_odds(profile, six).tie == 1
    assert live_odds(profile, six) == enumerate_live_odds(profile, six)
    five = (1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 0)
    with pytest.raises(ShoeTooShortError, match="5 cards left: a round may need 6"):
        live_odds(profile, five)
    with pytest.raises(ShoeTooShortError):
        enumerate_live_odds(profile, five)
    with pytest.raises(ShoeTooShortError, match="0 cards left"):
        live_odds(profile, (0,) * 13)


def _counts_of(cards: str) -> tuple[int, ...]:
    """The counts by rank of exactly these cards, as if they were all a shoe held."""
    counts = [0] * 13
    for text in cards.split():
        counts[parse_card(text).rank - 1] += 1
    return tuple(counts)


def test_the_last_six_cards() -> None:
    profile = load_profile("macau")
    left = _counts_of("KS KH KD KC 9S 5H")
    live = live_odds(profile, left)
    assert live == enumerate_live_odds(profile, left)
    assert live.banker + live.player + live.tie == 1
    assert live.player_pair == Fraction(4 * 3, 6 * 5)  # four kings among six cards


@pytest.mark.parametrize(
    ("left", "message"),
    [
        ((32,) * 12, "13 counts, not 12"),
        ((33, *(32,) * 12), "33 cards of rank A left: 8 decks hold 0 to 32"),
        ((-1, *(32,) * 12), "-1 cards of rank A left"),
    ],
)
def test_counts_no_shoe_can_hold_are_an_error(left: tuple[int, ...], message: str) -> None:
    with pytest.raises(EdgeError, match=message):
        live_odds(load_profile("macau"), left)


def test_cards_left_counts_by_rank_and_refuses_a_card_out_too_often() -> None:
    profile = load_profile("house6")
    out = [parse_card(c) for c in ("AS", "AH", "TS", "JD", "KC")]
    left = cards_left(profile, out)
    assert (left[0], left[9], left[10], left[11], left[12]) == (22, 23, 23, 24, 23)
    assert sum(left) == 312 - 5
    with pytest.raises(EdgeError, match="AS is out 7 times, but a 6-deck shoe holds only 6"):
        cards_left(profile, [Card(1, "S")] * 7)
    assert sum(cards_left(profile, deck(6)[:-6])) == 6


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=24), min_size=13, max_size=13).filter(
        lambda counts: sum(counts) >= 6
    )
)
def test_any_counts_a_six_deck_shoe_can_hold(left: list[int]) -> None:
    profile = load_profile("house6")
    live = live_odds(profile, left)
    assert isinstance(live, LiveOdds)
    assert live == enumerate_live_odds(profile, left)
    assert live.banker + live.player + live.tie == 1
    assert 0 <= live.player_pair == live.banker_pair <= 1


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=3), min_size=13, max_size=13).filter(
        lambda counts: 6 <= sum(counts) <= 16
    )
)
def test_the_last_cards_of_a_shoe(left: list[int]) -> None:
    profile = load_profile("macau")
    assert live_odds(profile, left) == enumerate_live_odds(profile, left)
