"""The consoles' toasts: the same one not shown twice in a row (``RepeatFilter``: a
flapping agent, a retried action), and at most three at once (``ToastShelf``): when one
more comes, the oldest are folded into one ``+N earlier`` toast that lists them, so a busy
moment (a monitor pass, a burst of budget warnings, a failing rescan) never covers the
table of an 80x24 pane.

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

from textual.content import Content
from textual.notifications import SeverityLevel

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

    def line(self) -> str:
        """The toast in one line, as a fold lists it."""
        text = self.message
        if self.markup:
            with contextlib.suppress(Exception):  # bad markup: as written
                text = Content.from_markup(text).plain
        first = text.strip().splitlines()[0] if text.strip() else ""
        line = f"{self.title}: {first}" if self.title else first
        return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


class ToastShelf:
    """What is up, and what to put up for one more toast (safe from any thread)."""

    def __init__(self, limit: int = MAX_TOASTS, clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.clock = clock
        self.shown: list[Note] = []
        self._lock = threading.Lock()

    def add(self, note: Note, seconds: float) -> tuple[bool, list[tuple[Note, float]]]:
        """Put up ``note`` for ``seconds``: (take every toast down first?, the toasts to
        put up, each with the seconds it has left)."""
        now = self.clock()
        with self._lock:
            self.shown = [n for n in self.shown if n.expires > now]
            self.shown.append(replace(note, expires=now + seconds))
            if len(self.shown) <= self.limit:
                return False, [(self.shown[-1], seconds)]
            cut = len(self.shown) - (self.limit - 1)
            self.shown = [fold(self.shown[:cut]), *self.shown[cut:]]
            return True, [(n, n.expires - now) for n in self.shown]

    def clear(self) -> None:
        with self._lock:
            self.shown = []


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
