"""Directory watching with watchdog (inotify), reporting changed paths.

Watching can be unavailable (inotify limits, odd file systems); ``start`` then
records why in ``unavailable`` and callers rely on their periodic rescan.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

# watchdog complains on stderr when an event races ``stop()`` (as a warning, or as an
# error in newer versions); harmless, and it would land in the output of commands that
# scripts read.
logging.getLogger("watchdog").setLevel(logging.ERROR)
logging.getLogger("watchdog.observers.inotify").addFilter(
    lambda record: "called when the thread is inactive" not in record.getMessage()
)


# What changes a file or a directory's entries; watchdog turns the list into the inotify
# mask, so opens and reads (``IN_OPEN``, ``IN_CLOSE_NOWRITE``: the console's own reads, an
# ``agents --json`` run by anyone) are never queued by the kernel, let alone by watchdog.
CHANGES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]


class _Forward(FileSystemEventHandler):
    def __init__(self, callback: Callable[[Path], None]) -> None:
        self._callback = callback

    def on_any_event(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                path = raw.decode() if isinstance(raw, bytes) else raw
                self._callback(Path(path))


class DirWatcher:
    """Calls ``callback(path)`` from a background thread for each changed path."""

    def __init__(self, directories: Iterable[Path], callback: Callable[[Path], None]) -> None:
        self.directories = list(directories)
        self._observer: BaseObserver | None = None
        self._handler = _Forward(callback)
        self.unavailable: str | None = None

    def start(self) -> bool:
        observer = Observer()
        try:
            for directory in self.directories:
                try:
                    directory.mkdir(parents=True, exist_ok=True)
                except OSError:
                    if not directory.is_dir():
                        continue  # cannot be made (a read-only root): nothing appears there
                self._schedule(observer, directory)
            observer.start()
        except OSError as exc:
            self.unavailable = f"file watching unavailable ({exc}); rescanning periodically"
            return False
        self._observer = observer
        return True

    def _schedule(self, observer: BaseObserver, directory: Path) -> None:
        observer.schedule(self._handler, str(directory), recursive=False, event_filter=CHANGES)

    def add(self, directory: Path) -> bool:
        """Also watch ``directory`` (one that appeared after ``start``); False if not watched."""
        if directory in self.directories:
            return self._observer is not None
        if self._observer is None:
            return False
        try:
            self._schedule(self._observer, directory)
        except OSError as exc:
            self.unavailable = f"cannot watch {directory} ({exc}); rescanning periodically"
            return False
        self.directories.append(directory)
        return True

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None
