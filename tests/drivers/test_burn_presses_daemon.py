"""Acceptance (issue 33): every burn press is evidence, through the real daemon.

``baccarat sim shoe`` (its own code: its options, dealer and record writer) deals a seeded 2-deck
house6 shoe on a framed pty with the burn mistakes asked for by round (``--mistake``): round
burns skipped, doubled (each burn pressed), and a second press with no card after it; it
writes the dealer's own record of every step (``--record``). The real daemon reads it and
publishes to a real mosquitto; a pit subscribed like a console settles each alarm PIT_DELAY
seconds after it shows, looking at the discard for an ``extra_burn`` (the record's burn
cards). Every result left standing must be a round of the dealer's record, with its cards,
and each deviation must have been raised. Before issue 33 the second press was refused
(a notice) and the second burn card was read as the player's first: a round was published
one card off.

Twice: a dealer who pauses while an alarm the daemon told the shoe is open, and one who
deals on whatever the table says (then the pit settles long after the cards went on, his
'open' presses are refused while a round is blocked and his cards are held aside: only
results that stand are compared, and there must be no wrong one).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import pytest

from baccarat.cards import parse_card
from baccarat.cli import build_parser
from baccarat.cli.sim import deal_shoe, dealing_profile, make_dealer
from baccarat.drivers.events import CardDrawn, DealerButton, ShoeInserted
from baccarat.sim_hardware.dealer import Step
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon
from support.mosquitto import Mosquitto
from support.slow_pit import a_slow_pit, dealt
from support.table_truth import check, dealt_rounds, standing_results

PACE = 0.04
PIT_DELAY = 0.6
"""Seconds the pit takes to look at an alarm: many of the dealer's events."""
DECKS = 2
MISTAKES = {2: "skipped_burn", 3: "double_burn", 4: "burn_press_no_card", 6: "double_burn",
            7: "burn_press_no_card", 9: "double_burn", 10: "skipped_burn"}
PRESSES = ("double_burn", "burn_press_no_card")


class Record(Sequence[Step]):
    """The dealer's ``--record`` file as steps, read afresh each time (it grows)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _steps(self) -> list[Step]:
        if not self.path.exists():
            return []
        steps = []
        for text in self.path.read_text(encoding="utf-8").splitlines():
            line = json.loads(text)
            if line["card"] is not None:
                event: object = CardDrawn(parse_card(line["card"]))
            elif line["button"] is not None:
                event = DealerButton(line["button"])
            else:
                event = ShoeInserted()  # the shoe's or the cut card's line: no card
            steps.append(Step(event, line["round"], line["role"], line["mistake"]))  # type: ignore[arg-type]
        return steps

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | Sequence[Step]:
        return self._steps()[index]

    def __len__(self) -> int:
        return len(self._steps())

    def __iter__(self) -> Iterator[Step]:
        return iter(self._steps())


@pytest.mark.timeout(300)
@pytest.mark.parametrize("pausing", [True, False])
async def test_every_result_left_standing_is_the_dealers_record(
    tmp_path: Path, mosquitto: Mosquitto, pausing: bool
) -> None:
    link, path = tmp_path / "shoe", tmp_path / "dealt.jsonl"
    words = [f"--mistake={n}:{kind}" for n, kind in MISTAKES.items()]
    args = build_parser("sim").parse_args([
        "sim", "shoe", "--link", str(link), "--protocol", "framed", "--baud", "115200",
        "--pace", str(PACE), "--profile", "house6", "--decks", str(DECKS), "--shoes", "1",
        "--seed", "7", "--record", str(path), *words,
        *([] if pausing else ["--dealer-ignores-alarms"]),
    ])
    record = Record(path)
    daemon = Daemon(tmp_path, mosquitto, device=str(link), profile="house6",
                    rules={"decks": DECKS}, open_mode=None)
    dealer = make_dealer(args, 1, dealing_profile(args))
    shoe = VirtualShoe(str(link), "framed", baud=115200,
                       dealer_ignores_alarms=args.dealer_ignores_alarms)
    with path.open("a", encoding="utf-8") as written, io.StringIO() as out:
        async with shoe, a_slow_pit(daemon, mosquitto, PIT_DELAY, record) as (board, _):
            await dealt(deal_shoe(shoe, dealer, 1, PACE, out, record=written), PIT_DELAY)
    steps = list(record)
    tagged = sorted({(s.round_no, s.mistake) for s in steps if s.mistake})
    made = sorted(MISTAKES.items())
    assert tagged == [m for m in made if m[1] in PRESSES], tagged  # each one asked for
    for number in [n for n, kind in made if kind == "skipped_burn"]:
        roles = [s.role for s in steps if s.round_no == number]
        assert "P1" in roles, number
        assert "burn" not in roles, number
    bodies = list(board.by_seq().values())
    alarms = [b for b in bodies if b.get("type") == "alarm"]
    presses = sum(kind in PRESSES for kind in MISTAKES.values())
    extra_burns = sum(a["kind"] == "extra_burn" for a in alarms)
    if pausing:  # each deviation raised in its round
        assert extra_burns == presses, [(a["round"], a["kind"]) for a in alarms]
        assert sum(a["kind"] == "burn_skipped" for a in alarms) == 2
    else:  # a press on a table still blocked is used up by a card held aside anyway
        assert extra_burns <= presses
        assert any(a["kind"] == "burn_skipped" for a in alarms)
    assert not [a for a in alarms if a["text"].startswith("the dealer's 'announce_burn'")]
    checked = check(bodies, steps, made, pausing=pausing, burns_evidenced=True)
    assert checked >= (6 if pausing else 1)
    if pausing:  # a doubled burn, confirmed by the pit, stands with the dealer's cards
        results = {(tuple(r["player"]["cards"]), tuple(r["banker"]["cards"]))
                   for r in standing_results(bodies)}
        doubled = [n for n, kind in MISTAKES.items() if kind == "double_burn"]
        rounds = dealt_rounds(steps)
        for number in doubled:
            player, banker = rounds[number]
            assert (tuple(player), tuple(banker)) in results, number
        assert not board.bodies("alarms")[-1]["alarms"], "an alarm was left open"
