"""The consoles' toasts: the same one not shown twice in a row (``RepeatFilter``: a
flapping agent, a retried action), and at most three at once (``ToastShelf``): when one
more comes, the oldest are folded into one ``+N earlier`` toast that lists them, so a busy
moment (a monitor pass, a burst of budget warnings, a failing rescan) never covers the
table of an 80x24 pane.

Where the operator reads (the review's diff, a conversation, the merge queue's log) the
toasts fold further, to one line at the bottom edge, over the footer's right end: the
newest toast's first line and how many more are up (``one_line``). A screen says so by
its class ``-toasts-folded`` (``TOASTS_FOLDED``), a pane by the same class, which the
console's screen takes while the pane is shown (``Toasts.follow_tab``); ``console.tcss``
draws them. Coming back to another screen, the toasts still up are shown whole again.

Textual's toasts are taken down only all at once (``App.clear_notifications``), so the
shelf keeps its own list of what it put up and when each goes: folding takes every toast
down and puts up the fold and the newest, each for the time it had left. A toast
dismissed by a click is not known here: it comes back if a fold follows while it would
still have been up.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from textual.app import App
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget

from runeconsole.tui.support.textual_workarounds import sweep_toast_holders

TOASTS_FOLDED = "-toasts-folded"  # a screen's class (or a pane's): its toasts in one line
MAX_TOASTS = 3
REPEAT_SECONDS = 30.0  # the same toast again within this long is not shown
FOLDED_LINES = 3  # a fold's lines at most (the last "…and N more" when they do not fit)
LINE_CHARS = 30  # a folded toast's line, cut to fit a narrow toast unwrapped
RANK: dict[SeverityLevel, int] = {"information": 0, "warning": 1, "error": 2}


class RepeatFilter:
    """Remembers the toasts shown in the last ``REPEAT_SECONDS`` (safe from any thread)."""

    def __init__(self, seconds: float = REPEAT_SECONDS) -> None:
        self.seconds = seconds
        self._seen: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def fresh(self, title: str, message: str) -> bool:
        """True, and remembered, unless the same toast was shown moments ago."""
        now = time.monotonic()
        with self._lock:
            self._seen = {k: t for k, t in self._seen.items() if now - t < self.seconds}
            if (title, message) in self._seen:
                return False
            self._seen[(title, message)] = now
            return True


@dataclass(frozen=True)
class Note:
    """One toast as shown: ``folded`` counts the toasts a fold stands for (1: itself)."""

    title: str
    message: str
    severity: SeverityLevel = "information"
    markup: bool = True
    expires: float = 0.0
    folded: int = 1
    lines: tuple[str, ...] = ()  # a fold's: a line for each of the oldest it stands for

    def line(self, chars: int | None = LINE_CHARS) -> str:
        """The toast in one line, as a fold lists it (cut to ``chars``; None: whole)."""
        text = self.message
        if self.markup:
            with contextlib.suppress(Exception):  # bad markup: as written
                text = Content.from_markup(text).plain
        first = text.strip().splitlines()[0] if text.strip() else ""
        line = f"{self.title}: {first}" if self.title else first
        if chars is None or len(line) <= chars:
            return line
        return line[: chars - 1] + "…"


class ToastShelf:
    """What is up, and what to put up for one more toast (safe from any thread)."""

    def __init__(self, limit: int = MAX_TOASTS, clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.clock = clock
        self.shown: list[Note] = []
        self.folded = False  # shown as one line (``one_line``), not a toast each
        self._lock = threading.Lock()

    def add(self, note: Note, seconds: float) -> tuple[bool, list[tuple[Note, float]]]:
        """Put up ``note`` for ``seconds``: (take every toast down first?, the toasts to
        put up, each with the seconds it has left)."""
        now = self.clock()
        with self._lock:
            self.shown = [n for n in self.shown if n.expires > now]
            self.shown.append(replace(note, expires=now + seconds))
            over = len(self.shown) > self.limit
            if over:
                cut = len(self.shown) - (self.limit - 1)
                self.shown = [fold(self.shown[:cut]), *self.shown[cut:]]
            if self.folded:
                return True, [one_line(self.shown, now)]
            if not over:
                return False, [(self.shown[-1], seconds)]
            return True, [(n, n.expires - now) for n in self.shown]

    def refold(self, folded: bool) -> tuple[bool, list[tuple[Note, float]]]:
        """From now on the toasts up are shown as one line (``folded``) or a toast each:
        (take every toast down first?, the toasts to put up), as ``add`` says."""
        now = self.clock()
        with self._lock:
            if folded == self.folded:
                return False, []
            self.folded = folded
            self.shown = [n for n in self.shown if n.expires > now]
            if not self.shown:
                return False, []
            if folded:
                return True, [one_line(self.shown, now)]
            return True, [(n, n.expires - now) for n in self.shown]

    def clear(self) -> None:
        with self._lock:
            self.shown = []


def one_line(notes: list[Note], now: float) -> tuple[Note, float]:
    """The toasts up as one line, with the seconds it stays: the newest's first line after
    how many more there are (``+2 · ``: the count first, where a narrow line never cuts
    it), as severe as the worst of them, up for as long as the longest."""
    newest = notes[-1]
    text = newest.lines[-1] if newest.folded > 1 and newest.lines else newest.line(None)
    more = sum(note.folded for note in notes) - 1
    expires = max(note.expires for note in notes)
    line = Note(
        "",
        f"+{more} · {text}" if more else text,
        max((note.severity for note in notes), key=RANK.__getitem__),
        markup=False,
        expires=expires,
        folded=more + 1,
    )
    return line, expires - now


def fold(notes: list[Note]) -> Note:
    """One toast for ``notes`` (a fold among them adds its own): how many, the worst
    severity, a line for each of the oldest, up for as long as the longest of them."""
    lines: list[str] = []
    for note in notes:
        lines += note.lines if note.folded > 1 else [note.line()]
    lines = lines[:FOLDED_LINES]
    count = sum(note.folded for note in notes)
    shown = lines
    if count > FOLDED_LINES:
        kept = FOLDED_LINES - 1
        shown = [*lines[:kept], f"…and {count - kept} more"]
    return Note(
        f"+{count} earlier",
        "\n".join(shown),
        max((note.severity for note in notes), key=RANK.__getitem__),
        markup=False,
        expires=max(note.expires for note in notes),
        folded=count,
        lines=tuple(lines),
    )


class Toasts:
    """The console's toasts, as ``PanesApp.notify`` hands each here: a repeat dropped, at
    most three up, one line where the screen shown reads (safe from any thread, as
    Textual's ``notify``). Textual's own ``notify`` and ``clear_notifications`` put them
    up and take them down (``App.notify(app, …)``: the app's override sends them here)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.repeats = RepeatFilter()  # the same toast twice in a row: shown once
        self.shelf = ToastShelf()  # at most three at once

    def start(self) -> None:
        """Follow the screens: on one of class ``TOASTS_FOLDED`` the toasts fold to a line."""
        self.app.screen_change_signal.subscribe(self.app, self.follow)

    def notify(
        self, message: str, title: str, severity: SeverityLevel, timeout: float | None, markup: bool
    ) -> None:
        if not self.repeats.fresh(title, message):
            return
        seconds = self.app.NOTIFICATION_TIMEOUT if timeout is None else timeout
        self.put_up(*self.shelf.add(Note(title, message, severity, markup), seconds))

    def clear(self) -> None:
        self.shelf.clear()
        App.clear_notifications(self.app)
        self.app.call_later(self.sweep)

    def follow(self, screen: Screen[Any]) -> None:
        """The screen shown changed (or its class): its toasts whole or in one line."""
        self.put_up(*self.shelf.refold(screen.has_class(TOASTS_FOLDED)))

    def follow_tab(self, pane: Widget) -> None:
        """A pane was shown: its screen folds the toasts while the pane (or a widget in
        it) says so."""
        screen = pane.screen
        folded = pane.has_class(TOASTS_FOLDED) or bool(pane.query(f".{TOASTS_FOLDED}"))
        screen.set_class(folded, TOASTS_FOLDED)
        if screen is self.app.screen:
            self.follow(screen)

    def put_up(self, clear: bool, shown: list[tuple[Note, float]]) -> None:
        if clear:  # queued: it runs before the toasts below are put up, from any thread
            self.app.call_later(App.clear_notifications, self.app)
            self.app.call_later(self.sweep)
        for note, left in shown:
            App.notify(
                self.app,
                note.message,
                title=note.title,
                severity=note.severity,
                timeout=left,
                markup=note.markup,
            )

    def sweep(self) -> None:
        sweep_toast_holders(self.app.screen)
