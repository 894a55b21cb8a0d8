"""Directory watching with watchdog (inotify), reporting changed paths.

Watching can be unavailable (inotify limits, odd file systems); ``start`` then
records why in ``unavailable`` and callers rely on their periodic rescan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer


class _Forward(FileSystemEventHandler):
    def __init__(self, callback: Callable[[Path], None]) -> None:
        self._callback = callback

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                path = raw.decode() if isinstance(raw, bytes) else raw
                self._callback(Path(path))


class DirWatcher:
    """Calls ``callback(path)`` from a background thread for each changed path."""

    def __init__(self, directories: Iterable[Path], callback: Callable[[Path], None]) -> None:
        self.directories = list(directories)
        self._callback = callback
        self._observer: Observer | None = None
        self.unavailable: str | None = None

    def start(self) -> bool:
        observer = Observer()
        handler = _Forward(self._callback)
        try:
            for directory in self.directories:
                directory.mkdir(parents=True, exist_ok=True)
                observer.schedule(handler, str(directory), recursive=False)
            observer.start()
        except OSError as exc:
            self.unavailable = f"file watching unavailable ({exc}); rescanning periodically"
            return False
        self._observer = observer
        return True

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None
