"""A realistic message sequence for the board tests: a shoe in which the pit steps in.

What the engine publishes for two shoes (Macau profile, implicit opening): the first with
an extra burn ordered by the pit (``burn 2``), a demo round, an unreadable card accepted as
a burn, a round voided by the pit, the cut card and the shoe's last round; then a new shoe,
its burn and a few rounds. Each of these changes the shoe's counts at its own moment, which is
what a board's figures must follow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from baccarat.cards import shuffled_shoe
from baccarat.controller.engine.replay import replay_lines
from baccarat.messages.bodies import Message, RoundMessage, ShoeMessage
from baccarat.rules.profiles import load_profile

DECKS: Final = 8
SEED: Final = 11
CUT_FROM_END: Final = 14
SECOND_SHOE_ROUNDS: Final = 3

# Rounds finished (result or void) -> what the pit does then.
BETWEEN_ROUNDS: Final = {5: ["burn 2"], 8: ["demo on"], 9: ["demo off"]}
# (rounds finished, cards dealt in the round in progress) -> what happens then.
IN_ROUND: Final = {
    (12, 2): ["unreadable", "accept_as_burn"],  # the shoe misreads a card; the pit burns it
    (16, 3): ["void dealer dropped a card"],  # the pit voids the round
}


def realistic_messages() -> list[Message]:
    """Every message the engine publishes for the two shoes, in order."""
    table = _Table()

    def refused(line: int, reason: str) -> None:
        raise AssertionError(f"the engine refused input {line}: {reason}")

    for message in replay_lines(table.inputs(), load_profile("macau"), on_error=refused):
        table.published.append(message)
    return table.published


class _Table:
    """Chooses the inputs as the play goes, from what the engine published so far.

    The replay asks for the next input only after it has handed over every message of the
    previous one, so ``published`` is up to date whenever :meth:`inputs` resumes.
    """

    def __init__(self) -> None:
        self.published: list[Message] = []
        self.read = 0
        self.shoe = 0
        self.finished = 0
        """Rounds of the current shoe that ended (with a result or void)."""
        self.between_rounds = True
        self.closed = False

    def catch_up(self) -> None:
        """Read what the engine published since the last call."""
        for message in self.published[self.read :]:
            if isinstance(message, ShoeMessage):
                if message.shoe != self.shoe:
                    self.shoe, self.finished = message.shoe, 0
                self.closed = message.phase == "closed"
            elif isinstance(message, RoundMessage):
                self.between_rounds = message.status != "open"
                self.finished += message.status != "open"
        self.read = len(self.published)

    def inputs(self) -> Iterator[str]:
        """The first shoe with the pit's interventions, then the start of the next."""
        yield f"shoe {DECKS}"
        cards = shuffled_shoe(DECKS, SEED)
        done: set[tuple[int, int]] = set()
        in_round = 0
        for index, card in enumerate(cards):
            self.catch_up()
            key = (self.finished, in_round)
            if self.between_rounds:
                in_round = 0
                key = (self.finished, -1)
                extra = BETWEEN_ROUNDS.get(key[0], [])
            else:
                extra = IN_ROUND.get(key, [])
            if key not in done:
                done.add(key)
                yield from extra
            if len(cards) - index == CUT_FROM_END:
                yield "cut"
            yield card.code
            in_round += 1
            self.catch_up()
            if self.closed:
                break
        yield f"shoe {DECKS}"
        for card in shuffled_shoe(DECKS, SEED + 1):
            self.catch_up()
            if self.finished >= SECOND_SHOE_ROUNDS:
                break
            yield card.code
