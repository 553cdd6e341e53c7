"""Engine inputs for a whole seeded shoe, for tests, benchmarks and replay files.

The cards come out in shuffled order and the engine, in implicit mode, deals them by the
tableau itself; the cut card comes out when ``cut_from_end`` cards are left. Play stops
where the shoe's profile says the shoe ends.
"""

from __future__ import annotations

from collections.abc import Iterator

from baccarat.cards import shuffled_shoe
from baccarat.controller.engine.inputs import CutCardSeen, DrawCard, Input, NewShoe

DEFAULT_CUT_FROM_END = 14


def shoe_inputs(
    decks: int, seed: int, *, cut_card: bool = True, cut_from_end: int = DEFAULT_CUT_FROM_END
) -> Iterator[Input]:
    """``shoe``, then every card of a seeded shoe, with ``cut`` where the cut card lies."""
    cards = shuffled_shoe(decks, seed)
    yield NewShoe(decks=decks)
    for i, card in enumerate(cards):
        if cut_card and len(cards) - i == cut_from_end:
            yield CutCardSeen()
        yield DrawCard(card)
