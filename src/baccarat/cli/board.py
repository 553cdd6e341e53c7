"""``baccarat board --broker HOST[:PORT] --table ID``: the terminal result board.

``--username`` and ``--password-file`` log it in to a broker with accounts (the password
is never on the command line: a file, or ``$BACCARAT_BOARD_PASSWORD``).

With ``--web PORT`` it serves the browser board instead (:mod:`baccarat.boards.web_server`):
a static page that subscribes to the broker's MQTT-over-WebSocket listener (``--ws-port``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from baccarat.boards.feed import BoardFeed, parse_broker, show
from baccarat.boards.web_server import (
    DEFAULT_WS_PORT,
    PASSWORD_ENV,
    board_password,
    plain_http_warning,
    tls_from,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat board``."""
    parser.add_argument(
        "--broker", default="localhost", help="HOST[:PORT] of the MQTT broker (port 1883)"
    )
    parser.add_argument(
        "--table", help="table id, as in the topics (the web page may take ?table=ID instead)"
    )
    parser.add_argument("--prefix", default="baccarat", help="topic prefix (baccarat)")
    parser.add_argument(
        "--username", help="the board's broker account (a read-only one: board-T07)"
    )
    parser.add_argument(
        "--password-file",
        metavar="FILE",
        help=f"file holding that account's password (or ${PASSWORD_ENV}); never on the"
        " command line",
    )
    web = parser.add_argument_group("web board")
    web.add_argument(
        "--web", type=int, metavar="PORT", help="serve the browser board on PORT instead"
    )
    web.add_argument(
        "--web-host",
        default="127.0.0.1",
        help="address the web board listens on (127.0.0.1; 0.0.0.0 for a screen elsewhere)",
    )
    web.add_argument(
        "--tls-cert", metavar="FILE", type=Path,
        help="serve the web board over HTTPS with this certificate (PEM), with --tls-key",
    )
    web.add_argument("--tls-key", metavar="FILE", type=Path, help="its private key (PEM)")
    web.add_argument(
        "--ws-port",
        type=int,
        default=DEFAULT_WS_PORT,
        help=f"the broker's MQTT-over-WebSocket port, for the page ({DEFAULT_WS_PORT})",
    )
    web.add_argument(
        "--ws-username",
        help="broker account the page logs in with (a read-only one: board; --username"
        " if not given)",
    )
    web.add_argument(
        "--ws-password-file",
        metavar="FILE",
        help=f"file holding that account's password (--password-file if not given, or"
        f" ${PASSWORD_ENV})",
    )


def run(args: argparse.Namespace) -> int:
    """Draw (or serve) the board until interrupted; 2 if the arguments are wrong."""
    try:
        host, port = parse_broker(args.broker)
    except ValueError as exc:
        print(f"baccarat board: {exc}", file=sys.stderr)
        return 2
    if args.web is not None:
        return run_web(args, host)
    if not args.table:
        print("baccarat board: --table is required (or --web PORT)", file=sys.stderr)
        return 2
    try:
        password = board_password(args.password_file) if args.username else None
    except OSError as exc:
        print(f"baccarat board: cannot read the password: {exc}", file=sys.stderr)
        return 2
    feed = BoardFeed(
        host, port, args.prefix, args.table, username=args.username, password=password
    )
    asyncio.run(show(feed))
    return 0


def run_web(args: argparse.Namespace, broker_host: str) -> int:
    """Serve the web board until interrupted; 2 if a port is wrong or taken."""
    from baccarat.boards.web_server import WebBoardServer, page_config, serve

    for name, value in (("--web", args.web), ("--ws-port", args.ws_port)):
        if not 0 <= value < 65536:
            print(f"baccarat board: bad port for {name}: {value}", file=sys.stderr)
            return 2
    username = args.ws_username or args.username
    try:
        password = board_password(args.ws_password_file or args.password_file)
    except OSError as exc:
        print(f"baccarat board: cannot read the password: {exc}", file=sys.stderr)
        return 2
    config = page_config(
        broker_host,
        args.ws_port,
        args.table,
        args.prefix,
        username=username,
        password=password if username else None,
    )
    context, problem = tls_from(args.tls_cert, args.tls_key)
    if problem is not None:
        print(f"baccarat board: {problem}", file=sys.stderr)
        return 2
    if context is None and (warning := plain_http_warning(args.web_host, bool(username))):
        print(f"baccarat board: {warning}", file=sys.stderr)
    server = WebBoardServer(config, host=args.web_host, port=args.web, ssl_context=context)
    try:
        asyncio.run(serve(server))
    except OSError as exc:
        print(f"baccarat board: cannot serve on {args.web_host}:{args.web}: {exc}", file=sys.stderr)
        return 2
    return 0
