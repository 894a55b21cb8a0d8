"""A console open for months keeps its memory flat: now and then, while the operator is
not typing, Textual's shared caches let go of widgets long gone (``textual_workarounds``)
and the collector's full pass runs (``core/gc_passes.collect``).

Every ``COLLECT_SECONDS`` the cyclic garbage made since the last pass is collected (what
is not frozen: a few milliseconds at 200 agents, the fleet's rows being frozen); every
``THAW_SECONDS`` the pass takes the frozen objects too, which frees what died after it was
frozen. A pass that comes within ``QUIET_SECONDS`` of a key waits for the next tick, so a
long one never lands between a key and its screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual import events
from textual.app import App

from runeconsole.core import gc_passes
from runeconsole.tui.support import textual_workarounds

COLLECT_SECONDS = 60.0
THAW_SECONDS = 1800.0
QUIET_SECONDS = 2.0


class HeapUpkeep:
    def __init__(
        self,
        app: App[Any],
        clock: Callable[[], float] = time.monotonic,
        collect: Callable[..., int] = gc_passes.collect,
        release: Callable[[], int] = textual_workarounds.release_styles_memo,
    ) -> None:
        self.app = app
        self.clock = clock
        self._collect = collect
        self._release = release
        self.last_key = float("-inf")
        self.last_thaw = clock()
        self.passes = 0  # full passes run (thawed ones included)
        self.thawed = 0

    def start(self) -> None:
        self.app.set_interval(COLLECT_SECONDS, self.tick)

    def saw(self, event: events.Event) -> None:
        """An input event: the operator is at the keys (or the mouse)."""
        if isinstance(event, events.InputEvent):
            self.last_key = self.clock()

    def tick(self) -> None:
        now = self.clock()
        if now - self.last_key < QUIET_SECONDS:
            return  # typing: the next tick
        thaw = now - self.last_thaw >= THAW_SECONDS
        self._release()
        self._collect(thaw=thaw)
        self.passes += 1
        if thaw:
            self.last_thaw, self.thawed = now, self.thawed + 1
