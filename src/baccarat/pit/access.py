"""Who may read the floor's history: a login checked by the broker, a read right from its ACL.

The operator's account lives in the broker only (mosquitto's password file), so the
console checks a password the one way the broker offers: :class:`BrokerLogin` connects to
the broker's MQTT-over-WebSocket listener (the one the page logs in on) with the
username and password (the package's client, :mod:`baccarat.mqtt`) and disconnects at
once; a CONNACK of *bad username or password* or *not authorized* is a wrong login. A
login that passes gets a token (:class:`Sessions`), random, kept in memory only, sent
back by the page as an HttpOnly cookie (or by a script as ``Authorization: Bearer``); it
lapses after :data:`SESSION_IDLE` seconds unused and :data:`SESSION_LIFETIME` seconds in
all. The page
logs in to the history *before* it connects to the broker itself: the broker gives each
client its username as client id (``use_username_as_clientid``), so the check would take
the page's own connection away if it came later.

The broker cannot be asked what an account may read: mosquitto 2.0's ``acl_file`` grants
every SUBSCRIBE and checks read rights only as it delivers each message. So the read right
is a line of the broker's own ACL, read from the file (:class:`ReadAcl`, the broker's
``acl_file`` or a file in its syntax): an account may read table T07's history when that
file lets it read ``{prefix}/T07/result``, by mosquitto's rules (``user`` sections,
``topic [read|write|readwrite|deny]``, ``pattern`` with ``%u`` and ``%c``, deny first). The
file is read again when it changes, as the broker does on SIGHUP.

Failed logins are counted per client address (:class:`FailedLogins`): after
:data:`MAX_FAILURES` in :data:`FAILURE_WINDOW` seconds the client is refused (429) without
asking the broker, so the console cannot be used to guess passwords against it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import os
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from baccarat.errors import BaccaratError
from baccarat.mqtt import ConnectRefusedError, LinkError, MqttClient, MqttSettings

log = logging.getLogger("baccarat.pit")

SESSION_IDLE: Final = 30 * 60.0
"""Seconds a history token lasts unused."""
SESSION_LIFETIME: Final = 12 * 3600.0
"""Seconds a history token lasts at most (a shift): then the operator logs in again."""
MAX_SESSIONS: Final = 1000
"""Tokens kept at once; the oldest goes first when more are issued."""
MAX_FAILURES: Final = 10
"""Failed logins a client may make in :data:`FAILURE_WINDOW` seconds."""
FAILURE_WINDOW: Final = 60.0
MAX_CLIENTS: Final = 10_000
"""Client addresses whose failures are remembered at once (the oldest are forgotten)."""
CHECK_TIMEOUT: Final = 10.0
"""Seconds the broker gets to answer a login check."""
CHECKS: Final = 4
"""Login checks with the broker at the same time; the others wait."""
MAX_CREDENTIAL_BYTES: Final = 1024
REFUSED_CODES: Final = frozenset({4, 5, 134, 135})
"""CONNACK codes of a refused login: MQTT 3.1.1 bad credentials / not authorized, MQTT 5
bad username or password (0x86) / not authorized (0x87)."""


class LoginUnavailableError(BaccaratError, RuntimeError):
    """The broker could not be asked (unreachable, no answer): nothing is known of the login."""


class AclError(BaccaratError, OSError):
    """The history ACL file cannot be read."""


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """(username, password) from an ``Authorization: Basic`` header, or None if it is not one."""
    if header is None or len(header) > MAX_CREDENTIAL_BYTES:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        text = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, colon, password = text.partition(":")
    if not colon or not username or not username.isprintable():
        return None
    return username, password


@dataclass(frozen=True, slots=True)
class BrokerLogin:
    """Checks a username and password by logging in to the broker's WebSocket listener."""

    host: str
    port: int
    path: str = "/mqtt"
    timeout: float = CHECK_TIMEOUT
    _checks: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(CHECKS))

    async def check(self, username: str, password: str) -> bool:
        """True if the broker takes the login, False if it refuses it; LoginUnavailableError."""
        client = MqttClient(MqttSettings(
            self.host, self.port, client_id=f"pit-history-check-{secrets.token_hex(6)}",
            username=username, password=password, websocket_path=self.path,
            connect_timeout=self.timeout,
        ))
        async with self._checks:
            try:
                async with asyncio.timeout(self.timeout), client:
                    return True
            except ConnectRefusedError as exc:
                if exc.code in REFUSED_CODES:
                    return False
                raise LoginUnavailableError(f"the broker refused the check: {exc}") from None
            except (LinkError, OSError, TimeoutError) as exc:
                where = f"ws://{self.host}:{self.port}{self.path}"
                raise LoginUnavailableError(f"cannot reach the broker at {where}: {exc}") from None


