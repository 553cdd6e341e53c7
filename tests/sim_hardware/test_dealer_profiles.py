"""The dealer deals a rule profile's shoe: burns, the round's order, the cut card, the end."""

from __future__ import annotations

from collections import defaultdict

import pytest

from baccarat.drivers.events import CardDrawn, CutCard, DealerButton, ShoeInserted
from baccarat.rules.profiles import load_profile
from baccarat.rules.tableau import total, winner
from baccarat.sim_hardware.dealer import CUT_FROM_END, Dealer, Step


def by_round(steps: list[Step]) -> dict[int, list[Step]]:
    rounds: dict[int, list[Step]] = defaultdict(list)
    for step in steps:
        rounds[step.round_no].append(step)
    return rounds


def what(step: Step) -> str:
    """``open``, ``burn`` (the button), ``card:burn``, ``card:P1``, ``cut``, ``shoe``, ..."""
    if isinstance(step.event, DealerButton):
        return step.event.button
    if isinstance(step.event, CardDrawn):
        return f"card:{step.role}"
    return step.role


def result(round_steps: list[Step]) -> str:
    player = [s.event.card.value for s in round_steps
              if isinstance(s.event, CardDrawn) and s.role.startswith("P")]
    banker = [s.event.card.value for s in round_steps
              if isinstance(s.event, CardDrawn) and s.role.startswith("B")]
    return winner(total(player), total(banker))


def test_house6_burns_eight_then_each_round_opens_burns_and_deals() -> None:
    dealer = Dealer.for_profile(load_profile("house6"), seed=3)
    assert len(dealer.cards) == 6 * 52
    steps_dealt = list(dealer.steps())
    rounds = by_round(steps_dealt)
    assert [what(s) for s in rounds[0]] == ["shoe", "burn"] + ["card:burn"] * 8
    for number, steps in rounds.items():
        if number == 0:
            continue
        kinds = [what(s) for s in steps if what(s) not in ("cut", "shoe")]
        assert kinds[:4] == ["open", "burn", "card:burn", "card:P1"], number
        assert kinds[-2] == "reveal"
        assert kinds[-1].startswith("declare_")
    cut = next(s for s in steps_dealt if isinstance(s.event, CutCard))
    assert cut.round_no > 0


def test_the_round_burn_comes_after_open_without_a_profile_too() -> None:
    steps = list(Dealer(decks=8, seed=4, burn=0, round_burn=2).steps())
    first_round = [what(s) for s in by_round(steps)[1]]
    assert first_round[:5] == ["open", "burn", "card:burn", "card:burn", "card:P1"]


def test_one_more_round_after_the_cut_only_if_the_cut_round_was_a_tie() -> None:
    seen = {True: 0, False: 0}
    for seed in range(400):
        steps = list(Dealer.for_profile(load_profile("house6"), seed=seed).steps())
        cut_round = next(s.round_no for s in steps if isinstance(s.event, CutCard))
        last_round = steps[-1].round_no
        tie = result(by_round(steps)[cut_round]) == "tie"
        assert last_round == cut_round + (1 if tie else 0), seed
        seen[tie] += 1
        if min(seen.values()) >= 2:
            break
    assert min(seen.values()) >= 2, f"seeds found: {seen}"


def test_finish_round_and_one_more_round() -> None:
    macau = list(Dealer.for_profile(load_profile("macau"), seed=9).steps())
    cut_round = next(s.round_no for s in macau if isinstance(s.event, CutCard))
    assert macau[-1].round_no == cut_round
    more = load_profile("macau", after_cut="one_more_round")
    steps = list(Dealer.for_profile(more, seed=9).steps())
    assert steps[-1].round_no == cut_round + 1


def test_the_cut_card_is_fourteen_from_the_end() -> None:
    steps = list(Dealer.for_profile(load_profile("house6"), seed=5).steps())
    cut_at = next(i for i, s in enumerate(steps) if isinstance(s.event, CutCard))
    assert sum(isinstance(s.event, CardDrawn) for s in steps[:cut_at]) == 6 * 52 - CUT_FROM_END


def test_a_continuous_shuffler_has_no_burn_and_no_cut_card() -> None:
    dealer = Dealer.for_profile(load_profile("csm"), seed=2)
    steps = list(dealer.steps())
    assert not any(s.role == "burn" for s in steps)
    assert not any(isinstance(s.event, CutCard) for s in steps)
    assert not any(isinstance(s.event, DealerButton) and s.event.button == "burn" for s in steps)
    assert dealer.remaining < 6  # dealt until the cards ran out
    assert isinstance(steps[0].event, ShoeInserted)
    assert [what(s) for s in by_round(steps)[1]][:2] == ["open", "card:P1"]


@pytest.mark.parametrize(("burn", "expected"), [("decks", 6), ("none", 0)])
def test_burn_by_decks_and_none(burn: str, expected: int) -> None:
    profile = load_profile("house6", burn=burn)
    steps = list(Dealer.for_profile(profile, seed=1).steps())
    assert sum(s.role == "burn" for s in by_round(steps)[0]) == expected


def test_the_first_card_burn_follows_the_profiles_burn_values() -> None:
    values = dict.fromkeys("A23456789TJQK", 2)
    profile = load_profile("macau", burn_values=values)
    steps = list(Dealer.for_profile(profile, seed=1).steps())
    assert sum(s.role == "burn" for s in by_round(steps)[0]) == 1 + 2
    assert Dealer.for_profile(profile, seed=1).decks == 8


def test_decks_override_and_buttons_off() -> None:
    dealer = Dealer.for_profile(load_profile("house6", decks=8), seed=1, buttons=False)
    assert len(dealer.cards) == 8 * 52
    assert not any(isinstance(e, DealerButton) for e in dealer.events())


def test_a_step_records_what_the_dealer_did() -> None:
    steps = list(Dealer(decks=8, seed=5, mistakes_at={2: "extra_card"}).steps())
    records = [s.record(3) for s in steps]
    assert records[0] == {"shoe": 3, "round": 0, "role": "shoe", "card": None,
                          "button": None, "mistake": None}
    assert records[1]["button"] == "burn"
    extra = next(r for r in records if r["role"] == "extra")
    assert extra["mistake"] == "extra_card"
    assert extra["round"] == 2
    card_steps = [s for s in steps if isinstance(s.event, CardDrawn)]
    assert [r["card"] for r in records if r["card"]] == [s.event.card.code for s in card_steps]
