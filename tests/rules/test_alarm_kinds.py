"""The one table of alarm kinds (rules/alarm_kinds.py): its row and where it is raised.

Each kind is written in its row and where it is raised, in no other source file;
everything else is derived from the table.

A source file "writes" a kind when a string literal in it is exactly the kind's name (a
Python constant; in JavaScript a quoted string or an object's key). Generated files are
left out. A kind that a device report raises is raised where the report is made (under
the report's name): its own name is written in its row alone. A few files write the same
word as a name of another vocabulary (a device report, a simulated dealer's mistake...):
:data:`OTHER_VOCABULARIES` names each file, the words and what they are there; an entry
that is no longer needed fails the test too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

from baccarat.controller.engine import alarms
from baccarat.controller.engine.inputs import DeviceReportKind
from baccarat.messages.bodies import SURVEILLANCE_KINDS, AlarmMessage, json_schema
from baccarat.rules.alarm_kinds import KINDS, LASTING, AlarmKind
from baccarat.sim_hardware.dealer import Mistake

SRC = Path(__file__).resolve().parents[2] / "src" / "baccarat"
TABLE = "rules/alarm_kinds.py"
GENERATED = {"boards/web/catalog.js", "boards/web/alarm_kinds.js"}

OTHER_VOCABULARIES: dict[str, tuple[frozenset[str], str]] = {
    "controller/engine/inputs.py": (
        frozenset({*get_args(DeviceReportKind), "advantage", "shuffle_suspect"}),
        "device reports' names (DeviceReportKind: journaled, so never renamed) and the "
        "text form of the edge watch's and the shuffle check's inputs",
    ),
    "controller/device_inputs.py": (
        frozenset(get_args(DeviceReportKind)), "the device reports it makes",
    ),
    "controller/table.py": (frozenset(get_args(DeviceReportKind)), "the device reports it makes"),
    "sim_hardware/dealer.py": (
        frozenset(get_args(Mistake)),
        "the simulated dealer's mistakes (Mistake), named after the alarm each must raise",
    ),
    "cli/demo.py": (
        frozenset({*get_args(Mistake), "missing_card", "result_mismatch"}),
        "the demo dealer's mistakes (Mistake), and the demo pit's choice of correction",
    ),
    "floor/derived.py": (
        frozenset({"open_in_round", "burn_skipped"}),
        "the floor's fold of a round from its bodies: an open_in_round restarts the round, "
        "a burn_skipped ends its burn (as the engine's round does)",
    ),
    "floor/shuffle.py": (frozenset({"shuffle_suspect"}), "the floor's own message type"),
    "controller/config.py": (frozenset({"advantage"}), "the edge threshold's config field"),
    "chain/check.py": (
        frozenset({"journal_damaged"}),
        "the chain's verifier reads a body's kind: a jump in seq is accepted only where a "
        "journal_damaged alarm names it (a bottom layer, below rules: it cannot import the table)",
    ),
}


def _written(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return {
            node.value for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
    found = {m.group(2) for m in re.finditer(r"([\"'])([a-z_]+)\1", text)}
    return found | {m.group(1) for m in re.finditer(r"^\s*([a-z_]+)\s*:", text, re.MULTILINE)}


def _files_by_kind() -> dict[str, list[str]]:
    kinds = set(get_args(AlarmKind))
    files: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*")):
        name = path.relative_to(SRC).as_posix()
        if path.suffix not in (".py", ".js", ".html") or name in GENERATED:
            continue
        for kind in _written(path) & kinds:
            files.setdefault(kind, []).append(name)
    return files


def test_each_alarm_kind_is_written_in_its_row_and_where_it_is_raised_only() -> None:
    too_many: dict[str, list[str]] = {}
    used: set[tuple[str, str]] = set()
    for kind, files in _files_by_kind().items():
        own = []
        for name in files:
            words, _what = OTHER_VOCABULARIES.get(name, (frozenset(), ""))
            if kind in words:
                used.add((name, kind))
            else:
                own.append(name)
        assert TABLE in own, f"{kind} has no row in {TABLE}"
        raised_by_report = KINDS[kind].report is not None  # raised where the report is made
        if len(own) > (1 if raised_by_report else 2):
            too_many[kind] = own
    assert too_many == {}, (
        "an alarm kind is written in more than its row and the one module that raises it: "
        "derive what you need from rules/alarm_kinds.py"
    )
    stale = [name for name in OTHER_VOCABULARIES if not any(n == name for n, _k in used)]
    assert stale == [], "these files no longer write those words: drop them here"


def test_the_table_has_every_kind_once_with_words_in_three_languages() -> None:
    assert tuple(KINDS) == get_args(AlarmKind)
    for kind, row in KINDS.items():
        assert len(row.words) == 3, kind
        assert all(w.strip() for w in row.words), kind
        assert row.lasting == (row.settled_by == "device"), kind
        assert row.lasting == (row.recovery is not None), kind


def test_the_engine_and_the_bodies_take_the_tables_facts() -> None:
    assert alarms.LASTING == LASTING == {"link_down", "publish_refused", "shoe_deaf"}
    assert {kind: row.article for kind, row in KINDS.items()} == alarms.ARTICLE
    assert alarms.DEVICE_ALARM["journal"] == "journal_damaged"
    assert alarms.RECOVERS == {
        "link_up": "link_down", "publish_accepted": "publish_refused", "shoe_hears": "shoe_deaf",
    }
    assert {"advantage"} == SURVEILLANCE_KINDS
    assert json_schema(AlarmMessage)["properties"]["kind"]["enum"] == list(KINDS)
