"""``baccarat pit --web PORT``: serve the pit console, a static page like the web board.

The console (``pit/web/``: plain HTML, CSS and ES modules) logs in to the broker's
MQTT-over-WebSocket listener from the browser with the operator's own account, typed in
the page: the server never holds an operator's password and never talks to the broker.
It serves, from memory:

* ``/``: the console, and its ``/config.json`` (the broker's WebSocket address and the
  topic prefix, no credentials);
* ``/board/``: the web board (:mod:`baccarat.boards.web_server`'s files, the same ones),
  which the console links to for a table's live board (``/board/?table=T07&view=pit``),
  with its own ``/board/config.json`` naming the pit screen's read-only account, if given;
* ``/vendor/``: the board's vendored MQTT.js, which the console imports too;
* ``/history.json``: the history view's rounds, read from the floor recorder's database
  (:mod:`baccarat.pit.history`; "not configured" without one), for an operator logged in
  with ``POST /history/login`` (their broker account, checked by the broker:
  :mod:`baccarat.pit.access`; ``POST /history/logout`` forgets the login);
* ``/areas.json``: the floor's areas (``--areas FILE``, :mod:`baccarat.pit.areas`), which
  the floor view groups the tables by; ``{"areas": []}`` without;
* ``/history/quarantine.json``: how many bodies the recorder quarantined on the topics the
  logged-in operator may read, and the newest one's topic, reason and time.

An answer that fails for any reason is a 500 with a JSON reason and one log line, never a
dropped connection.
"""

from __future__ import annotations

import dataclasses
import logging
import ssl
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from baccarat.boards.web_server import (
    CONFIG_PATH,
    CONTENT_TYPES,
    WEB_ROOT,
    PageConfig,
    Request,
    Response,
    WebBoardServer,
    load_files,
)
from baccarat.pit.areas import AREAS_PATH, areas_json
from baccarat.pit.history import (
    HISTORY_PATH,
    LOGIN_PATH,
    LOGOUT_PATH,
    QUARANTINE_PATH,
    History,
    HistoryAccess,
    error,
)

log = logging.getLogger("baccarat.pit")

PIT_ROOT: Final = Path(__file__).with_name("web")
"""The console's files, shipped inside the package."""
BOARD_PATH: Final = "/board"
"""Where the web board is served, under the console."""


class PitServer(WebBoardServer):
    """The console's file server; ``await start()``, then ``close()``.

    ``config`` is the console's (its ``table`` unused, no credentials); ``board_config``
    the board's under ``/board/``, with the read-only account the board logs in with;
    ``db`` the floor recorder's database (a path or ``postgresql://...``) for the history,
    and ``access`` who may read it (required with ``db``); ``areas`` the floor's areas in
    order, each with its tables.
    """

    def __init__(
        self,
        config: PageConfig,
        board_config: PageConfig,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        db: str | None = None,
        access: HistoryAccess | None = None,
        areas: list[tuple[str, list[str]]] | None = None,
        board_accounts: int = 0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(config, host=host, port=port, root=PIT_ROOT, ssl_context=ssl_context)
        self.board_config = board_config
        self.board_accounts = board_accounts if board_config.username else 0
        """Accounts the live boards take in turn (``{username}-1`` ...): 0, the one."""
        self._next_board = 0
        self.areas = areas or []
        self.history = History(db, access)

    async def answer(self, request: Request) -> Response:
        """The history and its login (the database in a worker thread); files from memory."""
        try:
            return await self._answer(request)
        except Exception as exc:
            log.error(  # noqa: TRY400 - one line: the reason; the traceback at debug
                "pit console: %s %s failed: %s: %s", request.method,
                urlsplit(request.target).path[:200], type(exc).__name__, exc,
            )
            log.debug("the failure", exc_info=True)
            return error(500, f"the console failed to answer: {type(exc).__name__}")

    async def _answer(self, request: Request) -> Response:
        path = urlsplit(request.target).path
        if path == HISTORY_PATH and request.method in ("GET", "HEAD"):
            return await self.history.answer(request)
        if path == QUARANTINE_PATH and request.method in ("GET", "HEAD"):
            return await self.history.quarantine(request)
        if path == LOGIN_PATH and request.method == "POST":
            return await self.history.login(request)
        if path == LOGOUT_PATH and request.method == "POST":
            return self.history.logout(request)
        if path == BOARD_PATH + CONFIG_PATH and self.board_accounts and request.method == "GET":
            return self._board_config()
        return self.respond(request.method, request.target)

    def _board_config(self) -> Response:
        """The live board's config with the next of its accounts: its own client id.

        The broker gives each client its username as client id (``use_username_as_clientid``),
        so two boards of one account take the session from each other in turn; with
        ``board_accounts`` N, N boards open at once each have their own (docs/pit.md).
        """
        self._next_board = self._next_board % self.board_accounts + 1
        config = dataclasses.replace(
            self.board_config, username=f"{self.board_config.username}-{self._next_board}",
        )
        return Response(200, config.to_json(), CONTENT_TYPES[".json"])

    def load(self) -> dict[str, tuple[bytes, str]]:
        """The console's files, the board's under ``/board/``, and MQTT.js under ``/vendor/``."""
        files = {
            f"{BOARD_PATH}{path}": found
            for path, found in load_files(WEB_ROOT).items()
        }
        files[BOARD_PATH + CONFIG_PATH] = (self.board_config.to_json(), CONTENT_TYPES[".json"])
        for path, found in list(files.items()):
            if path.startswith(f"{BOARD_PATH}/vendor/"):
                files[path.removeprefix(BOARD_PATH)] = found
        files.update(load_files(self.root))
        files[CONFIG_PATH] = (self.config.to_json(), CONTENT_TYPES[".json"])
        files[AREAS_PATH] = (areas_json(self.areas), CONTENT_TYPES[".json"])
        return files
