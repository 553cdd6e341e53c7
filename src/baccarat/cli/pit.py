"""``baccarat pit --web PORT --broker HOST --ws-port N``: the pit console, a web page.

The page (:mod:`baccarat.pit.server`) logs in to the broker's MQTT-over-WebSocket listener
with the operator's own account, typed in the page, and shows every table under
``{prefix}/+/``. The server only hands out files; it serves the web board too, under
``/board/``, for a table's live board, logged in with ``--board-username`` (a read-only
account for the pit's screen). With ``--db`` (the floor recorder's database) it also
answers the page's history view (``/history.json``, :mod:`baccarat.pit.history`) for
operators who logged in with their broker account (checked by the broker over its
WebSocket listener) and whom ``--history-acl`` (the broker's ACL file, or one in its
syntax) lets read the table's ``result`` topic; every read is logged on ``baccarat.pit``
(and appended to ``--history-log``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baccarat import logs
from baccarat.boards.feed import parse_broker
from baccarat.boards.web_server import (
    DEFAULT_WS_PORT,
    PASSWORD_ENV,
    board_password,
    plain_http_warning,
    tls_from,
)
from baccarat.cli.common import add_log_arguments
from baccarat.errors import BaccaratError

if TYPE_CHECKING:
    from baccarat.pit.history import HistoryAccess
    from baccarat.pit.server import PitServer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat pit``."""
    parser.add_argument(
        "--web", type=int, metavar="PORT", required=True,
        help="serve the console on PORT (0: any free port)",
    )
    parser.add_argument(
        "--web-host", default="127.0.0.1",
        help="address to listen on (127.0.0.1; 0.0.0.0 for browsers on other machines)",
    )
    parser.add_argument(
        "--tls-cert", metavar="FILE", type=Path,
        help="serve HTTPS with this certificate (PEM, the chain), with --tls-key",
    )
    parser.add_argument("--tls-key", metavar="FILE", type=Path, help="its private key (PEM)")
    parser.add_argument(
        "--broker", default="localhost",
        help="HOST[:PORT] of the MQTT broker; only its host is used, for the page",
    )
    parser.add_argument(
        "--ws-port", type=int, default=DEFAULT_WS_PORT,
        help=f"the broker's MQTT-over-WebSocket port ({DEFAULT_WS_PORT})",
    )
    parser.add_argument("--prefix", default="baccarat", help="topic prefix (baccarat)")
    parser.add_argument(
        "--board-username",
        help="read-only broker account of the live boards under /board/ (board-pit)",
    )
    parser.add_argument(
        "--board-accounts", type=int, default=0, metavar="N",
        help="the live boards log in as USERNAME-1 ... USERNAME-N in turn (one password), so"
        " that N boards open at once each have their own client id (0: USERNAME alone)",
    )
    parser.add_argument(
        "--board-password-file", metavar="FILE",
        help=f"file holding that account's password (or ${PASSWORD_ENV})",
    )
    parser.add_argument(
        "--db", metavar="URL",
        help="the floor recorder's database for the history view: PATH or postgresql://...",
    )
    parser.add_argument(
        "--history-acl", metavar="FILE", type=Path,
        help="who may read the history (required with --db): the broker's ACL file, or one"
        " in its syntax; an account may read a table's history if it may read"
        " PREFIX/TABLE/result",
    )
    parser.add_argument(
        "--history-passwords", metavar="FILE", type=Path,
        help="the broker's password_file (readable by the console's user): a history token"
        " is revoked when its operator's password changes or the account is removed",
    )
    parser.add_argument(
        "--history-log", metavar="FILE", type=Path,
        help="also append every history login and read (the baccarat.pit log lines) here",
    )
    parser.add_argument(
        "--areas", metavar="FILE", type=Path,
        help='the floor\'s areas, which the floor view groups the tables by: a TOML file of'
        ' "Area name" = ["T01", "T02", ...] lines, in the order shown',
    )
    add_log_arguments(parser)


class PitArgumentError(BaccaratError):
    """An argument of ``baccarat pit`` is wrong; the text says which and why (exit 2)."""


