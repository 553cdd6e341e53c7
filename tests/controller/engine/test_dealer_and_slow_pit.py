"""What the board shows is what happened on the table, with a dealer who errs and a slow pit.

The virtual dealer (``sim_hardware.dealer``, the one the virtual shoe plays) deals a whole
seeded shoe by a profile, with mistakes of every kind at a high rate; its events become the
engine's inputs through the daemon's own translation (``device_inputs.device_input``), in the
profile's default open mode for a framed shoe (``Config.rule_profile``). A pit settles each
alarm as a pit boss who has looked at the table would (``support.table_truth``), through the
real command parser, but only some events after it was raised, so that the dealer's cards
and buttons keep coming while alarms are open. Time is counted in the dealer's events.

Every result published and not voided must be a round the dealer really dealt; with a
dealer who pauses while an alarm is open (as the virtual shoe does when the daemon tells
it), no round he dealt without a mistake may be lost to the pit's delay. The same end to
end, through the real daemon and the virtual shoe on a pty: ``tests/drivers/
test_board_shows_the_table.py``.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from baccarat.controller.commands import parse_command
from baccarat.controller.config import Config
from baccarat.controller.device_inputs import device_input
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import Input
from baccarat.drivers.events import DealerButton, DeviceEvent
from baccarat.sim_hardware.dealer import Dealer, Step
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.table_truth import Body, check, correction, not_burned

DECKS = 2
OPEN = DealerButton("open")


def table_profile(name: str) -> Any:
    """The profile as a daemon with a framed shoe runs it: open_mode resolved by ``auto``."""
    config = Config(
        table="T1", profile=name, allow_test_decks=True, rules={"decks": DECKS},
        device={"kind": "serial", "path": "/dev/null", "protocol": "framed"},
    )
    return config.rule_profile()


class Run:
    """One shoe: the engine, the dealer's steps, the pit's queue, what was published."""

    def __init__(self, profile: str, seed: int, *, pausing: bool, rate: float = 0.3) -> None:
        self.profile = table_profile(profile)
        assert self.profile.open_mode == "explicit"  # a framed shoe sends buttons
        self.engine = Engine(self.profile, roads=False)
        self.dealer = Dealer.for_profile(self.profile, seed=seed, mistake_rate=rate)
        self.pausing = pausing
        self.rng = random.Random(seed)
        self.steps: list[Step] = []
        self.bodies: list[Body] = []
        self.open: dict[int, Body] = {}
        self.rounds: dict[int, Body] = {}
        self.due: list[tuple[int, int]] = []
        self.looks: dict[int, int] = {}
        self.tick = 0

    def feed(self, inp: Input) -> None:
        for message in self.engine.feed(inp).messages:
            body = json.loads(message.to_json())
            self.bodies.append(body)
            if body["type"] == "alarms":
                self.open = {a["id"]: a for a in body["alarms"]}
            elif body["type"] == "alarm" and body["correctable"]:
                self.due.append((self.tick + self.rng.randint(2, 8), body["id"]))
            elif body["type"] == "round":
                self.rounds[body["round"]] = body

    def blocked(self, before: DeviceEvent = OPEN) -> bool:
        """The dealer stops before ``before``: an alarm waits for a person.

        As the virtual shoe's dealer does (``virtual_shoe.dealer_ready``): a burn left to
        do is his own, and a round dealt without its burn he deals to its end first.
        """
        return bool(VirtualShoe.stopping(
            {a["id"]: a["kind"] for a in self.open.values() if a["correctable"]}, before
        ))

    def play(self) -> None:
        events = self.dealer.steps()
        idle = 0
        step: Step | None = None
        while True:
            self.tick += 1
            self.pit()
            step = step or next(events, None)
            if step is None:
                break
            if self.pausing and self.blocked(step.event):
                idle += 1
                assert idle < 200, f"the table stalled with {list(self.open.values())}"
                continue
            idle = 0
            self.steps.append(step)
            inp = device_input(step.event, float(self.tick))
            if inp is not None:
                self.feed(inp)
            step = None
        while self.due:
            self.tick += 1
            self.pit()

    def pit(self) -> None:
        """Settle each alarm whose time has come; look again at one still open."""
        for item in [d for d in self.due if d[0] <= self.tick]:
            self.due.remove(item)
            alarm = self.open.get(item[1])
            if alarm is None:
                continue  # settled meanwhile
            commands = correction(alarm, self.rounds, not_burned(self.steps, self.bodies))
            for name, body in commands:
                inp, _ = parse_command(name, body, float(self.tick), test_decks=True)
                self.feed(dataclasses.replace(inp, origin="pit/ana"))
            self.looks[item[1]] = self.looks.get(item[1], 0) + 1
            if item[1] in self.open and self.looks[item[1]] < 10:  # nothing yet: look again
                self.due.append((self.tick + 3, item[1]))


PROFILES = st.sampled_from(["macau", "house6", "csm"])


@settings(max_examples=150, deadline=None)
@given(profile=PROFILES, seed=st.integers(0, 2**32 - 1))
@example(profile="house6", seed=13888)  # a burn press between rounds shifted a later round
def test_a_dealer_who_goes_on_through_alarms_never_gets_a_wrong_result_published(
    profile: str, seed: int
) -> None:
    run = Run(profile, seed, pausing=False)
    run.play()
    check(run.bodies, run.steps, run.dealer.mistakes_made, pausing=False,
          burns_evidenced=run.profile.burn_press == "required")


@settings(max_examples=150, deadline=None)
@given(profile=PROFILES, seed=st.integers(0, 2**32 - 1))
def test_a_dealer_who_pauses_on_alarms_loses_no_round_to_the_pits_delay(
    profile: str, seed: int
) -> None:
    run = Run(profile, seed, pausing=True)
    run.play()
    check(run.bodies, run.steps, run.dealer.mistakes_made, pausing=True,
          burns_evidenced=run.profile.burn_press == "required")
    assert not run.blocked()
