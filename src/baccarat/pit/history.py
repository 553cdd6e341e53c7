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

Every request needs a history login (:mod:`baccarat.pit.access`): ``POST /history/login``
with the operator's broker account in ``Authorization: Basic``, checked by the broker,
answers a token (an HttpOnly cookie, or ``Authorization: Bearer`` for a script); without
one ``/history.json`` is 401, and a table whose ``{prefix}/{table}/result`` the history
ACL does not let the account read is 403. Every answer, given or refused, is one line on
the ``baccarat.pit`` logger (:func:`audit`): who, from where, which table, shoe and time
range, how many rounds, the status. The password is never logged.

Every parameter is checked (whole numbers in range and at most 13 digits, finite times
from 1970 to 9999, table names by the daemon's rule, bounded lengths) before the database
is touched and passed to it as a query
parameter, never spliced into SQL. The database is read in a worker thread (at most
:data:`READERS` at once), each request on its own connection, so the event loop that serves
the console's files never waits on it. It only reads: a read-only database account is
enough, and a SQLite file is never made here (the recorder makes it). The answer is
always JSON (``allow_nan=False``; a time the database holds as NaN or infinity is
``null``), a 500 with a reason and one log line if anything fails.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from baccarat.boards.web_server import Request, Response
from baccarat.errors import BaccaratError
from baccarat.floor.history import RoundHistory, parse_time, rounds, to_csv
from baccarat.floor.store import QuarantineTopic, Store, StoreError, open_store
from baccarat.pit.access import (
    AclError,
    BrokerLogin,
    FailedLogins,
    LoginUnavailableError,
    ReadAcl,
    Sessions,
    basic_credentials,
)

log = logging.getLogger("baccarat.pit")

HISTORY_PATH: Final = "/history.json"
LOGIN_PATH: Final = "/history/login"
LOGOUT_PATH: Final = "/history/logout"
QUARANTINE_PATH: Final = "/history/quarantine.json"
MAX_QUARANTINE_TOPICS: Final = 1000
"""The most topics of the quarantine read for one answer: those quarantined most recently."""
COOKIE: Final = "baccarat_pit_history"
"""The cookie that carries the history token (HttpOnly, SameSite=Strict)."""
MAX_ROUNDS: Final = 1000
"""The most rounds one answer holds (about a dozen eight-deck shoes)."""
MAX_SHOES: Final = 500
"""The most shoes one answer lists: the table's newest (an older one is still read by number)."""
MAX_MESSAGES: Final = 200_000
"""The most messages one answer reads from the database."""
MAX_NUMBER: Final = 10**12
"""The largest shoe number asked for."""
MAX_QUERY: Final = 8192
"""The longest query string taken, in characters (each value is bounded on its own)."""
MAX_TIME_TEXT: Final = 64
LATEST: Final = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp()
"""The latest time asked for (the end of year 9999); the earliest is 0, 1970."""
SHOWN: Final = 40
"""Characters of a wrong value repeated in a reason."""
READERS: Final = 2
"""Requests reading the database at the same time; the others wait their turn."""
PARAMETERS: Final = frozenset({"table", "shoe", "since", "until", "format", "limit"})
TABLE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A table's name: the daemon's rule (``TABLE_ID`` of :mod:`baccarat.controller.config`)."""
JSON_TYPE: Final = "application/json"
CSV_TYPE: Final = "text/csv; charset=utf-8"
CHALLENGE: Final = ("WWW-Authenticate", 'Bearer realm="baccarat pit history"')


class BadQueryError(BaccaratError, ValueError):
    """A history request's parameters are wrong; the text says which and why."""


def shown(text: str) -> str:
    """``text`` quoted for a reason, cut to :data:`SHOWN` characters."""
    return repr(text) if len(text) <= SHOWN else repr(text[:SHOWN]) + f"... ({len(text)} chars)"


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
        if len(query) > MAX_QUERY:
            raise BadQueryError(f"query: longer than {MAX_QUERY} characters")
        if query.count("&") >= len(PARAMETERS):
            raise BadQueryError(f"query: more than {len(PARAMETERS)} parameters")
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError:
            raise BadQueryError(f"not a query string: {shown(query)}") from None
        given: dict[str, str] = {}
        for name, value in pairs:
            if name not in PARAMETERS:
                known = ", ".join(sorted(PARAMETERS))
                raise BadQueryError(f"unknown parameter {shown(name)} (known: {known})")
            if name in given:
                raise BadQueryError(f"parameter {name!r} given twice")
            given[name] = value
        table = given.get("table")
        if table is None:
            raise BadQueryError("missing parameter 'table'")
        if not TABLE_NAME.fullmatch(table):
            raise BadQueryError(f"table: not a table name: {shown(table)}")
        since = _time("since", given.get("since"))
        until = _time("until", given.get("until"))
        if since is not None and until is not None and until <= since:
            raise BadQueryError("until must be after since")
        form = given.get("format", "json")
        if form not in ("json", "csv"):
            raise BadQueryError(f"format: json or csv, not {shown(form)}")
        limit = _whole("limit", given.get("limit"), MAX_ROUNDS, MAX_ROUNDS)
        assert limit is not None
        if limit == 0 and form == "csv":
            raise BadQueryError("limit=0 answers only the shoes, in JSON: not with format=csv")
        return cls(
            table=table,
            shoe=_whole("shoe", given.get("shoe"), MAX_NUMBER),
            since=since,
            until=until,
            csv=form == "csv",
            limit=limit,
        )

    def fields(self) -> dict[str, object]:
        """What was asked, for the log line."""
        return {
            "table": self.table, "shoe": self.shoe, "since": _iso(self.since),
            "until": _iso(self.until), "format": "csv" if self.csv else "json",
            "limit": self.limit,
        }


def _whole(name: str, text: str | None, most: int, default: int | None = None) -> int | None:
    if text is None:
        return default
    if (
        not text.isascii() or not text.isdigit() or len(text) > len(str(most))
        or int(text) > most
    ):
        raise BadQueryError(f"{name}: a whole number from 0 to {most}, not {shown(text)}")
    return int(text)


def _time(name: str, text: str | None) -> float | None:
    if text is None:
        return None
    if len(text) > MAX_TIME_TEXT:
        raise BadQueryError(f"{name}: longer than {MAX_TIME_TEXT} characters")
    try:
        moment = parse_time(text)
    except (ValueError, OverflowError) as exc:
        raise BadQueryError(f"{name}: {exc}") from None
    if not math.isfinite(moment) or not 0 <= moment <= LATEST:
        raise BadQueryError(
            f"{name}: a time from 1970 to 9999 (ISO or Unix seconds), not {shown(text)}"
        )
    return moment


def _iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return dt.datetime.fromtimestamp(moment, dt.UTC).isoformat().replace("+00:00", "Z")


@dataclass
class HistoryAccess:
    """Who may read: logins checked by ``login`` (the broker), read rights from ``acl``."""

    login: BrokerLogin
    acl: ReadAcl
    prefix: str
    sessions: Sessions = field(default_factory=Sessions)
    failures: FailedLogins = field(default_factory=FailedLogins)

    def topic(self, table: str) -> str:
        """The topic whose read right is the right to read ``table``'s history."""
        return f"{self.prefix}/{table}/result"


class History:
    """Answers ``/history.json`` and the history login from the database at ``db``.

    With ``db`` None every answer says that no database is configured; with a database,
    ``access`` says who may read it.
    """

    def __init__(self, db: str | None, access: HistoryAccess | None = None) -> None:
        if db is not None and access is None:
            raise ValueError("a history database needs its access: a broker and an ACL")
        self.db = db
        self.access = access
        self._readers = asyncio.Semaphore(READERS)

    async def answer(self, request: Request) -> Response:
        """The response to ``GET`` of ``/history.json?...``, logged."""
        client = request.client
        if self.db is None or self.access is None:
            return error(404, "history not configured: start baccarat pit with --db URL")
        token = _token(request)
        operator = None if token is None else self.access.sessions.operator(token)
        if operator is None:
            reason = (
                "not logged in to the history: log in to the console again"
                if token is None
                else "history login expired or unknown: log in to the console again"
            )
            audit("refused", operator=None, client=client, target=_cut(request.target),
                  status=401, reason=reason)
            return error(401, reason, CHALLENGE)
        try:
            query = HistoryQuery.parse(urlsplit(request.target).query)
        except BadQueryError as exc:
            audit("refused", operator=operator, client=client, target=_cut(request.target),
                  status=400, reason=str(exc))
            return error(400, str(exc))
        asked = {"operator": operator, "client": client, **query.fields()}
        try:
            allowed = await asyncio.to_thread(
                self.access.acl.may_read, operator, self.access.topic(query.table)
            )
        except AclError as exc:
            audit("refused", **asked, status=503, reason=str(exc))
            return error(503, str(exc))
        if not allowed:
            reason = (
                f"{operator} may not read the history of {query.table}: the history ACL"
                f" gives it no read right on {self.access.topic(query.table)}"
            )
            audit("refused", **asked, status=403, reason=reason)
            return error(403, reason)
        async with self._readers:
            try:
                response, count = await asyncio.to_thread(self.read, query)
            except StoreError as exc:
                response, count = error(503, f"history database: {exc}"), None
            except BadQueryError as exc:
                response, count = error(400, str(exc)), None
        if response.status == 200:
            audit("read", **asked, rounds=count, status=200)
        else:
            audit("refused", **asked, status=response.status,
                  reason=json.loads(response.body)["error"])
        return response

    async def login(self, request: Request) -> Response:
        """``POST /history/login`` with ``Authorization: Basic``: a token if the broker agrees."""
        if self.db is None or self.access is None:
            return _json(200, {"history": False})
        client = request.client
        failures = self.access.failures
        wait = failures.wait(client)
        if wait > 0:
            reason = f"too many failed logins from {client}: try again in {math.ceil(wait)} s"
            audit("login refused", operator=None, client=client, status=429, reason=reason)
            return error(429, reason, ("Retry-After", str(math.ceil(wait))))
        credentials = basic_credentials(request.headers.get("authorization"))
        if credentials is None:
            reason = "log in with your broker account (Authorization: Basic)"
            audit("login refused", operator=None, client=client, status=401, reason=reason)
            return error(401, reason, CHALLENGE)
        username, password = credentials
        failures.attempt(client)
        try:
            taken = await self.access.login.check(username, password)
        except LoginUnavailableError as exc:
            failures.succeeded(client)  # nothing was learnt about the password
            audit("login refused", operator=username, client=client, status=503,
                  reason=str(exc))
            return error(503, f"cannot check the login: {exc}")
        if not taken:
            reason = "wrong username or password: the broker refused the login"
            audit("login refused", operator=username, client=client, status=401,
                  reason=reason)
            return error(401, reason, CHALLENGE)
        failures.succeeded(client)
        token = self.access.sessions.issue(username)
        audit("login", operator=username, client=client, status=200)
        body = {"history": True, "operator": username, "token": token,
                "idle": self.access.sessions.idle, "lifetime": self.access.sessions.lifetime}
        lifetime = int(self.access.sessions.lifetime)
        return _json(200, body, ("Set-Cookie", _cookie(token, lifetime)))

    def logout(self, request: Request) -> Response:
        """``POST /history/logout``: the token is forgotten, the cookie cleared."""
        token = _token(request)
        operator = None
        if token is not None and self.access is not None:
            operator = self.access.sessions.operator(token)
            self.access.sessions.revoke(token)
        if operator is not None:
            audit("logout", operator=operator, client=request.client, status=200)
        return _json(200, {"history": self.db is not None}, ("Set-Cookie", _cookie("", 0)))

    async def quarantine(self, request: Request) -> Response:
        """The response to ``GET /history/quarantine.json``: what the recorder quarantined.

        Counted over the topics the history ACL lets the operator read (a reason may quote
        the body); refusals are logged as warnings, answers at debug level (the page asks
        every few seconds).
        """
        if self.db is None or self.access is None:
            return error(404, "history not configured: start baccarat pit with --db URL")
        client = request.client
        token = _token(request)
        operator = None if token is None else self.access.sessions.operator(token)
        if operator is None:
            reason = "not logged in to the history: log in to the console again"
            audit("refused", operator=None, client=client, target=QUARANTINE_PATH,
                  status=401, reason=reason)
            return error(401, reason, CHALLENGE)
        async with self._readers:
            try:
                body = await asyncio.to_thread(self.read_quarantine, operator)
            except (StoreError, AclError) as exc:
                reason = f"history database: {exc}" if isinstance(exc, StoreError) else str(exc)
                audit("refused", operator=operator, client=client, target=QUARANTINE_PATH,
                      status=503, reason=reason)
                return error(503, reason)
        log.debug("history quarantine: operator=%s client=%s quarantined=%s",
                  _field(operator), _field(client), body["quarantined"])
        return _json(200, body)

    def read_quarantine(self, operator: str) -> dict[str, Any]:
        """What the quarantine holds on the topics ``operator`` may read (blocking)."""
        assert self.db is not None
        assert self.access is not None
        with _reading(self.db) as store:
            topics = store.quarantine_topics(MAX_QUARANTINE_TOPICS)
        rules = self.access.acl.rules()
        readable = [t for t in topics if rules.may_read(operator, t.topic)]
        newest: QuarantineTopic | None = readable[0] if readable else None
        return {
            "quarantined": sum(t.count for t in readable),
            "topics": len(readable),
            "more": len(topics) >= MAX_QUARANTINE_TOPICS,
            "newest": None if newest is None else {
                "topic": newest.topic, "reason": newest.reason, "received": newest.newest,
            },
        }

    def read(self, query: HistoryQuery) -> tuple[Response, int]:
        """Read the database and build the answer, with its rounds (blocking: a worker thread)."""
        assert self.db is not None
        with _reading(self.db) as store:
            shoes = store.shoes(query.table, MAX_SHOES)
            found: list[RoundHistory] = []
            if query.limit > 0:
                messages = store.messages(query.table, query.shoe, query.since, query.until)
                found = list(rounds(_at_most(messages, MAX_MESSAGES)))
        if len(found) > query.limit:
            raise BadQueryError(
                f"{len(found)} rounds, more than the limit of {query.limit}:"
                " narrow it with shoe= or since=/until="
            )
        if query.csv:
            return Response(200, to_csv(found).encode(), CSV_TYPE), len(found)
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
        return _json(200, body), len(found)


def _at_most(
    messages: Iterator[tuple[str, dict[str, Any]]], most: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    for number, message in enumerate(messages, start=1):
        if number > most:
            raise BadQueryError(
                f"more than {most} messages to read: narrow it with shoe= or since=/until="
            )
        yield message


def _token(request: Request) -> str | None:
    """The history token the request carries: ``Authorization: Bearer`` or the cookie."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    for part in request.headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value
    return None


def _cookie(token: str, max_age: int) -> str:
    return f"{COOKIE}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict"


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float (a time from the database) made None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def _json(status: int, body: object, *headers: tuple[str, str]) -> Response:
    text = json.dumps(finite(body), allow_nan=False)
    return Response(status, text.encode() + b"\n", JSON_TYPE, headers)


def error(status: int, reason: str, *headers: tuple[str, str]) -> Response:
    return _json(status, {"error": reason}, *headers)


def _cut(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + "..."


PLAIN: Final = re.compile(r"[A-Za-z0-9._:@/+*?&=%-]+")


def audit(event: str, **fields: object) -> None:
    """One line on the ``baccarat.pit`` logger: ``history EVENT: key=value ...``.

    Values that are not plain words are JSON strings (so a name cannot forge a field or a
    line); None is ``-``. Refusals are warnings.
    """
    words = " ".join(f"{key}={_field(value)}" for key, value in fields.items())
    level = logging.INFO if event in ("read", "login", "logout") else logging.WARNING
    log.log(level, "history %s: %s", event, words)


def _field(value: object) -> str:
    if value is None:
        return "-"
    text = str(value)
    return text if PLAIN.fullmatch(text) else json.dumps(text)


@contextmanager
def _reading(db: str) -> Iterator[Store]:
    """The store at ``db``, opened for reading and closed after.

    A driver's error (sqlite3, psycopg) becomes a :class:`StoreError` saying what it was.
    """
    store = open_store(db, create=False)
    try:
        yield store
    except StoreError:
        raise
    except Exception as exc:  # the driver's errors: said
        raise StoreError(f"cannot read: {exc}") from None
    finally:
        store.close()
