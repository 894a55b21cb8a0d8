"""A real browser on the served console: Debian's Chromium (never a downloaded one),
driven by Playwright, with the screen read back from the terminal bytes it receives.

textual-serve draws with xterm.js on a canvas, so there is no text in the page to read;
``BrowserTerminal`` feeds every binary WebSocket frame the page receives into a pyte
screen of the same size (the size the page asked for in its WebSocket URL and resize
messages), which is what the page shows. Clicks go to the middle of a character cell,
as a finger's tap does.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 390, "height": 844}  # a phone's viewport, in CSS pixels


def chromium_path() -> str:
    """The system Chromium, or the test is skipped and says why (``.ci/run`` installs it)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    return CHROMIUM


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium through Playwright's sync API."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


class BrowserTerminal:
    """One browser page (one session) on the served console, and its screen."""

    def __init__(self, page: object) -> None:
        import pyte

        self.page = page
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)
        self.frames = 0
        self.last_frame = 0.0  # time.monotonic() of the last screen bytes received
        self.sockets: list[object] = []
        page.on("websocket", self._socket)  # type: ignore[attr-defined]

    def _socket(self, socket: object) -> None:
        query = parse_qs(urlsplit(socket.url).query)  # type: ignore[attr-defined]
        if "width" not in query:
            return  # not textual.js's terminal (a socket a test opens itself)
        self.sockets.append(socket)
        self._resize(int(query["width"][0]), int(query["height"][0]))
        socket.on("framereceived", self._received)  # type: ignore[attr-defined]
        socket.on("framesent", self._sent)  # type: ignore[attr-defined]

    def _resize(self, columns: int, lines: int) -> None:
        self.screen.resize(lines, columns)

    def _received(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            self.stream.feed(payload)
            self.frames += 1
            self.last_frame = time.monotonic()

    def _sent(self, payload: bytes | str) -> None:
        if isinstance(payload, str) and payload.startswith('["resize"'):
            size = json.loads(payload)[1]
            self._resize(int(size["width"]), int(size["height"]))

    # -- reading --------------------------------------------------------------------------

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def pump(self, millis: int = 20) -> None:
        """Let Playwright deliver what arrived (its events run while it is waited on)."""
        self.page.wait_for_timeout(millis)  # type: ignore[attr-defined]

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.text():
            assert time.monotonic() < deadline, f"{text!r} not on screen:\n{self.text()}"
            self.pump()

    def wait_until_gone(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text in self.text():
            assert time.monotonic() < deadline, f"{text!r} still on screen:\n{self.text()}"
            self.pump()

    def find(self, text: str) -> tuple[int, int]:
        """(column, line) of the first cell of ``text`` on screen."""
        for line, shown in enumerate(self.screen.display):
            column = shown.find(text)
            if column >= 0:
                return column, line
        raise AssertionError(f"{text!r} not on screen:\n{self.text()}")

    def find_button(self, label: str) -> tuple[int, int]:
        """(column, line) of a button's label: Textual draws a button's top edge (``▔``)
        on the line above its label."""
        lines = self.screen.display
        for line in range(1, len(lines)):
            column = lines[line].find(label)
            while column >= 0:
                if lines[line - 1][column : column + len(label)].strip("▔") == "":
                    return column, line
                column = lines[line].find(label, column + 1)
        raise AssertionError(f"no button {label!r} on screen:\n{self.text()}")

    # -- acting ---------------------------------------------------------------------------

    def settle(self, quiet: float = 0.3, timeout: float = 10.0) -> None:
        """Wait until no screen bytes arrived for ``quiet`` seconds, so a tap goes where
        the screen shows what is being tapped, not where a frame still on its way moves it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() - self.last_frame < quiet and time.monotonic() < deadline:
            self.pump(50)

    def tap_button(self, label: str) -> None:
        self.settle()
        self.tap_at(*self.find_button(label))

    def tap_until(self, text: str, shown: str, timeout: float = 60.0) -> None:
        """Tap ``text`` until ``shown`` is on screen, as an operator taps again when the
        first tap came before the console had read what it opens."""
        deadline = time.monotonic() + timeout
        while True:
            self.tap(text)
            try:
                self.wait_for(shown, timeout=min(5.0, max(0.1, deadline - time.monotonic())))
                return
            except AssertionError:
                if time.monotonic() >= deadline:
                    raise

    def tap(self, text: str) -> None:
        """Click the middle of the first cell of ``text``, as a finger taps it."""
        self.settle()
        self.tap_at(*self.find(text))

    def tap_at(self, column: int, line: int) -> None:
        box = self.page.locator(".xterm-screen").bounding_box()  # type: ignore[attr-defined]
        width = box["width"] / self.screen.columns
        height = box["height"] / self.screen.lines
        self.page.mouse.click(  # type: ignore[attr-defined]
            box["x"] + (column + 0.5) * width, box["y"] + (line + 0.5) * height
        )

    def press(self, key: str) -> None:
        """A key typed into the terminal (xterm.js takes keys through its text area)."""
        self.page.focus(".xterm-helper-textarea")  # type: ignore[attr-defined]
        self.page.keyboard.press(key)  # type: ignore[attr-defined]


@contextlib.contextmanager
def session(browser: object, link: str, viewport: dict[str, int] | None = None):
    """A new browser context (its own cookies) with one page opened on ``link``."""
    context = browser.new_context(viewport=viewport or {"width": 1200, "height": 700})  # type: ignore[attr-defined]
    try:
        page = context.new_page()
        terminal = BrowserTerminal(page)
        page.goto(link)
        yield terminal
    finally:
        context.close()
