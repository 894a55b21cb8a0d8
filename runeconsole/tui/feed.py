"""File-system events -> coalesced Textual messages.

The watcher thread only records which paths changed and posts one
``StateChanged`` when the set goes from empty to non-empty; the app drains the set
on the UI thread. A burst of thousands of writes therefore costs one message.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from textual.message import Message
from textual.message_pump import MessagePump

from runeconsole.adapters.fswatch import DirWatcher
from runeconsole.services.fleet import FleetChange


class StateChanged(Message):
    """Some watched files changed; drain ``ChangeFeed`` to learn which."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StateChanged)


class FleetChanged(Message):
    """The app's fleet model changed (``change`` says which keys); the panes that draw it
    redraw those rows."""

    def __init__(self, change: FleetChange) -> None:
        super().__init__()
        self.change = change


class ChangeFeed:
    def __init__(self, target: MessagePump, directories: Iterable[Path]) -> None:
        self._target = target
        self._pending: set[Path] = set()
        self._lock = threading.Lock()
        self._watcher = DirWatcher(directories, self._on_path)

    @property
    def unavailable(self) -> str | None:
        return self._watcher.unavailable

    def start(self) -> bool:
        return self._watcher.start()

    def stop(self) -> None:
        self._watcher.stop()

    def add(self, directory: Path) -> bool:
        return self._watcher.add(directory)

    def _on_path(self, path: Path) -> None:
        with self._lock:
            first = not self._pending
            self._pending.add(path)
        if first:
            self._target.post_message(StateChanged())

    def drain(self) -> set[Path]:
        with self._lock:
            pending, self._pending = self._pending, set()
        return pending