def run(args: argparse.Namespace) -> int:
    """Serve the console until interrupted; 2 if an argument is wrong or the port taken."""
    logs.configure(args.log_level, args.log_format)
    try:
        server = pit_server(args)
    except PitArgumentError as exc:
        print(f"baccarat pit: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(server))
    except OSError as exc:
        print(f"baccarat pit: cannot serve on {args.web_host}:{args.web}: {exc}", file=sys.stderr)
        return 2
    return 0


def pit_server(args: argparse.Namespace) -> PitServer:
    """The console's server for the arguments, or :class:`PitArgumentError`."""
    from baccarat.boards.web_server import page_config
    from baccarat.pit.areas import AreasError, load_areas
    from baccarat.pit.server import PitServer

    try:
        host, _port = parse_broker(args.broker)
    except ValueError as exc:
        raise PitArgumentError(str(exc)) from None
    for name, value in (("--web", args.web), ("--ws-port", args.ws_port)):
        if not 0 <= value < 65536:
            raise PitArgumentError(f"bad port for {name}: {value}")
    try:
        password = board_password(args.board_password_file)
    except OSError as exc:
        raise PitArgumentError(f"cannot read the board's password: {exc}") from None
    access = _history_access(args, host)
    if args.history_log is not None:
        _log_history_to(args.history_log)
    try:
        areas = load_areas(args.areas) if args.areas is not None else []
    except AreasError as exc:
        raise PitArgumentError(str(exc)) from None
    console = page_config(host, args.ws_port, None, args.prefix)
    board = page_config(
        host, args.ws_port, None, args.prefix,
        username=args.board_username,
        password=password if args.board_username else None,
    )
    context, problem = tls_from(args.tls_cert, args.tls_key)
    if problem is not None:
        raise PitArgumentError(problem)
    if context is None and (warning := plain_http_warning(args.web_host, logins=True)):
        logging.getLogger("baccarat.pit").warning("%s", warning)
    return PitServer(
        console, board, host=args.web_host, port=args.web, db=args.db, access=access,
        areas=areas, board_accounts=max(0, args.board_accounts), ssl_context=context,
    )


def _history_access(args: argparse.Namespace, host: str) -> HistoryAccess | None:
    """Who may read the history, with ``--db``: the broker's login and the ACL's right."""
    from baccarat.pit.access import AclError, BrokerLogin, PasswordFile, ReadAcl, Sessions
    from baccarat.pit.history import HistoryAccess

    if args.db is None:
        return None
    if (problem := check_database(args.db)) is not None:
        raise PitArgumentError(problem)
    if args.history_acl is None:
        raise PitArgumentError("--db needs --history-acl FILE: who may read the history")
    acl = ReadAcl(args.history_acl)
    try:
        acl.rules()
    except AclError as exc:
        raise PitArgumentError(str(exc)) from None
    access = HistoryAccess(BrokerLogin(host, args.ws_port), acl, args.prefix)
    if args.history_passwords is not None:
        if not args.history_passwords.is_file():
            raise PitArgumentError(f"no --history-passwords file {args.history_passwords}")
        access.sessions = Sessions(passwords=PasswordFile(args.history_passwords))
    return access


def _log_history_to(path: Path) -> None:
    """Append the history's logins and reads (``baccarat.pit``) to ``path`` too."""
    try:
        audit_file = logging.FileHandler(path, encoding="utf-8")
    except OSError as exc:
        raise PitArgumentError(f"cannot open --history-log: {exc}") from None
    audit_file.setFormatter(logs.TimestampFormatter())
    logging.getLogger("baccarat.pit").addHandler(audit_file)


def check_database(db: str) -> str | None:
    """Why the history database ``db`` cannot be opened, or None if it can."""
    from baccarat.floor.store import StoreError, open_store

    try:
        open_store(db, create=False).close()
    except StoreError as exc:
        return f"history database: {exc}"
    return None


async def serve(server: PitServer) -> None:
    """Start ``server``, say where the console is, and serve until cancelled."""
    await server.start()
    config = server.config
    ws = f"ws://{config.ws_host or '<page host>'}:{config.ws_port}{config.ws_path}"
    history = "on" if server.history.db is not None else "not configured (no --db)"
    print(f"pit console: {server.url}  prefix {config.prefix}, broker websockets {ws},"
          f" history {history}", flush=True)
    try:
        await server.serve_forever()
    finally:
        await server.close()