@dataclass(slots=True)
class Session:
    """One history login: whose, and when it was made and last used (monotonic seconds)."""

    operator: str
    issued: float
    used: float
    credential: str | None = None
    """The operator's line of the broker's password file when the token was issued."""


class PasswordFile:
    """The broker's password file (mosquitto's ``password_file``), read again when it changes.

    Only each account's line is read (``user:$7$...``, a salted hash): a token lasts while
    its operator's line is the one it was issued under, so a password changed
    (``mosquitto_passwd``) or an account removed revokes every token of that operator.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._lines: dict[str, str] = {}

    def line(self, username: str) -> str | None:
        """The account's line now; None if it has none, or the file cannot be read (blocking)."""
        try:
            status = os.stat(self.path)
            seen = (status.st_mtime_ns, status.st_size, status.st_ino)
            if seen != self._seen:
                lines: dict[str, str] = {}
                for raw in self.path.read_text(encoding="utf-8").splitlines():
                    user, colon, _ = raw.partition(":")
                    if colon and user:
                        lines[user] = raw
                self._lines, self._seen = lines, seen
        except (OSError, UnicodeDecodeError) as exc:
            log.error("cannot read the broker's password file %s: %s (every history token"  # noqa: TRY400
                      " is refused until it can be read)", self.path, exc)
            self._lines, self._seen = {}, None
            return None
        return self._lines.get(username)


class Sessions:
    """The history tokens issued, in memory only."""

    def __init__(
        self, idle: float = SESSION_IDLE, lifetime: float = SESSION_LIFETIME,
        passwords: PasswordFile | None = None,
    ) -> None:
        """Tokens lasting ``idle`` seconds unused, ``lifetime`` in all.

        ``passwords``: the broker's password file, whose change of an operator's line
        revokes that operator's tokens (:class:`PasswordFile`).
        """
        self.idle = idle
        self.lifetime = lifetime
        self.passwords = passwords
        self._sessions: dict[str, Session] = {}

    def issue(self, operator: str) -> str:
        """A new token for ``operator`` (blocking: reads the password file if it changed)."""
        now = time.monotonic()
        for token in [t for t, s in self._sessions.items() if self._lapsed(s, now)]:
            del self._sessions[token]
        while len(self._sessions) >= MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        token = secrets.token_urlsafe(32)
        credential = None if self.passwords is None else self.passwords.line(operator)
        self._sessions[token] = Session(operator, now, now, credential)
        return token

    def operator(self, token: str) -> str | None:
        """Whose token this is, if it is one and has not lapsed (using it keeps it alive).

        None too when its operator's password changed or the account is gone: every token
        of that operator is revoked then.
        """
        session = self._sessions.get(token)
        now = time.monotonic()
        if session is None:
            return None
        if self._lapsed(session, now):
            del self._sessions[token]
            return None
        if self.passwords is not None:
            line = self.passwords.line(session.operator)
            if line is None or line != session.credential:
                self.revoke_operator(session.operator)
                return None
        session.used = now
        return session.operator

    def revoke_operator(self, operator: str) -> int:
        """Forget every token of ``operator`` (a password changed, an account removed)."""
        tokens = [t for t, s in self._sessions.items() if s.operator == operator]
        for token in tokens:
            del self._sessions[token]
        if tokens:
            log.warning("history: %d token(s) of %s revoked: the account's password changed or"
                        " it was removed", len(tokens), operator)
        return len(tokens)

    def revoke(self, token: str) -> None:
        """Forget ``token`` (logout)."""
        self._sessions.pop(token, None)

    def _lapsed(self, session: Session, now: float) -> bool:
        return now - session.used > self.idle or now - session.issued > self.lifetime


