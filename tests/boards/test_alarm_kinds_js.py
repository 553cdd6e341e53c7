"""The web pages' copy of the alarm table (boards/web/alarm_kinds.js), as the table makes it.

The table is rules/alarm_kinds.py; the pages take their alarm facts from the copy alone.
"""

from __future__ import annotations

from baccarat.boards.alarm_kinds_js import WEB_ALARM_KINDS, web_alarm_kinds
from baccarat.rules.alarm_kinds import KINDS


def test_the_web_alarm_kinds_are_what_the_table_makes() -> None:
    assert WEB_ALARM_KINDS.read_text(encoding="utf-8") == web_alarm_kinds(), (
        "boards/web/alarm_kinds.js is out of date: run "
        "`.venv/bin/python -m baccarat.boards.alarm_kinds_js`"
    )


def test_the_web_lasting_set_is_pythons() -> None:
    text = WEB_ALARM_KINDS.read_text(encoding="utf-8")
    lasting = [kind for kind, row in KINDS.items() if row.lasting]
    assert lasting == ["link_down", "publish_refused", "shoe_deaf"]
    assert 'export const LASTING = new Set(["link_down", "publish_refused", "shoe_deaf"]);' in text
    state = WEB_ALARM_KINDS.with_name("state.js").read_text(encoding="utf-8")
    assert "LASTING.has(a.kind)" in state  # blockingAlarms: the generated set, no copy
