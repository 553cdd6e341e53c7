"""The recorder's check of every table's chain as its events come (docs/record.md).

Each stored event is checked against the one before it of its table
(:class:`baccarat.chain.Checker`): a gap, a fork, a bad signature, an unknown key or an
unsigned event is a finding, published on ``{prefix}/floor/surveillance`` in the
recorder's own name (as the shuffle check's are) and logged. A table's check then starts
anew at its next event, so one break is one finding. Repeats (a seq already checked) are skipped.
``baccarat verify --db`` is the complete check, offline; this one is the alarm.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

from baccarat.chain import Checker, Keys, Link, lost_range
from baccarat.floor.records import Received
from baccarat.floor.shuffle import TOPIC
from baccarat.logs import Repeated

log = logging.getLogger(__name__)
_BROKEN: Final = Repeated(log)
"""Breaks: one line per table and cause, then a count every ten seconds (a table that
sends unsigned bodies on and on is one line, not one a message)."""

KEPT: Final = 4096
"""Hashes of a table's newest events kept to check an ``after`` against."""
TABLES_MAX: Final = 10_000
"""Tables checked at most (the oldest forgotten past it: its next event is a start)."""


class ChainWatch:
    """Every table's chain head, and the breaks found as events are stored."""

    def __init__(self, keys: Keys, *, prefix: str = "baccarat") -> None:
        self.keys = keys
        self.topic = f"{prefix}/{TOPIC}"
        self._tables: dict[str, Checker] = {}
        self.breaks = 0
        self.checked = 0

    def check(self, received: list[Received]) -> list[dict[str, Any]]:
        """The findings among ``received`` (in the order they came)."""
        findings = []
        for message in received:
            seq = message.seq
            if seq is None:
                continue
            checker = self._checker(message.table)
            if checker.head is not None and seq <= checker.head.seq:
                continue  # a repeat after a reconnection, or late
            body = message.payload.encode()
            broken = checker.check(Link(seq, body, message.seal, None, lost_range(message.body)))
            self.checked += 1
            if broken is None:
                continue
            self.breaks += 1
            text = f"chain broken: {broken}"
            _BROKEN.log(logging.ERROR, (message.table, broken.why), "%s", text)
            findings.append({
                "schema": 1, "type": "chain_break", "ts": message.body.get("ts"),
                "table": message.table, "seq": seq, "why": broken.why, "text": text,
            })
            checker.head = None  # the next event starts anew: one break, one finding
        return findings

    async def stored(self, received: list[Received]) -> list[tuple[str, bytes]]:
        """The recorder's hook: the findings to publish (topic, body)."""
        return [(self.topic, json.dumps(f, separators=(",", ":")).encode())
                for f in self.check(received)]

    def _checker(self, table: str) -> Checker:
        checker = self._tables.get(table)
        if checker is None:
            if len(self._tables) >= TABLES_MAX:
                del self._tables[next(iter(self._tables))]
            checker = self._tables[table] = Checker(table, self.keys, kept=KEPT)
        return checker
