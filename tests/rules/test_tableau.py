"""Article 9, cell by cell, against a table written out by hand."""

from __future__ import annotations

import pytest

from baccarat.rules import tableau
from support.tables import Table, of

# Banker's two-card total -> for Player's third card value 0..9, then "no third card":
# D = Banker draws, S = Banker stands. Written from the text of Art. 9, not from the code.
BANKER_HAND_TABLE = {
    0: "DDDDDDDDDD D",
    1: "DDDDDDDDDD D",
    2: "DDDDDDDDDD D",
    3: "DDDDDDDDSD D",
    4: "SSDDDDDDSS D",
    5: "SSSSDDDDSS D",
    6: "SSSSSSDDSS S",
    7: "SSSSSSSSSS S",
}
PLAYER_HAND_TABLE = "DDDDDDSS"  # Player's two-card total 0..7: draws on 0-5, stands on 6-7

# Two cards that make each total (0..9), with no pair among them.
TWO_CARDS = {
    0: ("KS", "QH"), 1: ("AS", "KH"), 2: ("AS", "AH"), 3: ("2S", "AH"), 4: ("3S", "AH"),
    5: ("4S", "AH"), 6: ("5S", "AH"), 7: ("6S", "AH"), 8: ("7S", "AH"), 9: ("8S", "AH"),
}
THIRD = {0: "TD", 1: "AD", 2: "2D", 3: "3D", 4: "4D", 5: "5D", 6: "6D", 7: "7D", 8: "8D",
         9: "9D"}


def cells() -> list[tuple[int, int | None, bool]]:
    out = []
    for banker, row in BANKER_HAND_TABLE.items():
        drawn, stood = row.split()
        for value, mark in enumerate(drawn):
            out.append((banker, value, mark == "D"))
        out.append((banker, None, stood == "D"))
    return out


@pytest.mark.parametrize(("banker", "third", "draws"), cells())
def test_banker_rule_function(banker: int, third: int | None, draws: bool) -> None:
    assert tableau.banker_draws(banker, third) is draws


@pytest.mark.parametrize("player", range(8))
def test_player_rule_function(player: int) -> None:
    assert tableau.player_draws(player) is (PLAYER_HAND_TABLE[player] == "D")


def _deal(table: Table, player_total: int, banker_total: int) -> None:
    p1, p2 = TWO_CARDS[player_total]
    b1, b2 = TWO_CARDS[banker_total]
    table.do(p1, b1, p2, b2)


@pytest.mark.parametrize(("banker", "third", "draws"), cells())
def test_engine_follows_every_cell(banker: int, third: int | None, draws: bool) -> None:
    """Through the engine: after the cards, is B3 due (no result yet) or is it complete?"""
    table = Table("macau", burn="none", decks=2)
    table.do("shoe")
    if third is None:
        _deal(table, 6, banker)  # Player 6 stands
        out = table.log
    else:
        _deal(table, 0, banker)  # Player 0 draws
        out = table.do(THIRD[third])
    results = of(out, "result")
    if draws:
        assert results == []
        assert table.engine.round is not None
        assert table.engine.round.next_position() == "B3"
        result = of(table.do("9C"), "result")[0]
        assert len(result.banker.cards) == 3
    else:
        assert len(results) == 1
        assert len(results[0].banker.cards) == 2


@pytest.mark.parametrize("player", range(10))
def test_engine_player_third_card(player: int) -> None:
    table = Table("macau", burn="none", decks=2)
    table.do("shoe")
    _deal(table, player, 7)  # Banker 7: never draws when Player stands
    results = of(table.log, "result")
    if player <= 5:
        assert results == []
        assert table.engine.round is not None
        assert table.engine.round.next_position() == "P3"
    else:
        assert len(results[0].player.cards) == 2


@pytest.mark.parametrize(("player", "banker"), [(8, 0), (9, 5), (0, 8), (3, 9), (8, 9)])
def test_naturals_stop_everyone(player: int, banker: int) -> None:
    table = Table("macau", burn="none", decks=2)
    table.do("shoe")
    _deal(table, player, banker)
    result = of(table.log, "result")[0]
    assert len(result.player.cards) == 2
    assert len(result.banker.cards) == 2
    assert result.player.natural is (player >= 8)
    assert result.banker.natural is (banker >= 8)


@pytest.mark.parametrize(
    ("cards", "winner", "p_total", "b_total"),
    [
        (("9S", "KH", "KS", "8H"), "player", 9, 8),
        (("2S", "3H", "KS", "KH", "2D", "5C"), "banker", 4, 8),
        (("TS", "7H", "5S", "KH", "3D"), "player", 8, 7),
    ],
)
def test_winner_and_totals(cards: tuple[str, ...], winner: str, p_total: int, b_total: int) -> None:
    table = Table("macau", burn="none", decks=2)
    table.do("shoe")
    results = of(table.do(*cards[:-1]), "result")
    assert results == []  # the last card is still due
    results = of(table.do(cards[-1]), "result")
    assert results[0].winner == winner
    assert (results[0].player.total, results[0].banker.total) == (p_total, b_total)


def test_tie_and_pairs() -> None:
    table = Table("macau", burn="none", decks=2)
    table.do("shoe")
    result = of(table.do("4S", "9S", "4H", "9H"), "result")[0]
    assert result.winner == "tie"
    assert (result.player.total, result.banker.total) == (8, 8)
    assert result.player.pair is True
    assert result.banker.pair is True
    result = of(table.do("JD", "9C", "QD", "9D"), "result")[0]
    assert result.winner == "banker"
    assert result.player.pair is False  # J-Q is not a pair (Art. 13)
    assert result.banker.pair is True
    result = of(table.do("JS", "8H", "JH", "KC"), "result")[0]
    assert result.player.pair is True  # J-J is
    assert result.banker.pair is False
