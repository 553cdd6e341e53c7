"""The fault alarm's body: the fields of an engine alarm that apply, and the status."""

from __future__ import annotations

import json

from baccarat import __version__
from baccarat.controller.faults import encoded, fault_alarm, fault_status
from baccarat.messages.bodies import AlarmMessage, json_schema


def test_the_fault_alarm_has_the_fields_of_an_alarm_but_its_numbers() -> None:
    body = fault_alarm("cannot write x: No space left on device", table="T1", shoe=2,
                       round_number=7, ts=1.5)
    alarm_fields = set(json_schema(AlarmMessage)["properties"])
    numbers = {"seq", "id", "lost_first", "lost_last"}  # the engine numbers those
    assert set(body) - {"table"} == alarm_fields - numbers
    assert body["type"] == "fault"  # not taken for one of the engine's alarms
    assert (body["kind"], body["shoe"], body["round"]) == ("journal_fault", 2, 7)
    assert json.loads(encoded(body)) == body


def test_the_fault_status_is_offline_with_the_reason() -> None:
    status = json.loads(fault_status("journal /j is in use by another process", table="T1"))
    assert status == {
        "schema": 1, "type": "status", "state": "offline", "table": "T1",
        "version": __version__, "fault": "journal /j is in use by another process",
    }
