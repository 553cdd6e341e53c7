"""The store's reads, shared by both databases: facts, derived places, tails, shoes, quarantine.

Every read ends its transaction (PostgreSQL opens one for a SELECT), so that a reader
holds no snapshot between two calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from baccarat.floor.records import (
    DerivedSeq,
    LatestView,
    QuarantineTopic,
    ShoeSummary,
    TableTail,
    float_or_none,
    object_or_none,
)


class SqlReads:
    """The queries both databases answer; ``mark`` is the driver's parameter placeholder."""

    mark = "?"
    _db: Any

    def _q(self, sql: str) -> str:
        return sql.replace("?", self.mark)

    def facts(self, table: str, until_seq: int | None = None) -> list[dict[str, Any]]:
        """The table's stored bodies (facts, and views kept whole), by ``seq``, to ``until_seq``."""
        sql = "SELECT body FROM messages WHERE tbl = ?"
        params: list[Any] = [table]
        if until_seq is not None:
            sql += " AND seq <= ?"
            params.append(until_seq)
        return [json.loads(body) for (body,) in self._read(sql + " ORDER BY seq", params)]

    def stored(
        self, table: str, until_seq: int | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        """The table's stored messages (body, and its text as published), by ``seq``."""
        sql = "SELECT body FROM messages WHERE tbl = ?"
        params: list[Any] = [table]
        if until_seq is not None:
            sql += " AND seq <= ?"
            params.append(until_seq)
        return [(json.loads(body), str(body))
                for (body,) in self._read(sql + " ORDER BY seq", params)]

    def derived(self, table: str, until_seq: int | None = None) -> list[DerivedSeq]:
        """The table's derived views not kept whole: (seq, topic, ts), by ``seq``."""
        sql = "SELECT seq, topic, ts FROM derived WHERE tbl = ?"
        params: list[Any] = [table]
        if until_seq is not None:
            sql += " AND seq <= ?"
            params.append(until_seq)
        return [
            DerivedSeq(int(seq), str(topic), float_or_none(ts))
            for seq, topic, ts in self._read(sql + " ORDER BY seq", params)
        ]

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
        sql = (f"SELECT tbl, seq FROM messages{where} UNION ALL"  # noqa: S608 - no input in it
               f" SELECT tbl, seq FROM derived{where} ORDER BY 1, 2")
        for tbl, seq in self._read(sql, params * 2):
            yield str(tbl), int(seq)

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
        sql = "SELECT tbl, body FROM messages"
        if where:
            sql += " WHERE " + " AND ".join(where)
        cursor = self._db.cursor()
        try:
            cursor.execute(self._q(sql + " ORDER BY tbl, seq"), params)
            for tbl, body in cursor:
                yield tbl, json.loads(body)
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
        """The quarantine by topic: the ``most`` topics quarantined most recently, newest first."""
        cursor = self._db.cursor()
        try:
            cursor.execute(
                self._q(
                    "SELECT q.topic, g.n, g.newest, q.reason FROM quarantine q JOIN"
                    " (SELECT topic, COUNT(*) AS n, MAX(received) AS newest FROM quarantine"
                    "  GROUP BY topic ORDER BY MAX(received) DESC LIMIT ?) g"
                    " ON q.topic = g.topic AND q.received = g.newest"
                    " ORDER BY g.newest DESC, q.topic"
                ),
                (most,),
            )
            found: dict[str, QuarantineTopic] = {}
            for topic, count, newest, reason in cursor:
                if topic not in found:  # two rows at the same newest time: either reason
                    found[topic] = QuarantineTopic(topic, int(count), float(newest), reason)
            return list(found.values())
        finally:
            cursor.close()
            self._db.rollback()

    def tails(self) -> list[TableTail]:
        """Each table's newest stored message and latest status, by table."""
        cursor = self._db.cursor()
        try:
            cursor.execute(
                "SELECT m.tbl, m.seq, m.received FROM messages m JOIN"
                " (SELECT tbl, MAX(seq) AS seq FROM messages GROUP BY tbl) newest"
                " ON m.tbl = newest.tbl AND m.seq = newest.seq"
            )
            newest = {tbl: (int(seq), float(received)) for tbl, seq, received in cursor}
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
