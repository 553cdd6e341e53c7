"""Faults that stop the table: the journal or its folder cannot be written.

The daemon cannot go on without its journal (docs/design.md, invariant 2), and the journal
cannot record that it failed, so this alarm does not go through the engine: it is published
directly, with the retained ``status``, just before the daemon stops with
:data:`FAULT_EXIT`. Its body has the fields of the engine's ``alarm`` message that apply
(no ``seq`` and no ``id``: those number the engine's messages and alarms, which go on from
the journal after a restart); ``type`` is ``fault`` so that no subscriber takes it for one
of the engine's messages.
"""

from __future__ import annotations

import json
from typing import Final, Literal

from baccarat.controller.publisher import status_payload

FAULT_EXIT: Final = 3
"""The daemon's exit status after a journal fault (systemd: ``RestartPreventExitStatus``)."""

FaultKind = Literal["journal_fault"]
"""What failed: the journal folder (a journal file, its lock, or the published cursor)."""


FAULT_TOPIC: Final = "fault"
"""Where the fault is also kept, retained, for a screen that connects later; the table
clears it (an empty retained message) when it starts again on a good journal."""


def fault_alarm(
    text: str,
    *,
    table: str,
    shoe: int | None,
    round_number: int | None,
    ts: float,
    kind: FaultKind = "journal_fault",
) -> dict[str, object]:
    """The body published on ``{prefix}/{table}/alarm`` when the table stops on a fault.

    A dict, so that a list of open alarms can hold it too; :func:`encoded` for the wire.
    """
    return {
        "schema": 1,
        "type": "fault",
        "ts": ts,
        "kind": kind,
        "article": "device",
        "correctable": False,
        "corrections": [],
        "shoe": shoe,
        "round": round_number,
        "card": None,
        "text": text,
        "count": 1,
        "cards": [],
        "lasting": True,
        "table": table,
    }


def encoded(body: dict[str, object]) -> bytes:
    """A body as it goes on the wire: JSON in UTF-8."""
    return json.dumps(body).encode()


def fault_status(text: str, *, table: str, key: str | None = None) -> bytes:
    """The retained ``status`` body of a table stopped by a fault: offline, and why.

    ``key``: the table's public key, which every status carries (docs/record.md).
    """
    extra = {} if key is None else {"key": key}
    return status_payload("offline", table, fault=text, **extra)
