"""The live edge: the next round's exact odds after every card, computed off the event loop.

After every input the table notes what the engine holds out of its shoe
(:func:`cards_out`); when that changed, the watch computes :func:`live_odds` for it in a
worker thread and hands the result back to the loop, which publishes it retained on
``edge`` and, for a bet whose player edge crossed its threshold, journals an
:class:`~baccarat.controller.engine.inputs.Advantage` (the engine raises or clears the
``advantage`` notice).

A computation starts once the cards pause (:data:`SETTLE`), one at a time, and at most
one waits: a newer count replaces a waiting one that has not started, so no backlog forms
however fast cards come, and nothing a card does waits for the worker. A result computed
for a count that is no longer the engine's (a card came meanwhile) is dropped, neither
published nor journaled: the newer count is already waiting and decides instead, a few
milliseconds later. A crossing is always decided on the cards out now, so the engine's
record of it never has to say "stale" (and the engine refuses one that would be:
inputs.Advantage).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Protocol

from baccarat.cards import RANKS
from baccarat.controller.config import Config
from baccarat.controller.engine.engine import Engine, Outcome
from baccarat.controller.engine.inputs import Advantage, Input
from baccarat.controller.outbox import Outbox, OutMessage
from baccarat.messages.bodies import BetEdge, EdgeMessage
from baccarat.rules.edge import BETS, Bet, EdgeError, LiveOdds, ShoeTooShortError, live_odds
from baccarat.rules.profiles import Profile
from baccarat.rules.side_bets import SideBet


class WatchedTable(Protocol):
    """What the watch uses of the table (:class:`baccarat.controller.table.Table`)."""

    config: Config
    profile: Profile
    outbox: Outbox
    engine: Engine

    def handle_own(self, inp: Input) -> Outcome | None:
        """Journal the input, apply it, queue what it produced; None on a journal fault."""

    def now(self) -> float:
        """The time an input arrives."""

log = logging.getLogger("baccarat.edge")

EDGE_DIGITS: Final = 6
"""Decimals of a player edge as an ``advantage`` input records it (a millionth of a stake)."""


@dataclass(frozen=True, slots=True)
class CardsOut:
    """What the engine holds out of its shoe: what an edge is computed for."""

    shoe: int
    round: int
    """The shoe's last round begun (0 before the first)."""
    decks: int
    left: tuple[int, ...]
    """Cards of each rank left, ace .. king, as far as known (:meth:`Engine.left_by_rank`)."""
    cards_left: int
    """Cards left as the engine counts them, unreadable ones out too."""
    more_rounds: bool = True
    """Whether a further round may still be dealt: not once the cut card's last round has
    begun, nor with fewer cards left than a round and its burn take."""
    ts: float | None = field(default=None, compare=False)
    """The time of the input after which it was noted."""

    @property
    def cards_out(self) -> int:
        """Cards of the shoe known to be out."""
        return self.decks * 4 * len(RANKS) - sum(self.left)


def cards_out(engine: Engine, ts: float | None) -> CardsOut | None:
    """The engine's shoe as it stands; ``None`` without one, or once it has closed."""
    shoe, left = engine.shoe, engine.left_by_rank()
    if shoe is None or left is None or shoe.phase == "closed":
        return None
    last = shoe.last_round_no
    more = (last is None or shoe.round_no < last) and (
        shoe.cards_left >= ROUND_MAX_CARDS + engine.profile.burn_per_round
    )
    return CardsOut(shoe.number, shoe.round_no, shoe.decks, left, shoe.cards_left, more, ts)


ROUND_MAX_CARDS: Final = 6
"""A round takes six cards at most: with fewer left (and its burn), none may be dealt."""


SETTLE: Final = 0.02
"""Seconds without a new card before the edge is computed. The worker holds the
interpreter while it computes (about 2 ms): started at once, it would delay the card that
called for it on its way to the broker, and every card of a burst; after the pause, the
card is out first and a burst is priced once, at its end (docs/benchmarks.md)."""
SETTLE_MAX: Final = 1.0
"""Seconds a stream of cards with no pause may hold the computation back, at most."""

