"""``baccarat verify --db``: each table's chain checked in the floor's database, offline.

Every event of a table, in ``seq`` order, with its body as the table published it (a
fact's stored body, or a derived view made again from the facts before it where only its
place is kept: :mod:`baccarat.floor.derived`) and its row in ``chain``: the stored hash
must be the hash of the body, the signature must verify under a key the floor knows for
that table, and each event must follow the one before (its ``prev`` is that event's hash),
or follow an earlier one and name the events between as lost (docs/record.md). The first
break of each table is reported: its seq and why.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from baccarat.chain import Break, Checker, Keys, Link, Seal, lost_range
from baccarat.floor.derived import TableViews, _merged
from baccarat.floor.records import Store


@dataclass(slots=True)
class TableReport:
    """What the check of one table found."""

    table: str
    events: int = 0
    first: int | None = None
    last: int | None = None
    starts: int = 0
    broken: Break | None = None


@dataclass(slots=True)
class StoreReport:
    """Every table's report."""

    tables: list[TableReport] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        """No table's chain is broken."""
        return all(t.broken is None for t in self.tables)


def events(store: Store, table: str) -> Iterator[tuple[int, dict[str, object], bytes | None]]:
    """(seq, body, text as published) of every event of a table, by seq (None: not made)."""
    places = store.derived(table)
    pending = iter(places)
    views: TableViews | None = None
    for body, text in _merged(store.stored(table), pending, next(pending, None)):
        if views is None:
            views = TableViews(from_start=body["seq"] == 1)
        made = views.take(body, text)
        shown = text if text is not None else made
        yield int(body["seq"]), dict(body), None if shown is None else shown.encode()


def verify_table(store: Store, table: str, keys: Keys) -> TableReport:
    """Check one table's chain in the store; the report names the first break."""
    report = TableReport(table)
    checker = Checker(table, keys)
    links = {row[0]: row for row in store.links(table)}
    seen: set[int] = set()
    for seq, body, text in events(store, table):
        seen.add(seq)
        if report.first is None:
            report.first = seq
        report.last = seq
        row = links.get(seq)
        if row is None:
            report.broken = Break(table, seq, "no chain row: the event's signature is not stored")
            return report
        _, after, prev, key, digest, sig = row
        head = checker.head
        if head is not None and seq != head.seq + 1 and after is None:
            report.broken = Break(table, seq, f"seq {head.seq + 1} to {seq - 1} missing: the "
                                              f"record lacks {seq - head.seq - 1} event(s)")
            return report
        if text is None:
            report.broken = Break(table, seq, "its body cannot be made again from the stored "
                                              "facts before it: a fact was changed or deleted")
            return report
        link = Link(seq, text, Seal(prev, key, sig, after), digest, lost_range(body))
        broken = checker.check(link)
        if broken is not None:
            report.broken = broken
            return report
    unnamed = checker.finish()
    if unnamed is not None and report.last is not None:
        report.broken = Break(table, checker.head.seq if checker.head else report.last,
                              unnamed)
        return report
    orphans = sorted(set(links) - seen)
    if orphans:
        report.broken = Break(table, orphans[0], "a chain row without its message: the "
                                                 "message was deleted")
        return report
    report.events = checker.events
    report.starts = checker.starts
    return report


def verify_store(store: Store, keys: Keys, table: str | None = None) -> StoreReport:
    """Check every table of the store (or one)."""
    tables = [table] if table is not None else store.tables()
    return StoreReport([verify_table(store, name, keys) for name in tables])
