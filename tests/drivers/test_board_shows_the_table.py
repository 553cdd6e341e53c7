"""End to end: what the board shows is what happened on the table, with a slow pit.

The real daemon (``baccarat run``) reads a framed virtual shoe on a pty and publishes to a
real mosquitto, in each profile's default open mode (``auto``: explicit, as the shoe sends
the dealer's buttons). The dealer deals a seeded 2-deck shoe with mistakes of every kind,
an event every PACE seconds; a pit subscribed like a console settles each alarm only
PIT_DELAY seconds after it shows (longer than the dealer's pace, so that cards arrive while
alarms are open), with the corrections of ``support.table_truth``, by the alarm's id and
in its own operator's name. Then every result published and not voided is compared with the
dealer's own record of each round's cards and positions.

Twice per profile: a dealer who goes on whatever the table says (``dealer_ignores_alarms``,
today's fault tests), and one who pauses while an alarm the daemon told the shoe is open,
who must lose no round to the pit's delay. ``BACCARAT_E2E_SEEDS=N`` runs N seeds of each.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from baccarat.controller.config import Config
from baccarat.drivers.events import ShoeRemoved
from baccarat.sim_hardware.dealer import Dealer, Step
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, replay_journal
from support.mosquitto import Mosquitto
from support.slow_pit import a_slow_pit, dealt
from support.table_truth import check

PACE = 0.04
"""Seconds between the dealer's events: time for an alarm's frame to reach the shoe."""
PIT_DELAY = 0.5
"""Seconds the pit takes to look at an alarm: several of the dealer's events."""
DECKS = 2
RATE = 0.3
SEEDS = int(os.environ.get("BACCARAT_E2E_SEEDS", "1"))
CASES = [
    (profile, pausing, seed)
    for profile in ("macau", "house6", "csm")
    for pausing in (False, True)
    for seed in range(SEEDS)
]


def _profile(name: str, shoe_path: str) -> Any:
    config = Config(
        table="T1", profile=name, allow_test_decks=True, rules={"decks": DECKS},
        device={"kind": "serial", "path": shoe_path, "protocol": "framed"},
    )
    return config.rule_profile()


async def deal(shoe: VirtualShoe, dealer: Dealer, played: list[Step]) -> None:
    """The dealer's events one by one, PACE apart; a pausing dealer waits before each."""
    for step in dealer.steps():
        await shoe.dealer_ready(step.event)
        if shoe.send(step.event):
            played.append(step)
        await asyncio.sleep(PACE)
        if isinstance(step.event, ShoeRemoved):
            break
    await shoe.drain()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("profile", "pausing", "seed"), CASES)
async def test_every_published_result_is_a_round_the_dealer_dealt(
    tmp_path: Path, mosquitto: Mosquitto, profile: str, pausing: bool, seed: int
) -> None:
    shoe_path = str(tmp_path / "shoe")
    dealer = Dealer.for_profile(_profile(profile, shoe_path), seed=seed, mistake_rate=RATE)
    played: list[Step] = []
    async with VirtualShoe(
        shoe_path, "framed", baud=115200, dealer_ignores_alarms=not pausing
    ) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, profile=profile,
                        rules={"decks": DECKS}, open_mode=None)
        async with a_slow_pit(daemon, mosquitto, PIT_DELAY, played) as (board, _):
            await dealt(deal(shoe, dealer, played), PIT_DELAY)
    assert "rounds open on the dealer's 'open' (open_mode explicit)" in daemon.log()
    bodies = list(board.by_seq().values())
    checked = check(bodies, played, dealer.mistakes_made, pausing=pausing,
                    burns_evidenced=True)  # a framed shoe: burn_press auto is required
    # a dealer who goes on through alarms loses rounds to the pit's delay: only some stand
    assert checked >= (5 if pausing else 1), f"only {checked} results: the shoe did not get far"
    assert dealer.mistakes_made, "the dealer made no mistake: nothing was tested"
    if pausing:
        assert shoe.counters["dealer_pauses"] >= 1
    resolved = tmp_path / "resolved.toml"  # the profile as the daemon ran it
    resolved.write_text(
        f'[profile]\nbase = "{profile}"\nname = "{profile}"\ndecks = {DECKS}\n'
        'open_mode = "explicit"\nburn_press = "required"\n'
    )
    replayed = replay_journal(daemon, resolved)
    published = board.by_seq()
    assert len(replayed) > 100
    for body in replayed:  # the shoe's file: every body, byte for byte as JSON values
        assert published.get(body["seq"]) == body, f"seq {body['seq']}: replay differs"
