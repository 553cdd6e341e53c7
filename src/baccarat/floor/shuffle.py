"""The floor-wide shuffle check: every table's shoe against every shoe of the day.

The recorder hands it the messages it has stored (:meth:`FloorShuffle.stored`); each
table's ``card`` messages, in ``seq`` order, go into one
:class:`~baccarat.rules.shuffle_match.ShuffleIndex` that holds every table's shoes of the
last ``hours`` (read back from the store at start). A shoe whose cards repeat a run of
another shoe's order, of any table, is a finding: published on
``{prefix}/floor/surveillance`` (:data:`TOPIC`) by the recorder in its own name, never on
a table's topics (the floor broker's ACL lets only the recorder write there), and kept in
the store's ``shuffle_suspects`` table. A table's own check (the daemon's) sees only its
own shoes; this one sees a shoe carried from one table to another.

What it reads is what the tables published: a card held aside by an alarm has no card
message, and is a gap here (one is allowed in a run). Cards of a table that come again
(a duplicate after a reconnection) or late (older than one already taken) are skipped.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Final

from baccarat.cards import CardError, parse_card
from baccarat.floor import shuffle_store
from baccarat.floor.store import Received, Store, StoreError
from baccarat.rules.shuffle_match import FLOOR_SHOES, RUN, Repeat, ShuffleIndex

log = logging.getLogger(__name__)

TOPIC: Final = "floor/surveillance"
"""Under the prefix: the recorder's own topic (``floor`` is no table's id)."""
DAY: Final = 24.0
"""Hours of shoes the check holds by default."""


def card_index(code: object) -> int | None:
    """A card message's code as 0..51, ``None`` if it is none (unreadable) or no card."""
    if not isinstance(code, str):
        return None
    try:
        return parse_card(code).index
    except CardError:
        return None


class FloorShuffle:
    """Every table's shoes of the last ``hours``, at most ``shoes`` of them."""

    def __init__(
        self, store: Store, *, prefix: str = "baccarat", hours: float = DAY,
        shoes: int = FLOOR_SHOES,
    ) -> None:
        self.store = store
        self.topic = f"{prefix}/{TOPIC}"
        self.hours = hours
        self.index = ShuffleIndex(shoes)
        self._current: dict[str, tuple[int, int]] = {}
        """table -> (its shoe now, that shoe's slot)."""
        self._last_seq: dict[str, int] = {}
        self._last_ts: dict[int, float] = {}
        """slot -> the time of its newest card: a slot older than ``hours`` is forgotten."""
        self.skipped = 0
        """Cards not taken: again, or late."""
        self.found = 0

    def load(self, now: float) -> int:
        """Read the day's cards from the store (nothing is raised for them); the cards read."""
        shuffle_store.create(self.store)
        cards = 0
        since = now - self.hours * 3600
        for table, shoe, seq, ts, code in shuffle_store.day_cards(self.store, since):
            self._card(table, shoe, seq, ts, code)
            cards += 1
        log.info("shuffle check: %d card(s) of %d shoe(s) of the last %.0f h read", cards,
                 len(self._last_ts), self.hours)
        return cards

    def cards(self, received: list[Received]) -> list[dict[str, Any]]:
        """Take the card messages among ``received``; the findings they make."""
        findings = []
        for message in received:
            body = message.body
            if body.get("type") != "card" or message.seq is None:
                continue
            shoe, ts = body.get("shoe"), body.get("ts")
            if not isinstance(shoe, int) or isinstance(shoe, bool):
                continue
            when = float(ts) if isinstance(ts, int | float) else message.received
            finding = self._card(message.table, shoe, message.seq, when, body.get("card"))
            if finding is not None:
                findings.append(finding)
        return findings

    async def stored(self, received: list[Received]) -> list[tuple[str, bytes]]:
        """The recorder's hook: the findings to publish (topic, body); they are kept too."""
        findings = self.cards(received)
        if not findings:
            return []
        try:
            await asyncio.to_thread(shuffle_store.record, self.store, findings)
        except StoreError as exc:
            log.error(  # noqa: TRY400 - the database's reason is the whole story
                "shuffle check: %d finding(s) not kept: %s (published all the same)",
                len(findings), exc,
            )
        return [(self.topic, json.dumps(f, separators=(",", ":")).encode()) for f in findings]

    def _card(
        self, table: str, shoe: int, seq: int, ts: float, code: object
    ) -> dict[str, Any] | None:
        last = self._last_seq.get(table)
        if last is not None and seq <= last:
            self.skipped += 1
            return None
        self._last_seq[table] = seq
        current = self._current.get(table)
        if current is None or current[0] != shoe:
            if current is not None:
                self.index.close_shoe(current[1])
            self._forget_older_than(ts - self.hours * 3600)
            current = self._current[table] = (shoe, self.index.open_shoe((table, shoe)))
        self._last_ts[current[1]] = ts
        repeat = self.index.add(current[1], card_index(code))
        return None if repeat is None else self._finding(table, shoe, repeat, ts)

    def _forget_older_than(self, since: float) -> None:
        for slot in [s for s, ts in self._last_ts.items() if ts < since]:
            self.index.forget(slot)
            del self._last_ts[slot]

    def _finding(self, table: str, shoe: int, repeat: Repeat, ts: float) -> dict[str, Any]:
        earlier = repeat.earlier
        assert isinstance(earlier, tuple)  # what _card opened the shoe with
        earlier_table, earlier_shoe = earlier
        gap = None if repeat.gap is None else {
            "kind": repeat.gap.kind, "position": repeat.gap.position
        }
        self.found += 1
        text = (
            f"table {table}'s shoe {shoe}: cards {repeat.first}-{repeat.last} repeat cards "
            f"{repeat.earlier_first}-{repeat.earlier_last} of table {earlier_table}'s shoe "
            f"{earlier_shoe} in the same order ({repeat.cards} cards alike"
            f"{', one gap' if gap else ''}; {RUN} make it certain)"
        )
        log.warning("shuffle check: %s", text)
        return {
            "schema": 1, "type": "shuffle_suspect", "ts": ts,
            "table": table, "shoe": shoe, "first": repeat.first, "last": repeat.last,
            "cards": repeat.cards, "gap": gap,
            "earlier": {
                "table": earlier_table, "shoe": earlier_shoe,
                "first": repeat.earlier_first, "last": repeat.earlier_last,
            },
            "text": text,
        }
