"""A table left mid-round with open alarms: what a board that connects then must show."""

from __future__ import annotations

from typing import Final

from baccarat.controller.engine.replay import replay_lines
from baccarat.messages.bodies import Message
from baccarat.messages.catalog import RETAINED_TOPICS as RETAINED
from baccarat.rules.profiles import load_profile

MID_ROUND: Final = [
    "shoe", "open", "8D", "6C", "KS", "KH",  # round 1: a natural 8, player wins
    "device link_down cable pulled", "open", "7S", "6H", "7S",
    "device bad_data 3 byte(s) rejected: ff00ff", "9S",
]  # fmt: skip
"""1 deck, explicit opening: the link goes down, round 2 is dealt up to P2 with a foreign
card (a second 7S) held aside mid-round, and a one-off bad_data notice comes in between."""
HAND: Final = (("P1", "7S"), ("B1", "6H"), ("P2", "9S"))
"""Round 2's cards so far; Player 6, Banker 6, B2 due."""


def played(lines: list[str]) -> list[Message]:
    """Every message of these inputs on the table of :data:`MID_ROUND` (none refused)."""
    profile = load_profile("macau", burn="none", open_mode="explicit", decks=1)
    errors: list[str] = []
    messages = list(replay_lines(lines, profile, on_error=lambda n, e: errors.append(e)))
    assert errors == []
    return messages


def retained(messages: list[Message]) -> list[Message]:
    """What the broker holds for a board that subscribes now: each retained topic's last."""
    last = {m.topic: m for m in messages if m.topic in RETAINED}
    return list(last.values())
