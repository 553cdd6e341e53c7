"""The recorder's fold never keeps a place it cannot make again, whatever the messages.

The engine deals whole shoes as a daemon with a framed shoe would: the virtual dealer with
mistakes of every kind and a pit that settles each alarm a few events late (the engine-level
property test's ``Run``), in every built-in profile and on a squeeze table. Its messages go
through :class:`baccarat.floor.derived.Arrivals` as the recorder's would, and the history's
:func:`~baccarat.floor.derived.rebuilt` makes every derived view again from what would be
stored. Every body it gives must be the engine's, byte for byte, also when the fold begins
in the middle of a shoe or a message is lost on the way.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from baccarat.controller.engine.engine import Engine, Outcome
from baccarat.controller.engine.inputs import Input
from baccarat.floor.derived import VIEWS, Arrivals, rebuilt
from baccarat.floor.store import DerivedSeq, Received
from baccarat.sim_hardware.dealer import Dealer
from controller.engine.test_dealer_and_slow_pit import Run


class TapedEngine(Engine):
    """The engine, keeping every message it gives as the recorder would receive it."""

    def __init__(self, profile: Any) -> None:
        super().__init__(profile)
        self.tape: list[Received] = []

    def feed(self, inp: Input) -> Outcome:
        outcome = super().feed(inp)
        for message in outcome.messages:
            text = message.to_json()
            topic = f"baccarat/T1/{type(message).topic}"
            self.tape.append(Received("T1", topic, json.loads(text), text, 0.0))
        return outcome


def _messages(profile: str, seed: int, *, pausing: bool = True,
              squeeze: bool = False) -> list[Received]:
    """A shoe as its table published it: every message, with the roads."""
    run = Run(profile, seed, pausing=pausing)
    if squeeze:  # the dealer presses reveal when the cards are out
        run.profile = run.profile.model_copy(update={"reveal": "on_reveal"})
        run.dealer = Dealer.for_profile(run.profile, seed=seed, mistake_rate=0.3)
    run.engine = engine = TapedEngine(run.profile)
    run.play()
    return engine.tape


def _stored(messages: list[Received]) -> tuple[list[tuple[dict[str, object], str]],
                                                list[DerivedSeq], Arrivals]:
    arrivals = Arrivals()
    marked = arrivals.mark(messages)
    stored = [(m.body, m.payload) for m in marked if not m.place]
    places = [DerivedSeq(m.seq or 0, str(m.body["type"]), None if m.body.get("ts") is None
                         else float(m.body["ts"]))  # type: ignore[arg-type]
              for m in marked if m.place]
    return stored, places, arrivals


def _check(messages: list[Received], kept: list[Received]) -> Arrivals:
    """Every derived view the history gives from ``kept`` (the fold's view) is the truth."""
    truth = {m.seq: m.payload for m in messages}
    stored, places, arrivals = _stored(kept)
    for topic in VIEWS:
        for seq, body in rebuilt(stored, places, topic):
            if body is not None:
                assert body == truth[seq], f"{topic} at seq {seq} made wrong"
            else:
                assert seq not in {p.seq for p in places}, f"a place at {seq} not made"
    return arrivals


@pytest.mark.parametrize("profile", ["macau", "house6", "csm"])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pausing", [True, False])
def test_every_place_is_made_again_byte_for_byte(profile: str, seed: int, pausing: bool) -> None:
    messages = _messages(profile, seed, pausing=pausing)
    kinds = {m.body["type"] for m in messages}
    assert {"alarm", "alarm_cleared", "result", "recall", "round", "roads"} <= kinds
    arrivals = _check(messages, messages)
    assert arrivals.places > 4 * arrivals.wholes, (arrivals.places, arrivals.wholes)


def test_a_squeeze_table_whose_round_shows_nothing_is_never_made_wrong() -> None:
    hidden = 0  # round bodies of an open round with cards withheld: not in any fact
    for seed in range(6):
        messages = _messages("macau", seed, squeeze=True)
        hidden += sum(1 for m in messages if m.body["type"] == "round"
                      and m.body["next"] is None and m.body["status"] == "open")
        arrivals = _check(messages, messages)
        assert arrivals.places > arrivals.wholes
    assert hidden > 0


def test_a_shoe_without_mistakes_keeps_every_derived_view_as_its_place() -> None:
    run = Run("macau", 3, pausing=True, rate=0.0)
    run.engine = engine = TapedEngine(run.profile)
    run.play()
    messages = engine.tape
    arrivals = _check(messages, messages)
    derived = sum(1 for m in messages if m.body["type"] in VIEWS)
    assert arrivals.wholes == 0
    assert arrivals.places == derived > 100


@pytest.mark.parametrize("seed", range(4))
def test_a_fold_begun_mid_shoe_or_missing_a_message_is_never_wrong(seed: int) -> None:
    messages = _messages("macau", 100 + seed, pausing=False)
    half = len(messages) // 3
    arrivals = _check(messages, messages[half:])  # a recorder that began mid-shoe
    assert arrivals.wholes > 0
    lost = next(i for i, m in enumerate(messages[half:], half) if m.body["type"] == "card")
    arrivals = _check(messages, messages[:lost] + messages[lost + 1:])  # a card never came
    assert arrivals.places > 0


def test_a_message_the_database_refused_makes_the_views_after_it_whole() -> None:
    messages = _messages("macau", 7)
    arrivals = Arrivals()
    marked = arrivals.mark(messages)
    card = next(i for i, m in enumerate(marked) if m.body["type"] == "card" and i > 50)
    arrivals.lost(marked[card])
    rechecked = [arrivals.recheck(m) for m in marked]
    assert not any(m.place for m in rechecked[card:])  # a place after it: kept whole
    assert rechecked[:card] == marked[:card]
