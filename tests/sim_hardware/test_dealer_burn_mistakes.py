"""The simulated dealer makes the burn press mistakes on request (issue 33)."""

from __future__ import annotations

import argparse

import pytest

from baccarat.cli.sim import make_dealer, parse_mistakes
from baccarat.drivers.events import CardDrawn, DealerButton
from baccarat.rules.profiles import load_profile
from baccarat.sim_hardware.dealer import Dealer, Step


def _round(steps: list[Step], number: int) -> list[str]:
    out = []
    for step in steps:
        if step.round_no != number:
            continue
        if isinstance(step.event, DealerButton):
            out.append(step.event.button)
        elif isinstance(step.event, CardDrawn):
            out.append(step.role)
    return out


def test_each_burn_mistake_by_round() -> None:
    profile = load_profile("house6")
    dealer = Dealer.for_profile(profile, seed=3, mistakes_at={
        2: "skipped_burn", 3: "double_burn", 4: "burn_press_no_card"})
    steps = list(dealer.steps())
    assert _round(steps, 1)[:4] == ["open", "burn", "burn", "P1"]
    assert _round(steps, 2)[:2] == ["open", "P1"]
    assert _round(steps, 3)[:6] == ["open", "burn", "burn", "burn", "burn", "P1"]
    assert _round(steps, 4)[:5] == ["open", "burn", "burn", "burn", "P1"]
    tagged = {(s.round_no, s.role, s.mistake) for s in steps if s.mistake}
    assert (3, "burn", "double_burn") in tagged
    assert (4, "button", "burn_press_no_card") in tagged
    assert dealer.mistakes_made == [(2, "skipped_burn"), (3, "double_burn"),
                                    (4, "burn_press_no_card")]


def test_the_rate_chooses_among_the_kinds_asked_for_only() -> None:
    dealer = Dealer.for_profile(load_profile("house6"), seed=5, mistake_rate=0.5,
                                mistake_kinds=["double_burn"])
    list(dealer.steps())
    assert {m for _n, m in dealer.mistakes_made} == {"double_burn"}


def test_the_cli_words() -> None:
    assert parse_mistakes(["2:double_burn", "burn_press_no_card"]) == (
        {2: "double_burn"}, ["burn_press_no_card"])
    with pytest.raises(ValueError, match="no mistake 'burnt'"):
        parse_mistakes(["burnt"])
    with pytest.raises(ValueError, match="round must be a number"):
        parse_mistakes(["x:double_burn"])
    args = argparse.Namespace(seed=1, protocol="framed", misdeal_rate=0.0, burn=None,
                              decks=None, mistake=["3:double_burn"])
    dealer = make_dealer(args, 1, load_profile("house6"))
    assert dealer.mistakes_at == {3: "double_burn"}
