"""Headless Debian Chromium driven over the DevTools protocol, for the web board's test.

Just what a page test needs: open a page at a given window size, evaluate JavaScript, wait
for a condition, take a screenshot, and collect the page's console errors and uncaught
exceptions. The protocol goes over one WebSocket (the ``websockets`` package); the browser
is the system's ``/usr/bin/chromium``, never a downloaded one.

    async with Chromium.launch(tmp_path) as browser:
        page = await browser.open(url, width=1920, height=1080)
        await page.wait_for("document.body.dataset.link === 'connected'")
        await page.screenshot(path)
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, BinaryIO, Final

from websockets.asyncio.client import ClientConnection, connect

CHROMIUM: Final = "/usr/bin/chromium"
START_TIMEOUT: Final = 30.0  # seconds for the browser to open its DevTools port
CALL_TIMEOUT: Final = 30.0  # seconds for one protocol call
POLL: Final = 0.05  # seconds between evaluations in wait_for
STOP_TIMEOUT: Final = 5.0
FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--hide-scrollbars",
    "--mute-audio",
    "--force-device-scale-factor=1",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)


class BrowserError(RuntimeError):
    """The browser would not start, a protocol call failed, or the page threw."""


def chromium_path() -> str | None:
    """The system Chromium, if it is installed."""
    return CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")


class Page:
    """One tab, attached through a flat protocol session."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session
        self.console: list[str] = []
        """Console messages of level warning or error, and uncaught exceptions."""
        self.loaded = asyncio.Event()

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One protocol call in this tab's session."""
        return await self.browser.call(method, session=self.session, **params)

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited if it is a promise)."""
        reply = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression!r} threw: {text}")
        return reply["result"].get("value")

    async def wait_for(self, expression: str, limit: float = 10.0) -> Any:
        """Evaluate ``expression`` until it is truthy; its value, or TimeoutError naming it.

        ``limit`` is in seconds. A JavaScript value is truthy here as Python sees it once
        returned by value: a DOM element comes back as ``{}``, so write ``!!element``.
        """
        deadline = time.monotonic() + limit
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"still false after {limit} s: {expression}\nconsole: {self.console}"
                )
            await asyncio.sleep(POLL)

    async def screenshot(self, path: Path, scale: float = 1.0) -> Path:
        """A PNG of the viewport (drawn at ``scale``), written to ``path``."""
        params: dict[str, Any] = {"format": "png"}
        if scale != 1.0:
            size = await self.evaluate("[innerWidth, innerHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": scale}
        reply = await self.call("Page.captureScreenshot", **params)
        _write(path, base64.b64decode(reply["data"]))
        return path

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Page.loadEventFired":
            self.loaded.set()
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            args = params.get("args", [])
            texts = [str(a.get("value", a.get("description", ""))) for a in args]
            self.console.append(f"console.{params['type']}: {' '.join(texts)}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            self.console.append(f"uncaught: {text}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.console.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())


class Chromium:
    """A headless Chromium process and its DevTools connection."""

    def __init__(self, process: asyncio.subprocess.Process, folder: Path) -> None:
        self.process = process
        self.folder = folder
        self._socket: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._pages: dict[str, Page] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def launch(cls, folder: Path) -> AsyncIterator[Chromium]:
        """Start the browser with an empty profile in ``folder``; stop it on exit."""
        path = chromium_path()
        if path is None:
            raise BrowserError("chromium is not installed (scripts/setup --system installs it)")
        profile, log = _prepare(folder)
        with log:
            process = await asyncio.create_subprocess_exec(
                path,
                *FLAGS,
                f"--user-data-dir={profile}",
                "about:blank",
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopped as a whole
            )
        browser = cls(process, folder)
        try:
            await browser._connect(profile / "DevToolsActivePort")
            yield browser
        finally:
            await browser.close()

    async def _connect(self, port_file: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while (address := _devtools_address(port_file)) is None:
            if self.process.returncode is not None:
                raise BrowserError(f"chromium exited at start:\n{self.log()}")
            if time.monotonic() > deadline:
                raise BrowserError(f"chromium did not open its DevTools port:\n{self.log()}")
            await asyncio.sleep(POLL)
        self._socket = await connect(address, max_size=None, ping_interval=None)
        self._reader = asyncio.create_task(self._read(), name="cdp-reader")

    def log(self) -> str:
        """What the browser printed."""
        try:
            return (self.folder / "chromium.log").read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return ""

    async def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """One protocol call; its result, or BrowserError with the protocol's error."""
        if self._socket is None:
            raise BrowserError("not connected")
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[number] = future
        await self._socket.send(json.dumps(message))
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                return await future
        finally:
            self._pending.pop(number, None)

    async def open(self, url: str, width: int = 1920, height: int = 1080) -> Page:
        """A new tab of ``width`` x ``height`` CSS pixels showing ``url``, once it has loaded.

        Each tab gets a window of its own, so that several stay visible: a hidden tab runs
        no animation frames, and the board draws in them.
        """
        target = await self.call("Target.createTarget", url="about:blank", newWindow=True)
        attached = await self.call(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        page = Page(self, attached["sessionId"])
        self._pages[page.session] = page
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            await page.call(domain)
        await page.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        await page.call("Page.navigate", url=url)
        async with asyncio.timeout(CALL_TIMEOUT):
            await page.loaded.wait()
        return page

    async def _read(self) -> None:
        assert self._socket is not None
        async for raw in self._socket:
            message = json.loads(raw)
            if "id" in message:
                future = self._pending.get(message["id"])
                if future is None or future.done():
                    continue
                if "error" in message:
                    future.set_exception(BrowserError(f"protocol error: {message['error']}"))
                else:
                    future.set_result(message.get("result", {}))
            elif (page := self._pages.get(message.get("sessionId", ""))) is not None:
                page.on_event(message.get("method", ""), message.get("params", {}))

    async def close(self) -> None:
        """Close the browser (gracefully, then by signal) and the connection; idempotent."""
        if self._socket is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(STOP_TIMEOUT):
                    await self.call("Browser.close")
            await self._socket.close()
            self._socket = None
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        await self._stop_process()

    async def _stop_process(self) -> None:
        try:
            async with asyncio.timeout(STOP_TIMEOUT):
                await self.process.wait()
        except TimeoutError:
            _kill_group(self.process.pid)
            await self.process.wait()
        _kill_group(self.process.pid)  # helpers left in its group, if any


def _prepare(folder: Path) -> tuple[Path, BinaryIO]:
    """An empty profile folder and the browser's log file, in ``folder``."""
    profile = folder / "profile"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "DevToolsActivePort").unlink(missing_ok=True)  # a previous run's port
    return profile, (folder / "chromium.log").open("wb")


def _devtools_address(port_file: Path) -> str | None:
    """The browser's DevTools WebSocket address, once it has written its port file."""
    try:
        lines = port_file.read_text().splitlines()
    except FileNotFoundError:
        return None
    return f"ws://127.0.0.1:{lines[0]}{lines[1]}" if len(lines) >= 2 else None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