class EdgeWatch:
    """The worker that keeps the live edge, and the crossings it finds.

    ``standing`` says which bets' ``advantage`` notices stand now (the engine's);
    ``publish`` takes each edge body; ``cross`` each crossing to journal and apply.
    ``thresholds``: the player edge at or above which each watched bet has the advantage.

    With hysteresis: a notice is raised when the bet's player edge reaches its threshold,
    and goes back only once the edge is below the threshold by ``margin`` and at least
    ``min_cards`` cards have come out since it was raised, so that an edge hovering at the
    threshold raises one notice, not one per card. No notice is raised once no further
    round may be dealt (:attr:`CardsOut.more_rounds`), and one standing then goes back:
    an edge on a round nobody can bet on is no one's concern.
    """

    def __init__(
        self,
        profile: Profile,
        thresholds: dict[Bet, float],
        *,
        standing: Callable[[], frozenset[Bet]],
        publish: Callable[[EdgeMessage], None],
        cross: Callable[[Advantage], None],
        margin: float = 0.0,
        min_cards: int = 0,
    ) -> None:
        self.profile = profile
        self.thresholds = dict(thresholds)
        self.margin = _exact(margin)
        self.min_cards = min_cards
        self._raised_at: dict[Bet, tuple[int, int]] = {}
        """Each notice this watch raised: the shoe and its cards out when it did."""
        self._standing, self._publish, self._cross = standing, publish, cross
        self._latest: CardsOut | None = None
        self._waiting: CardsOut | None = None
        self._wake = asyncio.Event()
        self.computed = 0
        """Edges computed."""
        self.dropped = 0
        """Results dropped because a card came while they were computed."""

    def note(self, engine: Engine, ts: float | None) -> None:
        """After an input (at ``ts``): a change of the cards out is computed next.

        It replaces a count still waiting, never one being computed.
        """
        now = cards_out(engine, ts)
        if now is None or now == self._latest:
            self._latest = now
            return
        self._latest = self._waiting = now
        self._wake.set()

    async def run(self) -> None:
        """Compute what is noted, one at a time, until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            latest = loop.time() + SETTLE_MAX
            while True:  # once the cards pause (:data:`SETTLE`), or SETTLE_MAX at most
                await asyncio.sleep(SETTLE)
                if not self._wake.is_set() or loop.time() >= latest:
                    break
                self._wake.clear()
            task, self._waiting = self._waiting, None
            if task is None:
                continue
            odds = await asyncio.to_thread(self._odds, task)
            self.computed += 1
            if odds is not None:
                self._finished(task, odds)

    def _odds(self, task: CardsOut) -> LiveOdds | None:
        """In the worker thread: the odds, or ``None`` when the shoe has none."""
        profile = self.profile
        if task.decks != profile.decks:
            profile = profile.model_copy(update={"decks": task.decks})
        try:
            return live_odds(profile, task.left)
        except ShoeTooShortError:
            return None  # fewer than six cards: the next round may not be dealt
        except EdgeError as exc:  # counts the engine should never hold: say so, go on
            log.error("edge: shoe %d: %s", task.shoe, exc)  # noqa: TRY400 - no bug: no trace
            return None

    def _finished(self, task: CardsOut, odds: LiveOdds) -> None:
        """On the loop: publish the edge and decide crossings, if it is still current."""
        if task != self._latest:
            self.dropped += 1  # a newer count is waiting, or the shoe closed
            return
        player_edge = {bet: -odds.house_edge(bet) for bet in BETS}
        over = [bet for bet, t in self.thresholds.items() if player_edge[bet] >= _exact(t)]
        self._publish(edge_message(task, odds, over, self.profile.side_bets))
        standing = self._standing()
        for bet, threshold in self.thresholds.items():
            if bet in standing:
                on = self._stands(bet, task, player_edge[bet] - _exact(threshold))
            else:
                on = bet in over and task.more_rounds
            if on != (bet in standing):
                if on:
                    self._raised_at[bet] = (task.shoe, task.cards_out)
                else:
                    self._raised_at.pop(bet, None)
                self._cross(Advantage(
                    bet=bet, on=on,
                    player_edge=round(float(player_edge[bet]), EDGE_DIGITS),
                    threshold=threshold, shoe=task.shoe, round=task.round,
                    cards_out=task.cards_out, ts=task.ts,
                ))

    def _stands(self, bet: Bet, task: CardsOut, above: Fraction) -> bool:
        """Whether a standing notice stays: the hysteresis (its edge is ``above`` the mark).

        It goes back once no further round may be dealt; else only below the threshold by
        the margin, and after ``min_cards`` cards since it was raised (a notice this watch
        did not raise, e.g. one recovered at start, or of another shoe, has waited enough).
        """
        if not task.more_rounds:
            return False
        if above > -self.margin:
            return True
        shoe, cards = self._raised_at.get(bet, (task.shoe, task.cards_out - self.min_cards))
        return shoe == task.shoe and task.cards_out - cards < self.min_cards


def edge_message(
    task: CardsOut, odds: LiveOdds, over: list[Bet], side: tuple[SideBet, ...] = ()
) -> EdgeMessage:
    """The ``edge`` body of these odds, with the side bets ``side`` (the profile's)."""
    def bet(name: Bet | SideBet) -> BetEdge:
        return BetEdge(chance=float(odds.chance(name)), edge=float(odds.house_edge(name)))

    return EdgeMessage(
        ts=task.ts, shoe=task.shoe, round=task.round, cards_out=task.cards_out,
        cards_left=task.cards_left, unread=sum(task.left) - task.cards_left, over=over,
        banker=bet("banker"), player=bet("player"), tie=bet("tie"),
        player_pair=bet("player_pair"), banker_pair=bet("banker_pair"),
        dragon7=bet("dragon7") if "dragon7" in side else None,
        panda8=bet("panda8") if "panda8" in side else None,
    )


def _exact(figure: float) -> Fraction:
    """A threshold as the decimal it was written as (0.02 is 1/50)."""
    return Fraction(str(figure))


def watch_edge(table: WatchedTable) -> EdgeWatch | None:
    """The table's edge watch (``None`` when ``[edge] enabled`` is false).

    It publishes on the table's ``edge`` topic, retained, through the outbox (behind the
    messages of the card it was computed after), and hands each crossing to
    :meth:`Table.handle` with the time it was decided, so that the journal records it
    before the engine raises or clears the notice.
    """
    config = table.config
    if not config.edge.enabled:
        return None

    def publish(message: EdgeMessage) -> None:
        table.outbox.put(OutMessage(
            config.topic(message.topic), message.to_bytes(), retain=message.retained
        ))

    def cross(crossing: Advantage) -> None:
        outcome = table.handle_own(dataclasses.replace(crossing, ts=table.now()))
        # refused is a bug: the watch decides on the engine's own count
        if outcome is not None and outcome.refused is not None:
            log.error("edge: %s refused: %s", crossing.to_text(), outcome.refused)

    return EdgeWatch(
        table.profile, config.edge.thresholds(),
        standing=lambda: table.engine.advantages(),  # noqa: PLW0108 - recovery replaces it
        publish=publish, cross=cross,
        margin=config.edge.clear_margin, min_cards=config.edge.clear_after_cards,
    )
