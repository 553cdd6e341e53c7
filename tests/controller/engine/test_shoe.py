"""The shoe's life (Art. 1-3, 8), squeeze tables, and whole shoes under each profile."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.messages.catalog import parse_message
from baccarat.rules.profiles import load_profile
from support.tables import Table, of

# Art. 9 written out again by hand, independently of the tableau module, for the checks.
BANKER_DRAWS = {
    0: set(range(10)), 1: set(range(10)), 2: set(range(10)),
    3: {0, 1, 2, 3, 4, 5, 6, 7, 9}, 4: {2, 3, 4, 5, 6, 7}, 5: {4, 5, 6, 7}, 6: {6, 7},
    7: set(), 8: set(), 9: set(),
}
VALUE = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0} | {str(n): n for n in range(2, 10)}


def value(code: str) -> int:
    return VALUE[code[0]]


def check_round_obeys_tableau(player: list[str], banker: list[str]) -> None:
    """Art. 7 and 9, checked from the cards of a finished round."""
    p2 = (value(player[0]) + value(player[1])) % 10
    b2 = (value(banker[0]) + value(banker[1])) % 10
    if p2 >= 8 or b2 >= 8:
        assert (len(player), len(banker)) == (2, 2)
        return
    assert len(player) == (3 if p2 <= 5 else 2)
    if len(player) == 2:
        assert len(banker) == (3 if b2 <= 5 else 2)
    else:
        assert len(banker) == (3 if value(player[2]) in BANKER_DRAWS[b2] else 2)


def play_shoe(profile_name: str, seed: int, decks: int | None = None) -> list:
    profile = load_profile(profile_name, decks=decks)
    engine = Engine(profile)
    out = []
    for inp in shoe_inputs(profile.decks, seed, cut_card=profile.cut_card):
        outcome = engine.feed(inp)
        assert outcome.refused is None
        out += outcome.messages
        if engine.shoe is not None and engine.shoe.phase == "closed":
            break
        if profile.continuous_shuffler and len(of(out, "result")) >= 200:
            break
    return out


@pytest.mark.parametrize("profile", ["macau", "house6", "csm"])
def test_full_shoe(profile: str) -> None:
    out = play_shoe(profile, seed=7)
    results = of(out, "result")
    assert len(results) > 40
    assert of(out, "alarm") == []
    for result in results:
        check_round_obeys_tableau(result.player.cards, result.banker.cards)
    seqs = [m.seq for m in out]
    assert seqs == list(range(1, len(out) + 1))
    for message in out:  # every body the engine emits parses back unchanged
        assert parse_message(message.to_json()) == message
    last = of(out, "shoe")[-1]
    if profile == "csm":
        assert last.cards_left == 8 * 52  # cards go back to the machine each round
        assert last.cards_burned == 0
        assert last.phase == "ready"
    else:
        assert last.phase == "closed"
        assert last.cut_card
        assert last.rounds == len(results)


def test_house6_burns_one_card_every_round() -> None:
    out = play_shoe("house6", seed=3)
    cards = of(out, "card")
    shoe_burn = [c for c in cards if c.round is None]
    assert len(shoe_burn) == 8
    rounds = {c.round for c in cards if c.round is not None}
    for number in rounds:
        of_round = [c for c in cards if c.round == number]
        assert of_round[0].position == "burn"
        assert [c.position for c in of_round[1:3]] == ["P1", "B1"]


def test_macau_burn_by_first_card() -> None:
    table = Table("macau", decks=8)
    table.do("shoe")
    first = of(table.do("7S"), "card")[0]
    assert (first.position, first.face_up) == ("burn", True)
    out = table.do(*["2H"] * 6)
    assert of(out, "shoe") == []  # still burning: 7 more after the face-up 7
    out = table.do("3H")
    assert of(out, "shoe")[0].phase == "ready"
    assert of(out, "shoe")[0].cards_burned == 8
    assert of(table.do("9D"), "card")[0].position == "P1"


def test_macau_burn_by_decks_and_picture_counts_ten() -> None:
    table = Table("macau", burn="decks", decks=6)
    table.do("shoe", *["4C"] * 5)
    assert of(table.do("4D"), "shoe")[0].cards_burned == 6
    table = Table("macau", decks=8)
    table.do("shoe", "KS")
    assert table.engine.shoe is not None
    assert table.engine.shoe.burn_due == 10  # a king counts ten in the burn mapping


@pytest.mark.parametrize(
    ("after_cut", "rounds_after_cut"),
    [("finish_round", 1), ("one_more_round", 2)],
)
def test_cut_card_mid_round(after_cut: str, rounds_after_cut: int) -> None:
    table = Table("macau", burn="none", decks=8, after_cut=after_cut)
    table.do("shoe", "7S", "cut")  # the cut card comes out during round 1
    stand = ("6H", "KS", "KH")
    table.do(*stand)
    for _ in range(rounds_after_cut - 1):
        table.do("7S", "6H", "KS", "KH")
    assert of(table.log, "shoe")[-1].phase == "closed"
    assert len(of(table.log, "result")) == rounds_after_cut
    assert of(table.do("9S"), "alarm")[0].kind == "shoe_closed"


def test_house6_one_more_round_only_after_tie() -> None:
    table = Table("house6", burn="none", burn_per_round=0, decks=6)
    table.do("shoe", "cut", "4S", "9S", "4H", "9H")  # last round ends in a tie 8-8
    assert of(table.log, "result")[0].winner == "tie"
    assert of(table.log, "shoe")[-1].phase == "ready"
    table.do("4D", "9D", "4C", "9C")  # another tie: no second extension
    assert of(table.log, "shoe")[-1].phase == "closed"


def test_house6_no_extension_without_tie() -> None:
    table = Table("house6", burn="none", burn_per_round=0, decks=6)
    table.do("shoe", "cut", "7S", "6H", "KS", "KH")
    assert of(table.log, "shoe")[-1].phase == "closed"


def test_void_last_round_is_replayed() -> None:
    table = Table("macau", burn="none", decks=8, open_mode="explicit")
    table.do("shoe", "cut", "open", "2S", "3H", "void")
    assert of(table.log, "shoe")[-1].phase == "ready"
    table.do("open", "7S", "6H", "KS", "KH")
    assert of(table.log, "shoe")[-1].phase == "closed"


def test_operator_burn_between_rounds_only() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe", "7S", "6H")
    assert "between rounds" in table.refused("burn")
    table.do("KS", "KH", "burn 2")
    out = table.do("AS", "AH")
    assert [c.position for c in of(out, "card")] == ["burn", "burn"]
    assert of(table.do("2C"), "card")[0].position == "P1"


def test_end_shoe_between_rounds_only() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe", "7S")
    assert "between rounds" in table.refused("end")
    assert "in progress" in table.refused("shoe", alarm="shoe_refused")
    table.do("6H", "KS", "KH", "end")
    assert of(table.log, "shoe")[-1].phase == "closed"
    assert of(table.do("shoe"), "shoe")[0].shoe == 2


def test_exposed_card_is_recorded_and_changes_nothing() -> None:
    table = Table("macau", burn="none", decks=8)
    table.do("shoe", "7S", "6H", "exposed", "KS", "KH")
    result = of(table.log, "result")[0]
    assert result.exposed == ["B1"]
    assert result.winner == "player"


def test_squeeze_withholds_cards_and_result_until_reveal() -> None:
    table = Table("macau", burn="none", decks=8, reveal="on_reveal")
    out = table.do("shoe", "7S", "6H", "KS", "KH")
    assert of(out, "card") == []
    assert of(out, "result") == []
    assert table.engine.round is not None
    assert table.engine.round.winner == "player"  # known inside, not shown
    out = table.do("reveal")
    assert [c.position for c in of(out, "card")] == ["P1", "B1", "P2", "B2"]
    assert of(out, "result")[0].winner == "player"
    assert out.index(of(out, "result")[0]) > out.index(of(out, "card")[-1])


def test_squeeze_reveal_too_early_is_missing_card() -> None:
    table = Table("macau", burn="none", decks=8, reveal="on_reveal")
    table.do("shoe", "2S", "6H", "KS", "KH")
    assert of(table.do("reveal"), "alarm")[0].kind == "missing_card"
    out = table.do("9D", "reveal")
    assert of(out, "result")[0].player.cards == ["2S", "KS", "9D"]


def test_same_inputs_same_bytes() -> None:
    first = [m.to_json() for m in play_shoe("macau", seed=11)]
    second = [m.to_json() for m in play_shoe("macau", seed=11)]
    assert first == second


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    profile=st.sampled_from(["macau", "house6", "csm"]),
    decks=st.integers(1, 8),
)
def test_random_shoes_obey_the_rules(seed: int, profile: str, decks: int) -> None:
    out = play_shoe(profile, seed, decks=decks)
    for result in of(out, "result"):
        check_round_obeys_tableau(result.player.cards, result.banker.cards)
    for shoe in of(out, "shoe"):
        assert shoe.cards_dealt + shoe.cards_burned + shoe.cards_left == decks * 52
    for card in of(out, "card"):
        assert card.card is not None
    assert of(out, "alarm") == []


def test_continuous_shuffler_roads_start_a_new_page_after_72_results() -> None:
    out = play_shoe("csm", seed=4)  # one shoe of cards: 85 results
    roads = of(out, "roads")
    sizes = [len(r.bead_plate.cells) for r in roads[1:]]  # the first is the empty start
    assert max(sizes) == 72
    assert sizes[71:74] == [72, 1, 2]  # result 73 opens a fresh page
