"""What was worked out from a directory's entries, kept until the directory changes.

A directory's modification time changes whenever an entry is added, removed or renamed
into it (an atomic write is a rename), so what a listing of it said still holds while its
time and inode are the same. A directory that changed within the last ``RACY_NS`` of the
listing may change again within the same tick of its clock: what was found then is not
kept. The console's rescans of directories of tens of thousands of closed records (the
relayed questions and permission requests) cost a ``stat`` instead of a listing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
RACY_NS = 100_000_000


class DirCache(Generic[T]):
    def __init__(self) -> None:
        self._kept: dict[Path, tuple[tuple[int, int], T]] = {}
        self._lock = threading.Lock()  # the console's UI thread and its rescan worker

    def get(self, directory: Path, work: Callable[[], T], empty: T) -> T:
        """``work()`` over the directory, or what it gave last while nothing changed
        there; ``empty`` when the directory cannot be read."""
        try:
            info = os.stat(directory)
        except OSError:
            return empty
        stamp = (info.st_mtime_ns, info.st_ino)
        with self._lock:
            kept = self._kept.get(directory)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        started = time.time_ns()
        found = work()
        if started - info.st_mtime_ns > RACY_NS:
            with self._lock:
                self._kept[directory] = (stamp, found)
        return found
