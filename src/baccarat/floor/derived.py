"""Derived views made again from a table's stored facts, byte for byte.

A derived view is a body the engine computes from what it published before: ``roads`` is
the scoreboard of the shoe's results. The recorder keeps the facts whole, and of a
derived view only its ``seq``, topic and ``ts`` (and the table's latest one whole:
:mod:`baccarat.floor.store`). This module folds the facts in ``seq`` order, as the engine
did, and at a derived view's ``seq`` gives the body the table published there.

``roads``: the roads are fed each result that is not a demo round's, in order; a void
takes its round off them; a shoe message with a new shoe number clears them (the engine
clears them at a new shoe and publishes them right after its shoe message), and so does a
new page of a continuous shuffler (the built-in profile's ``roads_page``, found by the
name the shoe message carries). The roads body is the engine's own
(:class:`baccarat.controller.engine.roads.Roads`, serialized by its message model), with
the shoe number and ``cards_left`` of the shoe message published just before it, and the
``seq`` and ``ts`` the store kept. A view can be made again only from facts that go back
to the start of its shoe: a database that began in the middle of a shoe cannot rebuild
that shoe's roads (``baccarat history --check`` compares the rebuilt latest view of each
table with the one kept whole, and says so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, Protocol

from baccarat.controller.engine.roads import Roads
from baccarat.floor.store import DerivedSeq
from baccarat.rules.profiles import PROFILES, ProfileError, load_profile


class View(Protocol):
    """A derived view's state: the facts folded in, the body at a ``seq`` given out."""

    def fact(self, body: Mapping[str, Any]) -> None:
        """Fold in the next stored fact (by ``seq``)."""

    def body(self, seq: int, ts: float | None) -> str:
        """The view's body as published at ``seq``, with that ``ts``."""


class RoadsView:
    """The roads of the shoe in play, as the engine keeps them."""

    def __init__(self) -> None:
        self.roads = Roads()
        self.shoe = 0
        self.cards_left = 0
        self.page = 0

    def fact(self, body: Mapping[str, Any]) -> None:
        """A shoe message (a new shoe clears), a result (added), a void (taken off)."""
        kind = body.get("type")
        if kind == "shoe":
            if body["shoe"] != self.shoe:
                self.roads.clear()
                self.shoe = body["shoe"]
                self.page = roads_page(str(body.get("profile")))
            self.cards_left = body["cards_left"]
        elif kind == "result" and not body.get("demo"):
            if self.page and len(self.roads) >= self.page:
                self.roads.clear()  # a new page of roads (continuous shufflers)
            player, banker = body["player"], body["banker"]
            self.roads.add(
                body["round"], body["winner"], player["pair"], banker["pair"],
                player["natural"] or banker["natural"],
            )
        elif kind == "void" and not body.get("demo"):
            self.roads.remove(body["round"])

    def body(self, seq: int, ts: float | None) -> str:
        """The roads body published at ``seq``."""
        message = self.roads.message(seq=seq, shoe=self.shoe, cards_left=self.cards_left, ts=ts)
        return message.to_json()


VIEWS: Final[Mapping[str, Callable[[], View]]] = {"roads": RoadsView}
"""Every derived topic and how its view is made again; :data:`DERIVED_TOPICS` must be
these (``tests/floor/test_derived.py``)."""


def roads_page(profile: str) -> int:
    """Results on one page of roads for a built-in profile (0: the whole shoe)."""
    if profile not in PROFILES:
        return 0
    try:
        return load_profile(profile).roads_page
    except ProfileError:
        return 0


def rebuilt(
    facts: Iterable[Mapping[str, Any]], derived: Iterable[DerivedSeq], topic: str
) -> Iterator[tuple[int, str]]:
    """(seq, body) of every ``topic`` view in ``derived``, made again from ``facts``.

    Both are one table's, by ``seq``.
    """
    view = VIEWS[topic]()
    pending = iter(facts)
    upcoming = next(pending, None)
    for place in derived:
        if place.topic != topic:
            continue
        while upcoming is not None and upcoming["seq"] < place.seq:
            view.fact(upcoming)
            upcoming = next(pending, None)
        yield place.seq, view.body(place.seq, place.ts)


def rebuild_at(
    facts: Iterable[Mapping[str, Any]], derived: Iterable[DerivedSeq], topic: str, at_seq: int
) -> tuple[int, str] | None:
    """The ``topic`` view current at ``at_seq`` (the newest at or before it), or None."""
    places = [d for d in derived if d.topic == topic and d.seq <= at_seq]
    if not places:
        return None
    last = places[-1]
    return next(rebuilt((f for f in facts if f["seq"] < last.seq), [last], topic), None)
