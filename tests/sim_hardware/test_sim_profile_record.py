"""``sim shoe --profile --record`` and ``sim floor --profile``: dealt, recorded, configured."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import json
from pathlib import Path

from baccarat.cards import parse_card
from baccarat.cli import build_parser
from baccarat.cli.sim import serve
from baccarat.controller.config import load_config
from baccarat.drivers.events import (
    CardDrawn,
    CutCard,
    DealerButton,
    DeviceEvent,
    Heartbeat,
    Hello,
    LinkDown,
    LinkUp,
    ShoeInserted,
    ShoeRemoved,
)
from baccarat.drivers.serial_source import SerialSource
from baccarat.rules.profiles import load_profile
from baccarat.sim_hardware.floor import FloorPlan, SimTable, table_config


def sim_args(*args: str) -> argparse.Namespace:
    return build_parser("sim").parse_args(["sim", "shoe", *args])


def expected_event(line: dict[str, object], first: bool) -> DeviceEvent:
    """The event a record line says the dealer sent."""
    if line["card"] is not None:
        return CardDrawn(parse_card(str(line["card"])))
    if line["button"] is not None:
        return DealerButton(line["button"])
    if line["role"] == "cut":
        return CutCard()
    assert line["role"] == "shoe"
    return ShoeInserted() if first else ShoeRemoved()


async def test_the_record_is_what_went_over_the_wire(tmp_path: Path) -> None:
    link, record = tmp_path / "shoe", tmp_path / "dealt.jsonl"
    record.write_text('{"old": "line kept"}\n')  # appended to, not replaced
    args = sim_args(
        "--link", str(link), "--protocol", "framed", "--baud", "115200", "--pace", "0",
        "--profile", "house6", "--decks", "1", "--shoes", "1", "--seed", "4",
        "--misdeal-rate", "0.3", "--record", str(record),
    )  # fmt: skip
    received: list[DeviceEvent] = []
    source = SerialSource(str(link), "framed", baud=115200)

    async def read() -> None:
        async with source:
            async for event in source:
                if not isinstance(event, Heartbeat | Hello | LinkUp | LinkDown):
                    received.append(dataclasses.replace(event, seq=None))

    reader = asyncio.create_task(read())
    out = io.StringIO()
    assert await asyncio.wait_for(serve(args, out), 30) == 0
    await source.stop()
    with contextlib.suppress(asyncio.CancelledError):
        await reader
    lines = [json.loads(text) for text in record.read_text().splitlines()]
    assert lines[0] == {"old": "line kept"}
    lines = lines[1:]
    assert {tuple(sorted(line)) for line in lines} == {
        ("button", "card", "mistake", "role", "round", "shoe")
    }
    expected = [expected_event(line, i == 0) for i, line in enumerate(lines)]
    assert received == expected
    assert lines[1:10] == [  # house6: the burn button and 8 burn cards before round 1
        {**lines[1], "role": "button", "card": None, "button": "burn"},
        *({**line, "role": "burn", "round": 0} for line in lines[2:10]),
    ]
    first_round = [line for line in lines if line["round"] == 1]
    assert [line["button"] or line["role"] for line in first_round[:3]] == ["open", "burn", "burn"]
    assert any(line["mistake"] for line in lines), "seed 4 at 0.3 makes mistakes"
    assert "profile house6, 1 decks" in out.getvalue()


async def test_a_bad_profile_or_burn_with_a_profile_is_refused(tmp_path: Path) -> None:
    link = str(tmp_path / "shoe")
    bad = sim_args("--link", link, "--profile", "nowhere")
    both = sim_args("--link", link, "--profile", "house6", "--burn", "3")
    assert await serve(bad) == 2
    assert await serve(both) == 2
    assert not await asyncio.to_thread(Path(link).exists)


def test_the_floor_configures_each_daemon_with_the_profile_its_dealer_deals(
    tmp_path: Path,
) -> None:
    table = SimTable("T01", tmp_path / "T01", 1)
    for profile, decks in (("house6", None), ("csm", None), ("house6", 1)):
        plan = FloorPlan(tables=1, folder=tmp_path, profile=profile, decks=decks)
        config_file = tmp_path / f"{profile}-{decks}.toml"
        config_file.write_text(table_config(plan, table))
        daemon = load_config(config_file).rule_profile()
        # the daemon's rounds open, and round burns count, by the shoe's buttons (auto)
        want = load_profile(profile, decks=decks).model_copy(
            update={"open_mode": "explicit", "burn_press": "required"}
        )
        assert daemon == want
    assert "\ndecks =" not in table_config(FloorPlan(tables=1, folder=tmp_path, profile="house6"),
                                       table)


def test_sim_floor_takes_profile_and_misdeal_rate() -> None:
    args = build_parser("sim").parse_args(
        ["sim", "floor", "--tables", "2", "--profile", "house6", "--misdeal-rate", "0.1",
         "--dealer-ignores-alarms"]
    )
    assert (args.profile, args.misdeal_rate, args.dealer_ignores_alarms) == ("house6", 0.1, True)
    assert args.decks is None
