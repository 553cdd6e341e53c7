"""Playing cards: one canonical notation and parsers for the ones shoes and people use.

Canonical notation is ``<rank><suit>``: rank in ``A23456789TJQK``, suit in ``SHDC``
(``TS`` is the ten of spades, ``AH`` the ace of hearts). Accepted on input, case-insensitive:

* canonical ``TS``, ``ah``;
* ``10s`` (the ten written with two digits);
* the scanning-shoe code: suit letter (``A`` spades, ``H`` hearts, ``C`` clubs, ``D`` diamonds)
  and a two-digit rank ``01``..``13``: ``A01`` ace of spades, ``H12`` queen of hearts.

This module is the card model shared by the engine and the drivers; of the project it
imports only the root error.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final

from baccarat.errors import BaccaratError

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"
_SUIT_SET: Final = frozenset(SUITS)
SHOE_SUIT_LETTERS: Final = {"A": "S", "H": "H", "C": "C", "D": "D"}
"""Scanning-shoe suit letter -> canonical suit. Shoes use ``A`` for spades."""
SUIT_TO_SHOE_LETTER: Final = {v: k for k, v in SHOE_SUIT_LETTERS.items()}


class CardError(BaccaratError, ValueError):
    """A text that is not a card in any accepted notation."""

    def __init__(self, text: object, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"not a card: {text!r} ({reason})")


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card. ``rank`` 1 (ace) .. 13 (king); ``suit`` one of ``SHDC``."""

    rank: int
    suit: str
    code: str = field(init=False, compare=False, repr=False)
    """The canonical two-character code, e.g. ``TS``."""
    value: int = field(init=False, compare=False, repr=False)
    """Baccarat value (Art. 5): ace 1, two to nine face value, ten and pictures 0."""
    index: int = field(init=False, compare=False, repr=False)
    """0..51, suit-major: a dense index for inventories."""

    def __post_init__(self) -> None:
        if not (isinstance(self.rank, int) and 1 <= self.rank <= 13) or self.suit not in _SUIT_SET:
            raise CardError(f"{self.rank}{self.suit}", "rank 1..13 and suit one of S H D C")
        init = object.__setattr__
        init(self, "code", RANKS[self.rank - 1] + self.suit)
        init(self, "value", self.rank if self.rank < 10 else 0)
        init(self, "index", SUITS.index(self.suit) * 13 + self.rank - 1)

    @property
    def shoe_code(self) -> str:
        """The scanning-shoe code, e.g. ``A10`` for the ten of spades."""
        return f"{SUIT_TO_SHOE_LETTER[self.suit]}{self.rank:02d}"

    def __str__(self) -> str:
        return self.code


ALL_CARDS: Final[tuple[Card, ...]] = tuple(Card(r, s) for s in SUITS for r in range(1, 14))
"""The 52 cards of one deck, ordered by :attr:`Card.index`."""


def _build_lookup() -> dict[str, Card]:
    table: dict[str, Card] = {}
    for card in ALL_CARDS:
        rank_char = RANKS[card.rank - 1]
        table[rank_char + card.suit] = card
        table[card.shoe_code] = card
        if card.rank == 10:
            table["10" + card.suit] = card
    return table


_LOOKUP: Final = _build_lookup()


def parse_card(text: str) -> Card:
    """Parse a card in any accepted notation (case-insensitive); raise :class:`CardError`."""
    key = text.strip().upper()
    card = _LOOKUP.get(key)
    if card is not None:
        return card
    raise CardError(text, _why_not(key))


def _why_not(key: str) -> str:
    if not key:
        return "empty"
    if len(key) == 3 and key[0].isalpha() and key[1:].isdigit():
        if key[0] not in SHOE_SUIT_LETTERS:
            return f"unknown shoe suit letter {key[0]!r}, expected one of A H C D"
        return f"shoe rank {key[1:]} out of range 01..13"
    if len(key) in (2, 3):
        rank, suit = key[:-1], key[-1]
        if suit not in SUITS:
            return f"unknown suit {suit!r}, expected one of S H D C"
        return f"unknown rank {rank!r}, expected one of A 2-9 T/10 J Q K"
    return "expected a rank and a suit such as TS, 10s or A01"


def deck(decks: int = 1) -> list[Card]:
    """A fresh, unshuffled shoe of ``decks`` decks."""
    return [card for _ in range(decks) for card in ALL_CARDS]


def shuffled_shoe(decks: int, seed: int | None) -> list[Card]:
    """``decks`` fresh decks shuffled by ``random.Random(seed)``: the same seed, the same shoe."""
    cards = deck(decks)
    random.Random(seed).shuffle(cards)
    return cards
