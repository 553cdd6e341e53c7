"""The store's reads, shared by both databases: facts, derived places, tails, shoes, quarantine.

Every read ends its transaction (PostgreSQL opens one for a SELECT), so that a reader
holds no snapshot between two calls. A database made before the ``views`` column
(:mod:`baccarat.floor.schema`) is read as it is: its places are all in ``derived``.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator, Sequence
from typing import Any, Final

from baccarat.floor.records import (
    DerivedSeq,
    LatestView,
    QuarantineTopic,
    ShoeStart,
    ShoeSummary,
    StoreError,
    TableTail,
    float_or_none,
    int_or_none,
    object_or_none,
    published,
)
from baccarat.floor.schema import MAX_ATTACHED, Layout, views_places


class SqlReads:
    """The queries both databases answer; ``mark`` is the driver's parameter placeholder."""

    mark = "?"
    _db: Any
    _layout_found: Layout | None = None

    def _q(self, sql: str) -> str:
        return sql.replace("?", self.mark)

    def _layout(self) -> Layout:
        """The columns of this database's ``messages``, as found once."""
        if self._layout_found is None:
            cursor = self._db.cursor()
            try:
                self._layout_found = Layout(self._columns(cursor))
            finally:
                cursor.close()
                self._db.rollback()
        return self._layout_found

    @staticmethod
    def _columns(cursor: Any) -> tuple[str, ...]:
        cursor.execute("SELECT * FROM messages WHERE 1 = 0")
        return tuple(str(column[0]).lower() for column in cursor.description)

    def _attached(self, cursor: Any, table: str, seq: int) -> DerivedSeq | None:
        """The place a row before ``seq`` keeps of it among its views, if one does."""
        if not self._layout().has_views:
            return None
        cursor.execute(
            self._q("SELECT seq, ts, views FROM messages WHERE tbl = ? AND seq >= ? AND seq < ?"
                    " AND views IS NOT NULL"), (table, seq - MAX_ATTACHED, seq),
        )
        for row_seq, ts, views in cursor.fetchall():
            for place in views_places(int(row_seq), float_or_none(ts), str(views)):
                if place.seq == seq:
                    return place
        return None

    def stored(
        self, table: str, until_seq: int | None = None, since_seq: int | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        """The table's stored messages (body, and its text as published), by ``seq``."""
        sql, params = _of_table("SELECT seq, ts, type, body FROM messages", table, until_seq,
                                since_seq)
        texts = [published(int(seq), float_or_none(ts), str(kind), str(body))
                 for seq, ts, kind, body in self._read(sql, params)]
        return [(json.loads(text), text) for text in texts]

    def links(self, table: str) -> list[tuple[int, int | None, bytes, str, bytes, bytes]]:
        """The table's chain rows by seq: seq, after, prev, key id, hash, signature."""
        rows = self._checked_read("SELECT seq, after, prev, key, hash, sig FROM chain"
                                  " WHERE tbl = ? ORDER BY seq", [table])
        return [(int(seq), int_or_none(after), bytes(prev), str(key), bytes(digest), bytes(sig))
                for seq, after, prev, key, digest, sig in rows]

    def tables(self) -> list[str]:
        """Every table with a message or a chain row stored, sorted."""
        rows = self._checked_read("SELECT DISTINCT tbl FROM messages UNION SELECT DISTINCT"
                                  " tbl FROM chain UNION SELECT DISTINCT tbl FROM derived", [])
        return sorted(str(row[0]) for row in rows)

    def derived(
        self, table: str, until_seq: int | None = None, since_seq: int | None = None
    ) -> list[DerivedSeq]:
        """The table's derived views not kept whole: (seq, topic, ts), by ``seq``.

        Those with a place of their own and those a fact's row keeps.
        """
        sql, params = _of_table("SELECT seq, topic, ts FROM derived", table, until_seq,
                                since_seq)
        own = [
            DerivedSeq(int(seq), str(topic), float_or_none(ts))
            for seq, topic, ts in self._read(sql, params)
        ]
        if not self._layout().has_views:
            return own
        since = None if since_seq is None else since_seq - MAX_ATTACHED
        sql, params = _of_table("SELECT seq, ts, views FROM messages", table, until_seq, since)
        attached = [
            place
            for seq, ts, views in self._read(sql.replace(" ORDER", " AND views IS NOT NULL ORDER"),
                                             params)
            for place in views_places(int(seq), float_or_none(ts), str(views))
            if (since_seq is None or place.seq >= since_seq)
            and (until_seq is None or place.seq <= until_seq)
        ]
        return list(heapq.merge(own, attached, key=lambda place: place.seq))

    def shoe_start(self, table: str) -> ShoeStart | None:
        """Where the table's newest stored shoe starts, or None if no message is stored."""
        first = self._read(
            "SELECT MIN(seq) FROM (SELECT MIN(seq) AS seq FROM messages WHERE tbl = ?"
            " UNION ALL SELECT MIN(seq) FROM derived WHERE tbl = ?) firsts", [table, table]
        )[0][0]
        if first is None:
            return None
        newest = self._read(
            "SELECT MIN(seq) FROM messages WHERE tbl = ? AND type = 'shoe' AND shoe ="
            " (SELECT MAX(shoe) FROM messages WHERE tbl = ? AND type = 'shoe')", [table, table]
        )[0][0]
        if newest is None:
            return ShoeStart(int(first), None, before=False)
        before = self._read(
            "SELECT COUNT(*) FROM messages WHERE tbl = ? AND type = 'shoe' AND seq < ?",
            [table, newest],
        )[0][0]
        return ShoeStart(int(first), int(newest), before=int(before) > 0)

    def latest(self, table: str | None = None) -> list[LatestView]:
        """The newest derived view of each table and topic, whole, by table then topic."""
        sql = "SELECT tbl, topic, seq, body FROM latest"
        params: list[Any] = []
        if table is not None:
            sql += " WHERE tbl = ?"
            params.append(table)
        return [
            LatestView(str(tbl), str(topic), int(seq), str(body))
            for tbl, topic, seq, body in self._read(sql + " ORDER BY tbl, topic", params)
        ]

    def seqs(self, table: str | None = None) -> Iterator[tuple[str, int]]:
        """(table, seq) of every message stored or recorded as derived, by table then seq."""
        where = "" if table is None else " WHERE tbl = ?"
        params = [] if table is None else [table]
        views = "views" if self._layout().has_views else "NULL"
        facts = self._read(f"SELECT tbl, seq, ts, {views} FROM messages{where}"  # noqa: S608
                           " ORDER BY tbl, seq", params)
        own = self._read(f"SELECT tbl, seq FROM derived{where} ORDER BY tbl, seq",  # noqa: S608
                         params)

        def kept() -> Iterator[tuple[str, int]]:
            for tbl, seq, ts, text in facts:
                yield str(tbl), int(seq)
                if text is not None:
                    for place in views_places(int(seq), float_or_none(ts), str(text)):
                        yield str(tbl), place.seq

        yield from heapq.merge(kept(), ((str(t), int(s)) for t, s in own))

    def _checked_read(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """:meth:`_read`, a driver's error given as :class:`StoreError` (the text says it)."""
        try:
            return self._read(sql, params)
        except Exception as exc:
            raise StoreError(f"{type(exc).__name__}: {exc}".strip()) from exc

    def _read(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        cursor = self._db.cursor()
        try:
            cursor.execute(self._q(sql), list(params))
            return list(cursor)
        finally:
            cursor.close()
            self._db.rollback()

    def messages(
        self,
        table: str | None = None,
        shoe: int | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(table, body) of the stored messages, by table then ``seq``."""
        where, params = [], []
        for column, op, value in (
            ("tbl", "=", table), ("shoe", "=", shoe), ("ts", ">=", since), ("ts", "<", until)
        ):
            if value is not None:
                where.append(f"{column} {op} ?")
                params.append(value)
        sql = "SELECT tbl, seq, ts, type, body FROM messages"
        if where:
            sql += " WHERE " + " AND ".join(where)
        cursor = self._db.cursor()
        try:
            cursor.execute(self._q(sql + " ORDER BY tbl, seq"), params)
            for tbl, seq, ts, kind, body in cursor:
                yield tbl, json.loads(published(int(seq), float_or_none(ts), str(kind), body))
        finally:
            cursor.close()
            self._db.rollback()  # end the read transaction (PostgreSQL opens one)

    def shoes(self, table: str, newest: int = 500) -> list[ShoeSummary]:
        """The table's ``newest`` shoes (by their first message), oldest first."""
        cursor = self._db.cursor()
        try:
            cursor.execute(
                self._q(
                    "SELECT shoe, COUNT(*), MIN(ts), MAX(ts) FROM messages"
                    " WHERE tbl = ? AND shoe IS NOT NULL GROUP BY shoe"
                    " ORDER BY MIN(seq) DESC LIMIT ?"
                ),
                (table, newest),
            )
            found = [
                ShoeSummary(int(shoe), int(count), float_or_none(first), float_or_none(last))
                for shoe, count, first, last in cursor
            ]
            return found[::-1]
        finally:
            cursor.close()
            self._db.rollback()

    def quarantined(self) -> list[tuple[str, str, bytes]]:
        """(topic, reason, payload) of every quarantined message, oldest first."""
        cursor = self._db.cursor()
        try:
            cursor.execute("SELECT topic, reason, payload FROM quarantine ORDER BY received")
            return [(topic, reason, bytes(payload)) for topic, reason, payload in cursor]
        finally:
            cursor.close()
            self._db.rollback()

    def quarantine_topics(self, most: int = 1000) -> list[QuarantineTopic]:
        """The quarantine by topic: the ``most`` topics quarantined most recently, newest first.

        Counted from every message ever quarantined (``quarantine_counts``), not only the
        sample of bodies kept; a database made before the counts, from its sample.
        """
        try:
            return self._quarantine_topics(most, "quarantine_counts")
        except Exception:
            return self._quarantine_topics(most, "quarantine")

    def _quarantine_topics(self, most: int, table: str) -> list[QuarantineTopic]:
        cursor = self._db.cursor()
        try:
            cursor.execute(
                self._q(_BY_TOPIC_COUNTED if table == "quarantine_counts" else _BY_TOPIC_KEPT),
                (most,),
            )
            found: dict[str, QuarantineTopic] = {}
            for topic, n, last, reason in cursor:
                if topic not in found:  # two rows at the same newest time: either reason
                    found[topic] = QuarantineTopic(topic, int(n), float(last), reason)
            return list(found.values())
        finally:
            cursor.close()
            self._db.rollback()

    def quarantine_counts(self) -> dict[tuple[str, str], int]:
        """Every message ever quarantined, counted by (topic, the reason's class)."""
        cursor = self._db.cursor()
        try:
            cursor.execute("SELECT topic, cause, n FROM quarantine_counts")
            return {(topic, cause): int(n) for topic, cause, n in cursor}
        finally:
            cursor.close()
            self._db.rollback()

    def tails(self) -> list[TableTail]:
        """Each table's newest stored message and latest status, by table."""
        cursor = self._db.cursor()
        try:
            views = "m.views" if self._layout().has_views else "NULL"
            cursor.execute(
                f"SELECT m.tbl, m.seq, m.ts, m.received, {views} FROM messages m JOIN"  # noqa: S608
                " (SELECT tbl, MAX(seq) AS seq FROM messages GROUP BY tbl) newest"
                " ON m.tbl = newest.tbl AND m.seq = newest.seq"
            )
            newest = {}
            for tbl, seq, ts, received, text in cursor.fetchall():
                places = [] if text is None else views_places(int(seq), float_or_none(ts), text)
                newest[tbl] = (max([int(seq), *(p.seq for p in places)]), float(received))
            cursor.execute("SELECT tbl, seq, received FROM latest")
            for tbl, seq, received in cursor:  # a derived view may be the newest of all
                if tbl not in newest or int(seq) > newest[tbl][0]:
                    newest[tbl] = (int(seq), float(received))
            cursor.execute("SELECT tbl, received, body FROM status")
            statuses = {tbl: (float(received), object_or_none(body))
                        for tbl, received, body in cursor}
        finally:
            cursor.close()
            self._db.rollback()
        tails = []
        for table in sorted(newest.keys() | statuses.keys()):
            seq, received = newest.get(table, (None, None))
            status_received, status = statuses.get(table, (None, None))
            tails.append(TableTail(table, seq, received, status, status_received))
        return tails

    def count(self) -> int:
        """How many messages are stored."""
        cursor = self._db.cursor()
        try:
            cursor.execute("SELECT COUNT(*) FROM messages")
            return int(cursor.fetchone()[0])
        finally:
            cursor.close()
            self._db.rollback()


def _of_table(
    select: str, table: str, until_seq: int | None, since_seq: int | None
) -> tuple[str, list[Any]]:
    """``select`` of one table's rows from ``since_seq`` to ``until_seq``, by ``seq``."""
    sql, params = f"{select} WHERE tbl = ?", list[Any]([table])
    for op, value in ((">=", since_seq), ("<=", until_seq)):
        if value is not None:
            sql += f" AND seq {op} ?"
            params.append(value)
    return sql + " ORDER BY seq", params


_BY_TOPIC_COUNTED: Final = (
    "SELECT q.topic, g.n, g.newest, q.reason FROM quarantine_counts q JOIN"
    " (SELECT topic, SUM(n) AS n, MAX(newest) AS newest FROM quarantine_counts"
    "  GROUP BY topic ORDER BY MAX(newest) DESC LIMIT ?) g"
    " ON q.topic = g.topic AND q.newest = g.newest ORDER BY g.newest DESC, q.topic"
)
"""The quarantine by topic from the counts of every message ever quarantined."""
_BY_TOPIC_KEPT: Final = (
    "SELECT q.topic, g.n, g.newest, q.reason FROM quarantine q JOIN"
    " (SELECT topic, COUNT(*) AS n, MAX(received) AS newest FROM quarantine"
    "  GROUP BY topic ORDER BY MAX(received) DESC LIMIT ?) g"
    " ON q.topic = g.topic AND q.received = g.newest ORDER BY g.newest DESC, q.topic"
)
"""The same from the bodies kept, in a database made before the counts."""
