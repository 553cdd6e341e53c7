"""The terminal board's last result names EZ Baccarat's side bets won (issue 33)."""

from __future__ import annotations

from baccarat.boards.terminal import result_text
from support.tables import Table, of


def last_result_line(profile: str, cards: str) -> str:
    table = Table(profile, burn="none")
    table.do("shoe", *cards.split())
    return result_text(of(table.log, "result")[0]).plain


def test_a_dragon7_a_panda8_and_the_banker_push_in_words() -> None:
    assert last_result_line("ez", "2S AC 3H 2C KS 4D") == (
        "BANKER WINS  P 5 : 7 B  Dragon 7, banker bet pushes"
    )
    assert last_result_line("ez", "2S KC 3H 7C 3D") == "PLAYER WINS  P 8 : 7 B  Panda 8"
    assert last_result_line("ez", "2S 3C 4H 4C") == "BANKER WINS  P 6 : 7 B"


def test_a_macau_result_says_nothing_of_side_bets() -> None:
    assert last_result_line("macau", "2S AC 3H 2C KS 4D") == "BANKER WINS  P 5 : 7 B"
