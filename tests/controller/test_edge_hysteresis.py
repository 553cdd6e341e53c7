"""The ``advantage`` notice with hysteresis (issue 33), on the edge watch's own decisions.

A shoe is dealt card by card; after each card the watch decides on the exact odds of the
cards left (``rules/edge.live_odds``, as the worker computes them). A threshold is chosen
where the tie's player edge hovers: the raw edge crosses it back and forth several times.
"""

from __future__ import annotations

from itertools import pairwise

from baccarat.cards import RANKS, shuffled_shoe
from baccarat.controller.edge_watch import CardsOut, EdgeWatch
from baccarat.controller.engine.inputs import Advantage
from baccarat.rules.edge import live_odds
from baccarat.rules.profiles import load_profile

DECKS = 6
SEED = 3


def trajectory(stop: int = 40) -> list[tuple[CardsOut, float]]:
    """(cards out, the tie's player edge) after each card, until ``stop`` cards are left."""
    profile = load_profile("macau", decks=DECKS)
    left = [4 * DECKS] * len(RANKS)
    out = []
    cards = shuffled_shoe(DECKS, SEED)
    for n, card in enumerate(cards[: len(cards) - stop], start=1):
        left[card.rank - 1] -= 1
        task = CardsOut(1, n // 5, DECKS, tuple(left), len(cards) - n)
        out.append((task, -float(live_odds(profile, task.left).house_edge("tie"))))
    return out


def notices(
    path: list[tuple[CardsOut, float]], threshold: float, **hysteresis: float
) -> list[Advantage]:
    profile = load_profile("macau", decks=DECKS)
    crossings: list[Advantage] = []
    standing: set[str] = set()

    def cross(crossing: Advantage) -> None:
        crossings.append(crossing)
        (standing.add if crossing.on else standing.discard)(crossing.bet)

    watch = EdgeWatch(profile, {"tie": threshold}, standing=lambda: frozenset(standing),
                      publish=lambda _m: None, cross=cross, **hysteresis)  # type: ignore[arg-type]
    for task, _edge in path:
        watch._latest = task  # noqa: SLF001 - as note() leaves it: the count is current
        watch._finished(task, live_odds(profile, task.left))  # noqa: SLF001 - the decision
    return crossings


def hovering(path: list[tuple[CardsOut, float]], margin: float = 0.01) -> float:
    """A threshold the edge hovers at (the highest such).

    Once reached, the edge never falls below it by ``margin`` again, but it crosses it
    upward at least three times.
    """
    edges = [e for _t, e in path]
    best = None
    for candidate in sorted({round(e, 4) for e in edges}):
        ups = sum(1 for a, b in pairwise(edges) if a < candidate <= b)
        first = next((i for i, e in enumerate(edges) if e >= candidate), None)
        if first is None or ups < 3:
            continue
        if min(edges[first:]) >= candidate - margin:
            best = candidate
    assert best is not None, "no threshold the edge hovers at in this shoe"
    return best


def test_an_edge_hovering_at_the_threshold_raises_one_notice_not_one_per_crossing() -> None:
    path = trajectory()
    threshold = hovering(path)
    raw = notices(path, threshold)  # no hysteresis: as before
    assert sum(c.on for c in raw) >= 3
    kept = notices(path, threshold, margin=0.01, min_cards=6)
    assert sum(c.on for c in kept) == 1
    ons = [c for c in kept if c.on]
    offs = [c for c in kept if not c.on]
    for off in offs:  # it went back only well below, and not before six cards
        assert off.player_edge < threshold - 0.01
        raised = max(c.cards_out for c in ons if c.cards_out < off.cards_out)
        assert off.cards_out - raised >= 6


def test_no_notice_once_no_further_round_can_be_dealt() -> None:
    path = trajectory()
    threshold = hovering(path)
    last = [(CardsOut(t.shoe, t.round, t.decks, t.left, t.cards_left, False), e)
            for t, e in path]
    assert [c for c in notices(last, threshold) if c.on] == []
    # a notice standing when the last round begins goes back at once
    mixed = path[: len(path) // 2] + last[len(path) // 2:]
    crossings = notices(mixed, -0.5)  # far below: raised at the first card
    assert [c.on for c in crossings] == [True, False]
    assert crossings[1].cards_out == mixed[len(path) // 2][0].cards_out


def test_the_default_threshold_is_a_positive_edge_with_hysteresis() -> None:
    from baccarat.controller.config import EdgeConfig

    config = EdgeConfig()
    assert config.thresholds() == {"tie": 0.02, "player_pair": 0.02, "banker_pair": 0.02}
    assert (config.clear_margin, config.clear_after_cards) == (0.01, 6)
