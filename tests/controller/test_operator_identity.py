"""Who gave each command: the broker names the operator, the journal keeps it, reports show it.

Operator commands go to ``{prefix}/{table}/cmd/{name}/{operator}``; the broker's ACL lets
each operator's account write only under its own name, so the name cannot be forged. The
journal records the origin with the input (``by=pit/ana``, ``by=button``), and the
messages that settle an alarm or void a round carry it: ``journal show``, ``recall`` and
``history`` show it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baccarat.cards import parse_card
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import (
    Declare,
    DrawCard,
    InputError,
    NewShoe,
    VoidRound,
    notation,
    parse_input,
)
from baccarat.controller.journal.records import decode_record, encode_record
from baccarat.drivers.events import CardDrawn, DealerButton, ShoeInserted
from baccarat.messages.bodies import AlarmClearedMessage, RecallMessage, VoidMessage
from baccarat.rules.profiles import load_profile
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

WITHIN = 20.0
ROUND = ("9S", "2H", "KD", "5C")  # P1 B1 P2 B2: player 9 (a natural) against 7
ACL = """
user baccarat-T1
topic write baccarat/T1/+
topic write baccarat/T1/reply/#
topic read baccarat/T1/cmd/#

user pit-ana
topic read baccarat/#
topic write baccarat/+/cmd/+/pit-ana

user pit-ben
topic read baccarat/#
topic write baccarat/+/cmd/+/pit-ben
"""
USERS = {"baccarat-T1": "table-secret", "pit-ana": "ana-secret", "pit-ben": "ben-secret"}


# ------------------------------------------------------------------ notation and journal


def test_the_origin_is_part_of_the_notation_and_reads_back() -> None:
    inp = parse_input("by=pit/pit-ana void dealer dropped a card", 12.5)
    assert inp == VoidRound(
        reason="dealer dropped a card", confirm=True, ts=12.5, origin="pit/pit-ana"
    )
    assert notation(inp) == "by=pit/pit-ana void dealer dropped a card"
    assert parse_input(notation(inp), 12.5) == inp
    assert parse_input("by=button declare banker").origin == "button"
    assert parse_input("declare banker").origin is None  # the notation of old journals


@pytest.mark.parametrize(
    "line", ["by=x open", "by=pit/ open", "by=pit/a#b open", "by=pit/" + "a" * 65]
)
def test_a_bad_origin_is_refused(line: str) -> None:
    with pytest.raises(InputError, match="bad origin"):
        parse_input(line)


def test_the_journal_keeps_the_origin() -> None:
    inp = Declare(winner="player", ts=1.25, origin="pit/pit-ana")
    line = encode_record(7, inp)
    assert b" by=pit/pit-ana declare player *" in line
    assert decode_record(line.rstrip(b"\n")) == (7, inp)


# ------------------------------------------------------------------ the engine


def test_who_settled_an_alarm_is_in_its_clearing_and_in_the_recall() -> None:
    engine = Engine(load_profile("macau", burn="none"))
    engine.feed(NewShoe(ts=1.0))
    for code in ROUND:
        engine.feed(DrawCard(parse_card(code), ts=2.0))
    raised = engine.feed(Declare(winner="banker", ts=3.0, origin="button")).messages
    assert [m.kind for m in raised if m.type == "alarm"] == ["result_mismatch"]  # type: ignore[attr-defined]
    settled = engine.feed(Declare(winner="player", ts=4.0, origin="pit/pit-ana")).messages
    (cleared,) = [m for m in settled if isinstance(m, AlarmClearedMessage)]
    assert (cleared.by, cleared.origin) == ("declare", "pit/pit-ana")
    recall = [m for m in engine.feed(DrawCard(parse_card("AS"), ts=5.0)).messages
              if isinstance(m, RecallMessage)]
    assert not recall  # the next round has only begun
    void = engine.feed(VoidRound(reason="test", confirm=True, ts=6.0, origin="pit/pit-ben"))
    (voided,) = [m for m in void.messages if isinstance(m, VoidMessage)]
    assert voided.origin == "pit/pit-ben"
    (last,) = [m for m in void.messages if isinstance(m, RecallMessage)]
    first, second = last.rounds
    assert [(a.kind, a.by, a.origin) for a in first.settled] == [
        ("result_mismatch", "declare", "pit/pit-ana")
    ]
    assert (second.status, second.voided_by) == ("void", "pit/pit-ben")


# ------------------------------------------------------------------ the real daemon and broker


def cli(*args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", *args],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout


def replies(board: Recorder) -> list[dict[str, Any]]:
    return board.bodies("reply")


async def test_the_operator_is_who_the_broker_says_and_every_report_shows_it(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(anonymous=False, users=USERS, acl=ACL)
    link = str(tmp_path / "shoe")
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        daemon = Daemon(
            tmp_path, broker, device=link, rules={"burn": "none"},
            broker_env=broker.env(username="baccarat-T1", password="table-secret"),
        )
        try:
            async with (
                Recorder(broker, username="pit-ana", password="ana-secret") as board,
                broker.client(username="pit-ana", password="ana-secret") as ana,
                broker.client(username="pit-ben", password="ben-secret") as ben,
            ):
                await asyncio.to_thread(daemon.start)
                shoe.send(ShoeInserted())
                for code in ROUND:
                    shoe.send(CardDrawn(parse_card(code)))
                shoe.send(DealerButton("declare_banker"))  # the dealer presses the wrong one
                await board.wait_for(lambda b: bool(b.bodies("alarm")), WITHIN)
                # pit-ben tries to void the round in pit-ana's name: the broker drops it
                await ben.publish("baccarat/T1/cmd/void/pit-ana",
                                  b'{"reason": "forged", "confirm": true}', qos=1)
                await ana.publish("baccarat/T1/cmd/declare/pit-ana", b'{"winner": "player"}',
                                  qos=1)
                await board.wait_for(lambda b: bool(b.bodies("alarm_cleared")), WITHIN)
                await board.wait_for(lambda b: len(replies(b)) >= 1, WITHIN)
                await asyncio.sleep(1.0)  # time for a forged command to do harm, if it could
        finally:
            assert daemon.stop() == 0
    (cleared,) = board.bodies("alarm_cleared")
    assert (cleared["by"], cleared["origin"]) == ("declare", "pit/pit-ana")
    assert [(r["command"], r["ok"]) for r in replies(board)] == [("declare", True)]
    assert not board.bodies("void")

    journal = cli("journal", "show", str(daemon.journal_files()[-1]))
    assert "by=button declare banker" in journal
    assert "by=pit/pit-ana declare player" in journal
    assert "forged" not in journal
    recall = cli("recall", str(daemon.journal))
    assert "result_mismatch #1 settled by declare (pit/pit-ana)" in recall
    messages = tmp_path / "messages.jsonl"
    messages.write_text(cli("journal", "show", str(daemon.journal_files()[-1]), "--messages"))
    history = cli("history", "--messages", str(messages), "--csv")
    assert "result_mismatch #1 settled by declare (pit/pit-ana)" in history
    assert json.loads(cli("journal", "show", str(daemon.journal_files()[-1]), "--json")
                      .splitlines()[-1])["input"].startswith("by=pit/pit-ana")
