"""``baccarat board --web PORT``: serve the browser result board, a static page.

The page (``boards/web/``: plain HTML, CSS and ES modules, no build step) subscribes to
the broker itself, over MQTT-over-WebSocket, with the vendored MQTT.js. This server only
hands out its files and ``/config.json``, which tells the page where the broker's
WebSocket listener is and which table to show. It never talks to the broker.

The files are read once, at start, and served from memory: a request never touches the
disk, so nothing blocks the event loop. Only ``GET`` and ``HEAD`` are answered, one
request per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import mimetypes
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit

from baccarat.logs import Repeated, quiet_os_errors

log = logging.getLogger("baccarat.web")
MAX_CLIENTS: Final = 200
"""Connections served at once; more are closed at once, counted in one warning a window
(a client takes one or two; slow or idle ones wait REQUEST_TIMEOUT at most)."""

WEB_ROOT: Final = Path(__file__).with_name("web")
"""The page's files, shipped inside the package."""
DEFAULT_WS_PORT: Final = 9001
"""Port of the broker's MQTT-over-WebSocket listener unless ``--ws-port`` says otherwise."""
DEFAULT_WS_PATH: Final = "/mqtt"
REQUEST_TIMEOUT: Final = 10.0
"""Seconds a client gets to send its request line and headers."""
MAX_HEADER_BYTES: Final = 16 * 1024
CONFIG_PATH: Final = "/config.json"
PASSWORD_ENV: Final = "BACCARAT_BOARD_PASSWORD"  # noqa: S105 - a variable's name, not a secret
"""Where the page's broker password comes from when no file is named."""
CONTENT_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".md": "text/markdown; charset=utf-8",
}
SECURITY_HEADERS: Final = (
    ("Cache-Control", "no-cache"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    (
        "Content-Security-Policy",
        "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; "
        "style-src 'self'; script-src 'self'; worker-src 'self' blob:; "
        "frame-ancestors 'none'",
    ),
)
REASONS: Final = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 429: "Too Many Requests", 500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class PageConfig:
    """What the page needs to subscribe: served as ``/config.json``.

    ``ws_host`` None means "the host the page was loaded from": right when the broker runs
    on the board's machine and the screen reaches it by that machine's name.
    """

    table: str | None
    prefix: str
    ws_host: str | None
    ws_port: int
    ws_path: str = DEFAULT_WS_PATH
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    """The broker account the page logs in with: a read-only one (``board``). Whoever can
    load the page can read it, as whoever can watch the floor's network can read it on a
    plain ws:// listener."""

    def to_json(self) -> bytes:
        """The body of ``/config.json``."""
        body: dict[str, object] = {
            "table": self.table,
            "prefix": self.prefix,
            "ws_host": self.ws_host,
            "ws_port": self.ws_port,
            "ws_path": self.ws_path,
        }
        if self.username is not None:
            body["username"] = self.username
            body["password"] = self.password
        return json.dumps(body).encode()


def page_config(
    broker_host: str,
    ws_port: int,
    table: str | None,
    prefix: str,
    ws_path: str = DEFAULT_WS_PATH,
    *,
    username: str | None = None,
    password: str | None = None,
) -> PageConfig:
    """The page's configuration for a broker at ``broker_host`` (loopback: the page's host)."""
    ws_host: str | None = broker_host
    if _is_loopback(broker_host):
        ws_host = None
    elif ":" in broker_host:
        ws_host = f"[{broker_host}]"  # an IPv6 address inside a URL
    return PageConfig(
        table=table,
        prefix=prefix,
        ws_host=ws_host,
        ws_port=ws_port,
        ws_path=ws_path,
        username=username,
        password=password,
    )


def board_password(path: str | None) -> str | None:
    """A board page's broker password: the file's first line, else ``$BACCARAT_BOARD_PASSWORD``.

    Shared by ``baccarat board --web`` and ``baccarat pit`` (its live boards); ``OSError``
    if the file cannot be read.
    """
    if path:
        with open(path, encoding="utf-8") as file:
            return file.readline().rstrip("\r\n")
    return os.environ.get(PASSWORD_ENV)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Request:
    """One request's line and headers (names in lower case), and the client's address."""

    method: str
    target: str
    headers: dict[str, str] = field(default_factory=dict)
    client: str = ""


@dataclass(frozen=True, slots=True)
class Response:
    """A complete HTTP response, before the headers are written."""

    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    """More headers (``Set-Cookie``, ``WWW-Authenticate``, ``Retry-After``)."""


def load_files(root: Path = WEB_ROOT) -> dict[str, tuple[bytes, str]]:
    """Every file under ``root`` by its URL path (``/board.js``), with its content type."""
    files: dict[str, tuple[bytes, str]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            url = "/" + path.relative_to(root).as_posix()
            files[url] = (path.read_bytes(), content_type(path.name))
    return files


def content_type(name: str) -> str:
    """The Content-Type header for a file name."""
    suffix = Path(name).suffix.lower()
    return CONTENT_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server's TLS context from a certificate (chain) and its key, PEM files.

    ``OSError`` or ``ssl.SSLError`` when they cannot be read or do not match.
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


def tls_from(cert: Path | None, key: Path | None) -> tuple[ssl.SSLContext | None, str | None]:
    """The TLS context of ``--tls-cert`` and ``--tls-key`` (None without), or what is wrong.

    Shared by ``baccarat board --web`` and ``baccarat pit``.
    """
    if cert is None and key is None:
        return None, None
    if cert is None or key is None:
        return None, "--tls-cert and --tls-key go together"
    try:
        return tls_context(cert, key), None
    except (OSError, ssl.SSLError) as exc:
        return None, f"cannot use the certificate {cert} and key {key}: {exc}"


def plain_http_warning(host: str, logins: bool) -> str | None:
    """What to say when a server with logins speaks plain HTTP beyond this machine."""
    if not logins or _is_loopback(host):
        return None
    return (f"serving plain HTTP on {host}: operators' passwords cross the network in clear;"
            " acceptable on a closed pit network only (--tls-cert and --tls-key serve HTTPS)")


class WebBoardServer:
    """The static file server of the web board; ``await start()``, then ``close()``."""

    def __init__(
        self,
        config: PageConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        root: Path = WEB_ROOT,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """``ssl_context``: serve HTTPS with it (:func:`tls_context`); None, plain HTTP."""
        self.config = config
        self.ssl_context = ssl_context
        self.host = host
        self.requested_port = port
        self.root = root
        self.files: dict[str, tuple[bytes, str]] = {}
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.StreamWriter] = set()
        self._busy = Repeated(log)
        """Connections refused (too many open) and the loop's expected OS errors."""

    @property
    def port(self) -> int:
        """The port it listens on (the one the system chose if it was started with 0)."""
        if self._server is None or not self._server.sockets:
            return self.requested_port
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        """The page's address."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{host}:{self.port}/"

    def load(self) -> dict[str, tuple[bytes, str]]:
        """The files to serve by URL path, ``config.json`` included (read at start)."""
        files = load_files(self.root)
        files[CONFIG_PATH] = (self.config.to_json(), CONTENT_TYPES[".json"])
        return files

    async def start(self) -> WebBoardServer:
        """Read the files and start listening."""
        self.files = self.load()
        quiet_os_errors(asyncio.get_running_loop(), log, self._busy)  # EMFILE: one line
        self._server = await asyncio.start_server(
            self._serve, self.host, self.requested_port, ssl=self.ssl_context,
            ssl_handshake_timeout=REQUEST_TIMEOUT if self.ssl_context is not None else None,
        )
        return self

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    async def close(self) -> None:
        """Stop listening and close the open connections; idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            for writer in list(self._clients):
                writer.close()
            await server.wait_closed()

    async def __aenter__(self) -> WebBoardServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def respond(self, method: str, target: str) -> Response:
        """The response to one request line's method and target."""
        if method not in ("GET", "HEAD"):
            return Response(405, b"only GET and HEAD\n")
        path = unquote(urlsplit(target).path)
        if path == "/" or path.endswith("/"):
            path += "index.html"
        found = self.files.get(path)
        if found is None:
            return Response(404, b"not found\n")
        body, kind = found
        return Response(200, body, kind)

    async def answer(self, request: Request) -> Response:
        """The response to a request; a subclass may await here (the files never do)."""
        return self.respond(request.method, request.target)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._clients) >= MAX_CLIENTS:
            self._busy.log(logging.WARNING, "busy", "%s: %d connections open, the most served at"
                           " once: a new one from %s closed", self.url, len(self._clients),
                           _peer(writer))
            writer.close()
            return
        self._clients.add(writer)
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
            request = _request(head, _peer(writer))
            response = (
                Response(400, b"bad request\n") if request is None else await self.answer(request)
            )
            writer.write(_head(response))
            if request is None or request.method != "HEAD":
                writer.write(response.body)
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a client that went away or sent nothing useful: nothing to answer
        except OSError as exc:  # a reset, a broken pipe: the client's, not ours
            log.debug("web board client gone: %s", exc)
        finally:
            self._clients.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


def _request(head: bytes, client: str) -> Request | None:
    if len(head) > MAX_HEADER_BYTES:
        return None
    line, *fields = head.decode("latin-1").removesuffix("\r\n\r\n").split("\r\n")
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
        return None
    headers: dict[str, str] = {}
    for text in fields:
        name, colon, value = text.partition(":")
        if colon:
            headers.setdefault(name.strip().lower(), value.strip())
    return Request(parts[0], parts[1], headers, client)


def _peer(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


def _head(response: Response) -> bytes:
    lines = [
        f"HTTP/1.1 {response.status} {REASONS[response.status]}",
        f"Content-Type: {response.content_type}",
        f"Content-Length: {len(response.body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in (*response.headers, *SECURITY_HEADERS)),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def serve(server: WebBoardServer) -> None:
    """Start ``server``, say where the page is, and serve until cancelled."""
    await server.start()
    config = server.config
    ws = f"ws://{config.ws_host or '<page host>'}:{config.ws_port}{config.ws_path}"
    table = config.table or "(none: add ?table=ID to the address)"
    print(f"web board: {server.url}  table {table}, broker websockets {ws}", flush=True)
    try:
        await server.serve_forever()
    finally:
        await server.close()