class FailedLogins:
    """Failed logins per client address in the last :data:`FAILURE_WINDOW` seconds."""

    def __init__(self, most: int = MAX_FAILURES, window: float = FAILURE_WINDOW) -> None:
        self.most = most
        self.window = window
        self._failures: dict[str, deque[float]] = {}

    def wait(self, client: str) -> float:
        """Seconds until ``client`` may try again: 0 if it may now."""
        times = self._failures.get(client)
        if times is None:
            return 0.0
        now = time.monotonic()
        while times and now - times[0] > self.window:
            times.popleft()
        if not times:
            del self._failures[client]
            return 0.0
        return self.window - (now - times[0]) if len(times) >= self.most else 0.0

    def attempt(self, client: str) -> None:
        """Count a login about to be checked as a failure until :meth:`succeeded` says not."""
        if client not in self._failures and len(self._failures) >= MAX_CLIENTS:
            del self._failures[next(iter(self._failures))]
        self._failures.setdefault(client, deque()).append(time.monotonic())

    def succeeded(self, client: str) -> None:
        """The login counted by the last :meth:`attempt` passed (or was not a guess)."""
        times = self._failures.get(client)
        if times:
            times.pop()
            if not times:
                del self._failures[client]


@dataclass(frozen=True, slots=True)
class AclLine:
    """One ``topic`` or ``pattern`` line: ``read``, ``write``, ``readwrite`` or ``deny``."""

    access: str
    topic: str


@dataclass(frozen=True, slots=True)
class AclRules:
    """A mosquitto ACL file, parsed: each user's lines, anonymous lines, patterns."""

    users: dict[str | None, tuple[AclLine, ...]]
    patterns: tuple[AclLine, ...]

    @classmethod
    def parse(cls, text: str) -> AclRules:
        """The rules of an ACL file's text, as mosquitto 2.0 reads it."""
        users: dict[str | None, list[AclLine]] = {None: []}
        patterns: list[AclLine] = []
        user: str | None = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if word == "user":
                user = rest
                users.setdefault(user, [])
            elif word in ("topic", "pattern"):
                access, _, topic = rest.partition(" ")
                if access not in ("read", "write", "readwrite", "deny"):
                    access, topic = "readwrite", rest
                target = patterns if word == "pattern" else users[user]
                target.append(AclLine(access, topic.strip()))
        return cls({name: tuple(lines) for name, lines in users.items()}, tuple(patterns))

    def may_read(self, username: str, topic: str) -> bool:
        """Whether mosquitto would deliver a message on ``topic`` to ``username``."""
        verdict = _verdict(self.users.get(username, ()), topic)
        if verdict is not None:
            return verdict
        if any(c in username for c in "+#/"):
            return False  # mosquitto denies patterns to such a name
        own = tuple(
            AclLine(line.access, line.topic.replace("%u", username).replace("%c", username))
            for line in self.patterns
        )
        return bool(_verdict(own, topic))


def _verdict(lines: tuple[AclLine, ...], topic: str) -> bool | None:
    """False if a deny line matches, True if a read line does, None if none does."""
    matching = [line for line in lines if topic_matches(line.topic, topic)]
    if any(line.access == "deny" for line in matching):
        return False
    if any(line.access in ("read", "readwrite") for line in matching):
        return True
    return None


def topic_matches(pattern: str, topic: str) -> bool:
    """Whether the MQTT filter ``pattern`` matches ``topic`` (``+``, ``#``, ``$`` topics)."""
    wanted, levels = pattern.split("/"), topic.split("/")
    if topic.startswith("$") and wanted[0] in ("+", "#"):
        return False
    for at, part in enumerate(wanted):
        if part == "#":
            return at == len(wanted) - 1
        if at >= len(levels) or (part != "+" and part != levels[at]):
            return False
    return len(levels) == len(wanted)


class ReadAcl:
    """The history's read rights: the ACL file at ``path``, read again when it changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._rules = AclRules({None: ()}, ())

    def rules(self) -> AclRules:
        """The file's rules, read again if it changed (blocking: a ``stat`` or a read)."""
        try:
            status = os.stat(self.path)
            seen = (status.st_mtime_ns, status.st_size, status.st_ino)
            if seen != self._seen:
                self._rules = AclRules.parse(self.path.read_text(encoding="utf-8"))
                self._seen = seen
        except (OSError, UnicodeDecodeError) as exc:
            raise AclError(f"cannot read the history ACL {self.path}: {exc}") from None
        return self._rules

    def may_read(self, username: str, topic: str) -> bool:
        """Whether the file lets ``username`` read ``topic`` (blocking)."""
        return self.rules().may_read(username, topic)
