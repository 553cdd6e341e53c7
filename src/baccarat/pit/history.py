"""The pit console's history view: ``GET /history.json`` from the floor recorder's database.

``/history.json?table=T07&shoe=3`` answers the rounds that ``baccarat history --db URL
--table T07 --shoe 3`` prints, built by the same functions (:mod:`baccarat.floor.history`),
as JSON::

    {"table": "T07", "shoe": 3, "since": null, "until": null, "limit": 1000,
     "shoes": [{"shoe": 3, "messages": 412, "first": 1764612345.2, "last": ...}, ...],
     "rounds": [{"table": "T07", "shoe": 3, "round": 1, "cards": ["P1 9S", ...],
                 "outcome": "banker", "alarms": ["result_mismatch #4 settled by declare
                 (pit/pit-ana)"], ...}, ...]}

``&format=csv`` gives the same CSV as ``baccarat history --csv``. ``since`` and ``until``
are ISO times (UTC unless they say) or Unix seconds, ``until`` excluded. ``limit`` (0 to
:data:`MAX_ROUNDS`, that by default) bounds the rounds: a selection with more is refused
with 400 and a reason (narrow it by shoe or time), so a page never gets a truncated
history unawares; ``limit=0`` answers only the table's shoes (its newest
:data:`MAX_SHOES`; an older shoe is still read with ``shoe=N``). A selection that would read
more than :data:`MAX_MESSAGES` messages is refused the same way.

Every parameter is checked before the database is touched and passed to it as a query
parameter, never spliced into SQL. The database is read in a worker thread (at most
:data:`READERS` at once), each request on its own connection, so the event loop that serves
the console's files never waits on it. It only reads: a read-only database account is
enough, and a SQLite file is never made here (the recorder makes it).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from baccarat.boards.web_server import Response
from baccarat.floor.history import RoundHistory, parse_time, rounds, to_csv
from baccarat.floor.store import StoreError, open_store

HISTORY_PATH: Final = "/history.json"
MAX_ROUNDS: Final = 1000
"""The most rounds one answer holds (about a dozen eight-deck shoes)."""
MAX_SHOES: Final = 500
"""The most shoes one answer lists: the table's newest (an older one is still read by number)."""
MAX_MESSAGES: Final = 200_000
"""The most messages one answer reads from the database."""
READERS: Final = 2
"""Requests reading the database at the same time; the others wait their turn."""
PARAMETERS: Final = frozenset({"table", "shoe", "since", "until", "format", "limit"})
TABLE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
JSON_TYPE: Final = "application/json"
CSV_TYPE: Final = "text/csv; charset=utf-8"


class BadQueryError(ValueError):
    """A history request's parameters are wrong; the text says which and why."""


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """What one ``/history.json`` request asks for."""

    table: str
    shoe: int | None = None
    since: float | None = None
    until: float | None = None
    csv: bool = False
    limit: int = MAX_ROUNDS

    @classmethod
    def parse(cls, query: str) -> HistoryQuery:
        """The request's query string, checked; :class:`BadQueryError` says what is wrong."""
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError:
            raise BadQueryError(f"not a query string: {query!r}") from None
        given: dict[str, str] = {}
        for name, value in pairs:
            if name not in PARAMETERS:
                known = ", ".join(sorted(PARAMETERS))
                raise BadQueryError(f"unknown parameter {name!r} (known: {known})")
            if name in given:
                raise BadQueryError(f"parameter {name!r} given twice")
            given[name] = value
        table = given.get("table")
        if table is None:
            raise BadQueryError("missing parameter 'table'")
        if not TABLE_NAME.fullmatch(table):
            raise BadQueryError(f"table: not a table name: {table!r}")
        since = _time("since", given.get("since"))
        until = _time("until", given.get("until"))
        if since is not None and until is not None and until <= since:
            raise BadQueryError("until must be after since")
        form = given.get("format", "json")
        if form not in ("json", "csv"):
            raise BadQueryError(f"format: json or csv, not {form!r}")
        limit = _whole("limit", given.get("limit"), MAX_ROUNDS, MAX_ROUNDS)
        assert limit is not None
        if limit == 0 and form == "csv":
            raise BadQueryError("limit=0 answers only the shoes, in JSON: not with format=csv")
        return cls(
            table=table,
            shoe=_whole("shoe", given.get("shoe"), 10**12),
            since=since,
            until=until,
            csv=form == "csv",
            limit=limit,
        )


def _whole(name: str, text: str | None, most: int, default: int | None = None) -> int | None:
    if text is None:
        return default
    if not text.isascii() or not text.isdigit() or int(text) > most:
        raise BadQueryError(f"{name}: a whole number from 0 to {most}, not {text!r}")
    return int(text)


def _time(name: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return parse_time(text)
    except ValueError as exc:
        raise BadQueryError(f"{name}: {exc}") from None


class History:
    """Answers ``/history.json`` from the database at ``db`` (a path or a URL).

    With ``db`` None every answer says that no database is configured.
    """

    def __init__(self, db: str | None) -> None:
        self.db = db
        self._readers = asyncio.Semaphore(READERS)

    async def answer(self, target: str) -> Response:
        """The response to ``GET`` of ``target`` (``/history.json?...``)."""
        if self.db is None:
            return _error(404, "history not configured: start baccarat pit with --db URL")
        try:
            query = HistoryQuery.parse(urlsplit(target).query)
        except BadQueryError as exc:
            return _error(400, str(exc))
        async with self._readers:
            try:
                return await asyncio.to_thread(self.read, query)
            except StoreError as exc:
                return _error(503, f"history database: {exc}")
            except BadQueryError as exc:
                return _error(400, str(exc))

    def read(self, query: HistoryQuery) -> Response:
        """Read the database and build the answer (blocking: in a worker thread)."""
        assert self.db is not None
        store = open_store(self.db, create=False)
        try:
            shoes = store.shoes(query.table, MAX_SHOES)
            found: list[RoundHistory] = []
            if query.limit > 0:
                messages = store.messages(query.table, query.shoe, query.since, query.until)
                found = list(rounds(_at_most(messages, MAX_MESSAGES)))
        except StoreError:
            raise
        except Exception as exc:  # the driver's errors (sqlite3, psycopg): said
            raise StoreError(f"cannot read: {exc}") from None
        finally:
            store.close()
        if len(found) > query.limit:
            raise BadQueryError(
                f"{len(found)} rounds, more than the limit of {query.limit}:"
                " narrow it with shoe= or since=/until="
            )
        if query.csv:
            return Response(200, to_csv(found).encode(), CSV_TYPE)
        body = {
            "table": query.table,
            "shoe": query.shoe,
            "since": query.since,
            "until": query.until,
            "limit": query.limit,
            "shoes": [
                {"shoe": s.shoe, "messages": s.messages, "first": s.first, "last": s.last}
                for s in shoes
            ],
            "rounds": [rnd.to_json() for rnd in found],
        }
        return Response(200, json.dumps(body).encode(), JSON_TYPE)


def _at_most(
    messages: Iterator[tuple[str, dict[str, Any]]], most: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    for number, message in enumerate(messages, start=1):
        if number > most:
            raise BadQueryError(
                f"more than {most} messages to read: narrow it with shoe= or since=/until="
            )
        yield message


def _error(status: int, reason: str) -> Response:
    return Response(status, json.dumps({"error": reason}).encode() + b"\n", JSON_TYPE)
