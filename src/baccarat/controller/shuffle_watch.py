"""The table's shuffle check: the shoe in play against the table's last shoes.

Every card drawn goes into a :class:`~baccarat.rules.shuffle_match.ShuffleIndex` that
holds the table's last ``[shuffle] shoes`` shoes, read from the journal's older files at
start (one file per shoe). A run of :data:`~baccarat.rules.shuffle_match.RUN` cards
that repeats an earlier shoe's order becomes a
:class:`~baccarat.controller.engine.inputs.ShuffleSuspect` input, which the table
journals and feeds the engine like any other (the engine raises the notice): the earlier
shoes are not among the engine's inputs, so the finding must be one, for a replay of the
journal to give the same notice. Once per earlier shoe in a shoe; a finding made while
the journal is replayed at start is journaled after the replay unless the journal
already holds it (the daemon stopped between the card and its finding).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import DrawCard, Input, ShuffleSuspect
from baccarat.controller.journal.reader import (
    JournalError,
    header_profile,
    journal_files,
    read_journal_file,
)
from baccarat.controller.journal.records import Header, Record, file_name
from baccarat.rules.shuffle_match import Repeat, ShuffleIndex

log = logging.getLogger(__name__)


class ShuffleWatch:
    """The shoe in play checked against the table's last ``shoes`` shoes (0: no check)."""

    def __init__(self, table: str, shoes: int) -> None:
        self.table = table
        self.index = ShuffleIndex(shoes + 1) if shoes > 0 else None  # and the shoe in play
        self._slot: int | None = None
        self._shoe: int | None = None
        self._named: set[int] = set()
        """Earlier shoes already named in the shoe in play (by the journal, or by us)."""
        self._found: list[ShuffleSuspect] = []
        """Findings made while the journal was replayed, not yet journaled."""

    def load(self, folder: Path, newest: Header | None, shoes: int) -> int:
        """Read the shoes of the journal's files before ``newest``: at most ``shoes`` files.

        A file that cannot be read, or has no header, is skipped with a log line: the
        check then has fewer shoes to compare with, nothing else. Returns the shoes held.
        """
        if self.index is None or newest is None:
            return 0
        older = sorted(n for n in journal_files(folder) if n < newest.file)[-shoes:]
        held = 0
        for number in older:
            path = folder / file_name(number)
            opened = _replayable(path)
            if isinstance(opened, str):
                log.warning("shuffle check: %s left out: %s", path.name, opened)
                continue
            records, engine = opened
            following = self._first_record_after(folder, number, newest)
            for record_number, inp in records:
                if following is not None and record_number >= following:
                    break  # the next file's first record repeats it
                engine.feed(inp)
                self._take(inp, engine, remember_only=True)
            held += 1
        self._close()
        return held

    def _first_record_after(self, folder: Path, number: int, newest: Header) -> int | None:
        if number + 1 == newest.file:
            return newest.first_record
        try:
            header = read_journal_file(folder / file_name(number + 1)).header
        except JournalError:
            return None
        return header.first_record if header is not None else None

    def observe(
        self, inp: Input, engine: Engine, *, replaying: bool = False
    ) -> ShuffleSuspect | None:
        """After the engine took ``inp``: a finding to journal and feed now, if any.

        ``replaying``: the journal's records at start; a finding is kept for
        :meth:`take_found` instead, since the journal may hold it already.
        """
        if self.index is None:
            return None
        finding = self._take(inp, engine)
        if finding is None:
            return None
        if replaying:
            self._found.append(finding)
            return None
        self._named.add(finding.shoe)
        return finding

    def take_found(self, ts: float) -> list[ShuffleSuspect]:
        """The findings of the replay that the journal does not hold, at ``ts``; once."""
        found = [replace(f, ts=ts) for f in self._found if f.shoe not in self._named]
        self._named.update(f.shoe for f in found)
        self._found = []
        return found

    def _take(
        self, inp: Input, engine: Engine, *, remember_only: bool = False
    ) -> ShuffleSuspect | None:
        assert self.index is not None
        shoe = engine.shoe.number if engine.shoe is not None else None
        if shoe != self._shoe:
            if self._found:
                log.warning("shuffle check: %d finding(s) of shoe %s dropped: the journal"
                            " went on to another shoe", len(self._found), self._shoe)
                self._found = []
            self._close()
            self._shoe = shoe
            self._slot = self.index.open_shoe(shoe) if shoe is not None else None
        if isinstance(inp, ShuffleSuspect) and inp.table == self.table:
            self._named.add(inp.shoe)
            return None
        if not isinstance(inp, DrawCard) or self._slot is None:
            return None
        repeat = self.index.add(self._slot, inp.card.index if inp.card is not None else None)
        if repeat is None or remember_only or not isinstance(repeat.earlier, int):
            return None
        if repeat.earlier in self._named:
            return None
        return self._suspect(repeat, inp.ts)

    def _suspect(self, repeat: Repeat, ts: float | None) -> ShuffleSuspect:
        gap = "none" if repeat.gap is None else f"{repeat.gap.kind}:{repeat.gap.position}"
        assert isinstance(repeat.earlier, int)
        log.warning(
            "shuffle check: cards %d-%d of shoe %s repeat cards %d-%d of shoe %d",
            repeat.first, repeat.last, self._shoe, repeat.earlier_first, repeat.earlier_last,
            repeat.earlier,
        )
        return ShuffleSuspect(
            table=self.table, shoe=repeat.earlier,
            earlier_first=repeat.earlier_first, earlier_last=repeat.earlier_last,
            first=repeat.first, last=repeat.last, cards=repeat.cards, gap=gap, ts=ts,
        )

    def _close(self) -> None:
        if self.index is not None and self._slot is not None:
            self.index.close_shoe(self._slot)
        self._slot, self._shoe = None, None
        self._named = set()


def _replayable(path: Path) -> tuple[list[Record], Engine] | str:
    """A file's records and an engine to replay them with, or why it cannot be replayed."""
    try:
        found = read_journal_file(path)
    except JournalError as exc:
        return str(exc)
    if found.header is None:
        return "no valid header"
    try:
        profile = header_profile(found.header)
    except ValueError as exc:
        return str(exc)
    return found.records, Engine.resume(profile, found.header.counters, roads=False)
