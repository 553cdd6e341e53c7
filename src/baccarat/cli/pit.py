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
import os
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

if TYPE_CHECKING:
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
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument("--log-format", choices=logs.FORMATS,
                        default=os.environ.get("BACCARAT_LOG_FORMAT", "text"))


def run(args: argparse.Namespace) -> int:
    """Serve the console until interrupted; 2 if an argument is wrong or the port taken."""
    from baccarat.boards.web_server import page_config
    from baccarat.pit.access import AclError, BrokerLogin, PasswordFile, ReadAcl, Sessions
    from baccarat.pit.areas import AreasError, load_areas
    from baccarat.pit.history import HistoryAccess
    from baccarat.pit.server import PitServer

    logs.configure(args.log_level, args.log_format)

    try:
        host, _port = parse_broker(args.broker)
    except ValueError as exc:
        print(f"baccarat pit: {exc}", file=sys.stderr)
        return 2
    for name, value in (("--web", args.web), ("--ws-port", args.ws_port)):
        if not 0 <= value < 65536:
            print(f"baccarat pit: bad port for {name}: {value}", file=sys.stderr)
            return 2
    try:
        password = board_password(args.board_password_file)
    except OSError as exc:
        print(f"baccarat pit: cannot read the board's password: {exc}", file=sys.stderr)
        return 2
    access = None
    if args.db is not None:
        if (problem := check_database(args.db)) is not None:
            print(f"baccarat pit: {problem}", file=sys.stderr)
            return 2
        if args.history_acl is None:
            print("baccarat pit: --db needs --history-acl FILE: who may read the history",
                  file=sys.stderr)
            return 2
        acl = ReadAcl(args.history_acl)
        try:
            acl.rules()
        except AclError as exc:
            print(f"baccarat pit: {exc}", file=sys.stderr)
            return 2
        access = HistoryAccess(BrokerLogin(host, args.ws_port), acl, args.prefix)
        if args.history_passwords is not None:
            passwords = PasswordFile(args.history_passwords)
            if not args.history_passwords.is_file():
                print(f"baccarat pit: no --history-passwords file {args.history_passwords}",
                      file=sys.stderr)
                return 2
            access.sessions = Sessions(passwords=passwords)
    if args.history_log is not None:
        try:
            audit_file = logging.FileHandler(args.history_log, encoding="utf-8")
        except OSError as exc:
            print(f"baccarat pit: cannot open --history-log: {exc}", file=sys.stderr)
            return 2
        audit_file.setFormatter(logs.TimestampFormatter())
        logging.getLogger("baccarat.pit").addHandler(audit_file)
    try:
        areas = load_areas(args.areas) if args.areas is not None else []
    except AreasError as exc:
        print(f"baccarat pit: {exc}", file=sys.stderr)
        return 2
    console = page_config(host, args.ws_port, None, args.prefix)
    board = page_config(
        host, args.ws_port, None, args.prefix,
        username=args.board_username,
        password=password if args.board_username else None,
    )
    context, problem = tls_from(args.tls_cert, args.tls_key)
    if problem is not None:
        print(f"baccarat pit: {problem}", file=sys.stderr)
        return 2
    if context is None and (warning := plain_http_warning(args.web_host, logins=True)):
        logging.getLogger("baccarat.pit").warning("%s", warning)
    server = PitServer(
        console, board, host=args.web_host, port=args.web, db=args.db, access=access,
        areas=areas, board_accounts=max(0, args.board_accounts), ssl_context=context,
    )
    try:
        asyncio.run(serve(server))
    except OSError as exc:
        print(f"baccarat pit: cannot serve on {args.web_host}:{args.web}: {exc}", file=sys.stderr)
        return 2
    return 0


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
