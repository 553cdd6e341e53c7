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
  (:mod:`baccarat.pit.history`; "not configured" without one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from baccarat.boards.web_server import (
    CONFIG_PATH,
    CONTENT_TYPES,
    WEB_ROOT,
    PageConfig,
    Response,
    WebBoardServer,
    load_files,
)
from baccarat.pit.history import HISTORY_PATH, History

PIT_ROOT: Final = Path(__file__).with_name("web")
"""The console's files, shipped inside the package."""
BOARD_PATH: Final = "/board"
"""Where the web board is served, under the console."""


class PitServer(WebBoardServer):
    """The console's file server; ``await start()``, then ``close()``.

    ``config`` is the console's (its ``table`` unused, no credentials); ``board_config``
    the board's under ``/board/``, with the read-only account the board logs in with;
    ``db`` the floor recorder's database (a path or ``postgresql://...``) for the history.
    """

    def __init__(
        self,
        config: PageConfig,
        board_config: PageConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        db: str | None = None,
    ) -> None:
        super().__init__(config, host=host, port=port, root=PIT_ROOT)
        self.board_config = board_config
        self.history = History(db)

    async def answer(self, method: str, target: str) -> Response:
        """``/history.json`` from the database (in a worker thread); files from memory."""
        if method in ("GET", "HEAD") and urlsplit(target).path == HISTORY_PATH:
            return await self.history.answer(target)
        return self.respond(method, target)

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
        return files
