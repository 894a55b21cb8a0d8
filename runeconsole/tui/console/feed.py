"""File-system events -> coalesced Textual messages.

The watcher thread only records which paths changed and posts one
``StateChanged`` when the set goes from empty to non-empty; the app drains the set
on the UI thread. A burst of thousands of writes therefore costs one message. Messages
are also at least ``GAP`` seconds apart: a steady stream of writes (a fleet heartbeating,
170 writes a second at 10,000 agents) is drained a few writes at a time instead of one
message, read and repaint per write, for at most ``GAP`` more before a row moves. The
inotify watcher keeps that gap itself (it reads the kernel's queue once per ``GAP``);
over watchdog a timer does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path

from textual.message import Message
from textual.message_pump import MessagePump

from runeconsole.adapters.fswatch import DirWatcher

GAP = 0.02  # seconds between two StateChanged messages, at least


class StateChanged(Message):
    """Some watched files changed; drain ``ChangeFeed`` to learn which."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StateChanged)


class ChangeFeed:
    def __init__(self, target: MessagePump, directories: Iterable[Path]) -> None:
        self._target = target
        self._pending: set[Path] = set()
        self._lock = threading.Lock()
        self._posting = False  # a StateChanged is due and not yet posted
        self._posted_at = 0.0
        self._lost = 0  # the watcher's count of lost events, when last asked
        self._watcher = DirWatcher(directories, batch=self._on_paths, gap=GAP)

    @property
    def unavailable(self) -> str | None:
        return self._watcher.unavailable

    def start(self) -> bool:
        return self._watcher.start()

    def stop(self) -> None:
        self._watcher.stop()

    def add(self, directory: Path) -> bool:
        return self._watcher.add(directory)

    @property
    def reliable(self) -> bool:
        """Every change is an event (inotify, local file systems: ``DirWatcher``)."""
        return self._watcher.reliable

    def lost_since(self) -> bool:
        """True when events were lost since the last time this was asked."""
        lost = self._watcher.lost_events
        moved, self._lost = lost != self._lost, lost
        return moved

    def _on_paths(self, paths: Iterable[Path]) -> None:
        """A burst of the watcher's paths (one lock, at most one message)."""
        with self._lock:
            first = not self._pending and not self._posting
            self._pending.update(paths)
            first &= bool(self._pending)
            self._posting |= first
            wait = self._posted_at + GAP - time.monotonic()
        if not first:
            return
        if wait > 0 and not self._watcher.paced:  # else the watcher waited GAP itself
            timer = threading.Timer(wait, self._post)
            timer.daemon = True
            timer.start()
        else:
            self._post()

    def _post(self) -> None:
        with self._lock:
            self._posting, self._posted_at = False, time.monotonic()
        self._target.post_message(StateChanged())

    def drain(self) -> set[Path]:
        with self._lock:
            pending, self._pending = self._pending, set()
        return pending
