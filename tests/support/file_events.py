"""How often the files of a directory are opened and replaced, as the kernel tells it
(inotify ``IN_OPEN`` and ``IN_MOVED_TO``, through watchdog): how many times a real process
reads and writes a real file, without patching it. A replace is how every writer here
writes (``core.files``: a temp file renamed over the old one).

Events of one watch arrive in order, so ``take`` first opens a mark file of its own and
waits for that: every open and replace made before it has been delivered by then. The
kernel merges an event into the one before it when both are the same and that one is
still unread: closes (``IN_CLOSE_NOWRITE``) are watched too, so that two reads in a row
stay two opens.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

from watchdog.events import (
    FileClosedNoWriteEvent,
    FileMovedEvent,
    FileOpenedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.inotify import InotifyObserver

MARK = ".file-events-mark"


class FileEvents(FileSystemEventHandler):
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._seen: list[tuple[str, str]] = []  # ("opened" | "replaced", file name)
        self._lock = threading.Lock()
        self._marked = threading.Event()
        self._observer = InotifyObserver()

    def __enter__(self) -> FileEvents:
        self.directory.mkdir(parents=True, exist_ok=True)
        kinds = [FileOpenedEvent, FileClosedNoWriteEvent, FileMovedEvent]
        self._observer.schedule(self, str(self.directory), event_filter=kinds)
        self._observer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._observer.stop()
        self._observer.join(timeout=10)
        (self.directory / MARK).unlink(missing_ok=True)

    def on_opened(self, event: FileSystemEvent) -> None:
        name = Path(str(event.src_path)).name
        if name == MARK:
            self._marked.set()
            return
        with self._lock:
            self._seen.append(("opened", name))

    def on_moved(self, event: FileSystemEvent) -> None:
        with self._lock:
            self._seen.append(("replaced", Path(str(event.dest_path)).name))

    def take(self, name: str) -> tuple[int, int]:
        """``(reads, writes)`` of ``name`` since the last ``take``: the times it was opened
        and replaced (every one made before this call)."""
        self._marked.clear()
        with open(self.directory / MARK, "ab"):  # an open, each time (touch may only utime)
            pass
        assert self._marked.wait(10), "inotify delivered no event for the mark file"
        with self._lock:
            seen, self._seen = self._seen, []
        return seen.count(("opened", name)), seen.count(("replaced", name))
