"""Card notations, rule profiles from TOML, bets, the input notation."""

from __future__ import annotations

import contextlib
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baccarat.cards import ALL_CARDS, CardError, parse_card
from baccarat.controller.engine.inputs import InputError, parse_input
from baccarat.rules.bets import Stakes, winnings
from baccarat.rules.profiles import Payouts, ProfileError, load_profile


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("TS", "TS"), ("ts", "TS"), ("10s", "TS"), ("10S", "TS"), ("AH", "AH"),
        ("A01", "AS"), ("a01", "AS"), ("H12", "QH"), ("C13", "KC"), ("D07", "7D"),
        ("A10", "TS"), (" kd ", "KD"),
    ],
)
def test_notations(text: str, code: str) -> None:
    assert parse_card(text).code == code


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"), ("ZS", "unknown rank"), ("TX", "unknown suit"), ("B05", "suit letter"),
        ("A14", "out of range"), ("H00", "out of range"), ("1S", "unknown rank"),
        ("joker", "expected a rank"), ("11H", "unknown rank"),
    ],
)
def test_bad_notations_name_the_input(text: str, reason: str) -> None:
    with pytest.raises(CardError) as info:
        parse_card(text)
    assert reason in str(info.value)
    assert repr(text) in str(info.value)


def test_every_card_round_trips_in_every_notation() -> None:
    assert len({c.code for c in ALL_CARDS}) == 52
    for card in ALL_CARDS:
        assert parse_card(card.code) is card
        assert parse_card(card.shoe_code) is card
        assert parse_card(card.code.lower()) is card


@given(st.text(max_size=6))
def test_parse_card_never_raises_anything_else(text: str) -> None:
    with contextlib.suppress(CardError):
        parse_card(text)


def test_builtin_profiles() -> None:
    macau = load_profile()
    assert (macau.decks, macau.burn, macau.max_demo_rounds, macau.cut_card) == (
        8, "first_card", 3, True
    )
    house6 = load_profile("house6")
    assert (house6.decks, house6.burn_count, house6.burn_per_round, house6.after_cut) == (
        6, 8, 1, "one_more_if_tie"
    )
    csm = load_profile("csm")
    assert (csm.cut_card, csm.burn, csm.continuous_shuffler) == (False, "none", True)


def test_profile_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "vip.toml"
    path.write_text('[profile]\nbase = "house6"\ndecks = 8\nreveal = "on_reveal"\n')
    profile = load_profile(str(path))
    assert (profile.name, profile.decks, profile.burn_per_round, profile.reveal) == (
        "vip", 8, 1, "on_reveal"
    )


def test_bad_profiles_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="unknown profile"):
        load_profile("nowhere")
    with pytest.raises(ValueError, match="decks"):
        load_profile("macau", decks=13)
    with pytest.raises(ValueError, match="continuous shuffler"):
        load_profile("csm", cut_card=True)


STAKES = Stakes(player=Fraction(100), banker=Fraction(100), tie=Fraction(10),
                player_pair=Fraction(5), banker_pair=Fraction(5))


def test_winnings_banker_win_pays_less_commission() -> None:
    s = winnings(STAKES, "banker", player_pair=False, banker_pair=True)
    assert (s.player, s.banker, s.tie, s.player_pair, s.banker_pair) == (-100, 95, -10, -5, 55)


def test_winnings_player_win() -> None:
    s = winnings(STAKES, "player", player_pair=True, banker_pair=False)
    assert (s.player, s.banker, s.tie, s.player_pair, s.banker_pair) == (100, -100, -10, 55, -5)


def test_winnings_tie_pushes_player_and_banker() -> None:
    s = winnings(STAKES, "tie", player_pair=False, banker_pair=False)
    assert (s.player, s.banker, s.tie) == (0, 0, 80)
    assert s.total == 80 - 10


def test_winnings_with_house_payouts() -> None:
    s = winnings(
        STAKES, "banker", player_pair=False, banker_pair=False,
        payouts=Payouts(banker_commission=0.0, tie=9),
    )
    assert s.banker == 100
    assert winnings(
        STAKES, "tie", player_pair=False, banker_pair=False, payouts=Payouts(tie=9)
    ).tie == 90


@pytest.mark.parametrize(
    ("line", "text"),
    [("declare", "declare takes"), ("demo maybe", "demo takes"), ("burn x", "whole number"),
     ("open now", "takes no argument"), ("ZZ", "not an input"), ("foo bar", "unknown input")],
)
def test_bad_input_lines(line: str, text: str) -> None:
    with pytest.raises(InputError, match=text):
        parse_input(line)


def test_input_notation_round_trips() -> None:
    for line in ["TS", "unreadable", "shoe", "shoe 6", "cut", "open", "reveal", "void",
                 "burn", "burn 3", "accept_as_burn", "exposed", "declare tie", "demo on",
                 "demo off", "end"]:
        assert parse_input(line).to_text() == line


def test_the_errors_of_cards_inputs_and_profiles_share_the_package_root() -> None:
    from baccarat.controller.engine.engine import RefusedError
    from baccarat.errors import BaccaratError

    for error in (CardError, InputError, ProfileError, RefusedError):
        assert issubclass(error, BaccaratError)
    for error in (CardError, InputError, ProfileError):
        assert issubclass(error, ValueError)  # callers that catch ValueError still do
