"""The rules engine: a pure, synchronous state machine (docs/design.md, invariant 1).

``Engine.feed(input)`` takes one input (a card out of the shoe, a dealer's button, an
operator's command) and returns an :class:`Outcome`: the messages to publish, in order,
or a refusal that leaves the state unchanged. No I/O, no clock, no randomness: the same
inputs give the same messages, byte for byte.

The rounds
----------
A round opens on ``open`` or, in implicit mode, on the first card after a closed round.
Cards go P1, B1, P2, B2, then P3 and B3 as the tableau demands (Art. 7, 9). A round is
*complete* when the tableau says no card is due, and *closed* when it is complete, carries
no uncorrected alarm and its result has been published (on squeeze tables, after
``reveal``). A round that is not closed blocks the next one.

Misdeals (Art. 10)
------------------
A deviation raises an alarm at the input that proves it. A card the rules cannot place
(an extra card, a foreign or unreadable card, a card before ``open``) is *held aside* by
its alarm; it is in nobody's hand. ``accept_as_burn`` sends the oldest held card to the
discard and play goes on; ``void`` ends the round with no result. A round with an
uncorrected alarm publishes no result.
"""

from __future__ import annotations

from baccarat.controller.engine.core import Outcome, RefusedError
from baccarat.controller.engine.corrections import CorrectionsRoom
from baccarat.controller.engine.dealing import DealingRoom
from baccarat.controller.engine.handlers import HANDLERS
from baccarat.controller.engine.rounds import RoundsRoom
from baccarat.controller.engine.shoe_room import ShoeRoom

__all__ = ["HANDLERS", "Engine", "Outcome", "RefusedError"]


class Engine(DealingRoom, RoundsRoom, CorrectionsRoom, ShoeRoom):
    """The pure state machine of one table. Feed it inputs; publish what it returns.

    Its rooms (``dealing``, ``rounds``, ``corrections``, ``shoe_room``) register their
    handlers in ``handlers.py`` (:data:`HANDLERS`, complete once this module is imported);
    the state and what they share is ``core.EngineCore``.
    """
