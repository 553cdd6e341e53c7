"""History from bodies it cannot trust: what it cannot use is skipped and counted, never raised."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baccarat.cli import main
from baccarat.floor.bodies import FIELDS
from baccarat.floor.history import Skipped, rounds, to_csv
from baccarat.floor.store import Received, open_store


def good_round(seq: int = 1) -> list[dict[str, Any]]:
    base = {"schema": 1, "shoe": 1, "round": 1, "ts": 10.0}
    return [
        base | {"type": "round", "seq": seq, "round_id": "r1", "status": "open"},
        base | {"type": "card", "seq": seq + 1, "position": "P1", "card": "9S"},
        base | {"type": "alarm", "seq": seq + 2, "id": 1, "kind": "extra_card"},
        base | {"type": "alarm_cleared", "seq": seq + 3, "id": 1, "kind": "extra_card",
                "by": "void", "origin": "pit/ann"},
        base | {"type": "result", "seq": seq + 4, "round_id": "r1", "winner": "player",
                "player": {"total": 9}, "banker": {"total": 0}},
    ]


WRONG = {
    "seq": ["1", None, [1], True],
    "shoe": ["1", [1], {"a": 1}, 1.5, True],
    "round": ["1", [1], 1.5, False],
    "ts": ["noon", [1]],
    "position": [None, 1, ["P1"]],
    "card": [9, ["9S"], {"c": 1}],
    "demo": ["yes", 1, None],
    "round_id": [1, None, ["r"]],
    "winner": [None, 1, {"w": 1}],
    "player": ["9", [9], 9],
    "banker": ["0", None],
    "id": ["x", None, 1.5, [1], True],
    "kind": [None, 1],
    "by": [None, 1],
    "origin": [1, ["pit"]],
}
"""Wrong values for every field the history reads."""


def corpus() -> list[dict[str, Any]]:
    """Each kind of body history reads, with each field it reads made wrong, one at a time."""
    out: list[dict[str, Any]] = []
    seq = 100
    for body in good_round(seq):
        for name, values in WRONG.items():
            if name not in FIELDS[body["type"]]:
                continue
            for value in values:
                seq += 1
                out.append(body | {name: value})
    for required, kind in (("id", "alarm"), ("id", "alarm_cleared"), ("position", "card"),
                           ("winner", "result")):
        body = next(b for b in good_round(900) if b["type"] == kind)
        del body[required]
        out.append(body)
    out.append(good_round(950)[4] | {"player": {"total": "9"}})
    return out


def test_every_wrong_field_is_skipped_and_counted() -> None:
    bad = corpus()
    skipped = Skipped()
    history = list(rounds([("T1", b) for b in [*good_round(), *bad]], skipped))
    assert [r.line() for r in history] == [
        "T1 shoe 1 round 1: player 9-0  P1 9S  [extra_card #1 settled by void (pit/ann)]"
    ]
    assert skipped.count == len(bad)
    assert len(skipped.examples) == 10


def test_the_alarm_with_a_string_id_of_the_audit(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "messages.jsonl"
    bodies = [*good_round(), {"schema": 1, "type": "alarm", "seq": 6, "id": "x", "shoe": 1,
                              "round": 1, "kind": "extra_card"}]
    path.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    assert main(["history", "--messages", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "player 9-0" in out
    assert "1 message(s) skipped" in err
    assert "id is string 'x'" in err
    assert main(["history", "--messages", str(path), "--check"]) == 1


@pytest.mark.parametrize("form", [[], ["--csv"], ["--check"], ["--table", "T1", "--shoe", "1"],
                                  ["--since", "0", "--until", "99"]])
def test_no_form_of_history_breaks_on_the_corpus(
    db_url: str, form: list[str], capsys: Any
) -> None:
    """Stored as an older recorder (no screen) would have stored them."""
    store = open_store(db_url)
    bodies = [*good_round(), *corpus()]
    store.add([Received("T1", "baccarat/T1/x", b | {"seq": n}, json.dumps(b | {"seq": n}), 1.0)
               for n, b in enumerate(bodies, start=1)])
    store.close()
    code = main(["history", "--db", db_url, *form])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert "message(s) skipped" in err
    assert code == (1 if "--check" in form else 0)
    if "--csv" in form:
        assert to_csv([]).splitlines()[0] == out.splitlines()[0]


def test_check_no_longer_takes_an_online_status_for_a_missing_tail(
    db_url: str, capsys: Any
) -> None:
    """A table that said online after its newest message was idle, not short of messages."""
    store = open_store(db_url)
    bodies = good_round()
    store.add([Received("T1", "baccarat/T1/x", b, json.dumps(b), 100.0) for b in bodies])
    online = {"schema": 1, "type": "status", "state": "online", "table": "T1"}
    store.add([Received("T1", "baccarat/T1/status", online, json.dumps(online), 200.0)])
    store.close()
    assert main(["history", "--db", db_url, "--check"]) == 0
    err = capsys.readouterr().err
    assert "T1:" not in err
    assert "tails not checked (--broker HOST" in err


def test_a_tail_is_missing_when_the_broker_retains_a_newer_seq() -> None:
    from baccarat.floor.retained import RetainedSeq, missing_tails
    from baccarat.floor.store import TableTail

    tails = [TableTail("T1", 9, 1.0, None, None), TableTail("T2", 4, 1.0, None, None)]
    retained = {
        "T1": RetainedSeq("T1", 9, "baccarat/T1/recall"),
        "T2": RetainedSeq("T2", 7, "baccarat/T2/round"),
        "T3": RetainedSeq("T3", 1, "baccarat/T3/shoe"),
    }
    assert missing_tails(tails, retained) == [
        "T2: tail missing: the broker holds baccarat/T2/round seq 7, the database seq 4:"
        " seq 5-7 not recorded (lost, or the recorder is behind)",
        "T3: tail missing: the broker holds baccarat/T3/shoe seq 1, the database nothing:"
        " seq 1 not recorded (lost, or the recorder is behind)",
    ]


def test_broker_goes_with_db_and_check(capsys: Any) -> None:
    assert main(["history", "--messages", "-", "--broker", "localhost"]) == 2
    assert "--broker goes with --db and --check" in capsys.readouterr().err
