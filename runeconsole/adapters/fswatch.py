"""Directory watching, reporting changed paths from a background thread.

On Linux the kernel's inotify is read directly (``inotify_simple``: the system calls and
the event records, nothing more): one thread blocks in ``poll`` and turns each batch of
events into paths. Elsewhere, or without that package, watchdog does it. watchdog's own
machinery (an emitter thread, a delayed queue that pairs moves, event objects, a
dispatcher thread) cost 8-9 % of a core at 172 atomic writes a second, against 1.6 %
read directly (``benchmarks/README.md``, issue 35), and a fleet of 10,000 agents
heartbeating once a minute writes that often.

``gap`` (seconds) makes the inotify thread wait that long after each batch before it
reads again, so a steady stream of writes reaches the callback a burst at a time, with
no timer of the caller's; ``batch`` takes each burst's paths in one call. Watching can
be unavailable (inotify limits, odd file systems); ``start`` then records why in
``unavailable`` and callers rely on their periodic rescan.

A writer's temp file (``core.files``: ``.NAME.PID.RANDOM.tmp``, renamed over ``NAME``
once written) is never reported: every reader skips it, and its creation, writes, close
and rename away are four of the five events of each atomic write. They are told apart
by name before any path is made for them (a heartbeating fleet's 860 events a second
are 170 paths).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import sys
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

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

from runeconsole.core.files import TEMP_SUFFIX

try:  # Linux only; watchdog stands in where it is missing
    from inotify_simple import INotify  # type: ignore[import-untyped]  # ships no types
    from inotify_simple import flags as inotify_flags
except ImportError:  # pragma: no cover - the suite runs on Linux with it installed
    INotify = None

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

BACKENDS = ("inotify", "watchdog")


def default_backend() -> str:
    return "inotify" if INotify is not None and sys.platform.startswith("linux") else "watchdog"


def written_temp(name: str) -> bool:
    """A writer's in-flight temp file (``core.files``' form): never reported."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


Batch = Callable[[Iterable[Path]], None]

# File systems whose every change is made by this kernel (so inotify sees it); a network
# file system (nfs, cifs, fuse.sshfs, ceph, 9p...) or anything unknown is not one.
LOCAL_FILE_SYSTEMS = frozenset(
    {
        "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "zfs", "f2fs",
        "overlay", "jfs", "reiserfs", "bcachefs", "nilfs2", "vfat", "exfat", "ntfs3",
    }
)  # fmt: skip
MOUNTINFO = "/proc/self/mountinfo"
OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def read_mountinfo() -> str | None:
    """Linux's ``mountinfo`` of this process (None where it cannot be read)."""
    try:
        with open(MOUNTINFO) as stream:
            return stream.read()
    except OSError:
        return None


def file_system_type(path: Path, mountinfo: str | None = None) -> str | None:
    """The type of the file system ``path`` is on (the mount nearest to it in Linux's
    ``mountinfo``), None where that cannot be told."""
    if mountinfo is None:
        mountinfo = read_mountinfo()
        if mountinfo is None:
            return None
    where = os.path.realpath(path)
    best, found = -1, None
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields[6:] or len(fields) < 5:
            continue
        # Spaces and the like are written as octal escapes (a space: ``\040``).
        point = OCTAL_ESCAPE.sub(lambda m: chr(int(m[1], 8)), fields[4])
        inside = where == point or where.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, found = len(point), fields[fields.index("-", 6) + 1]
    return found


def local_directory(path: Path, mountinfo: str | None = None) -> bool:
    """True when ``path`` is on a file system only this machine writes (``LOCAL_FILE_
    SYSTEMS``): inotify then sees every change to it. ``mountinfo``: as read once for
    several paths (read here when not given)."""
    return file_system_type(path, mountinfo) in LOCAL_FILE_SYSTEMS


class _Forward(FileSystemEventHandler):
    def __init__(self, batch: Batch) -> None:
        self._batch = batch

    def on_any_event(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                path = raw.decode() if isinstance(raw, bytes) else raw
                if not written_temp(os.path.basename(path)):
                    self._batch((Path(path),))


class DirWatcher:
    """Calls ``callback(path)`` from a background thread for each changed path, or
    ``batch(paths)`` once for each burst of them (the inotify thread's read; one path at
    a time over watchdog)."""

    def __init__(
        self,
        directories: Iterable[Path],
        callback: Callable[[Path], None] | None = None,
        *,
        batch: Batch | None = None,
        gap: float = 0.0,
        backend: str | None = None,
    ) -> None:
        self.directories = list(directories)
        self.backend = backend or default_backend()
        if self.backend not in BACKENDS:
            raise ValueError(f"watcher backend {self.backend!r}: one of {', '.join(BACKENDS)}")
        self.unavailable: str | None = None
        if batch is None:
            if callback is None:
                raise ValueError("a watcher needs a callback or a batch")
            batch = partial(_each, callback)
        self._callback = batch
        self._handler = _Forward(batch)
        self._gap = gap
        self._observer: BaseObserver | None = None
        self._inotify: _InotifyThread | None = None

    @property
    def running(self) -> bool:
        return self._observer is not None or self._inotify is not None

    @property
    def lost_events(self) -> int:
        """How many times events were lost since the start (the kernel's queue
        overflowed); watchdog does not say (0)."""
        return self._inotify.overflows if self._inotify is not None else 0

    @property
    def reliable(self) -> bool:
        """Every change to a watched directory's entries is an event: inotify read
        directly, each directory on a local file system (``local_directory``; a network
        file system's writes from another host are no event here), its thread still
        reading, and every directory that is there watched (one removed and made again
        is not: its new entries are no event)."""
        inotify = self._inotify
        if inotify is None or not inotify.reading:
            return False
        watched = inotify.watched()
        mountinfo = read_mountinfo()  # once for every directory (asked at every rescan)
        return all(
            local_directory(directory, mountinfo)
            and (directory in watched or not directory.is_dir())
            for directory in self.directories
        )

    @property
    def paced(self) -> bool:
        """The watcher itself keeps ``gap`` between two batches (the inotify thread)."""
        return self.backend == "inotify" and self._gap > 0

    def start(self) -> bool:
        try:
            if self.backend == "inotify":
                self._inotify = _InotifyThread(self._callback, self._gap)
            else:
                self._observer = Observer()
            for directory in self.directories:
                try:
                    directory.mkdir(parents=True, exist_ok=True)
                except OSError:
                    if not directory.is_dir():
                        continue  # cannot be made (a read-only root): nothing appears there
                self._watch(directory)
            if self._inotify is not None:
                self._inotify.start()
            elif self._observer is not None:
                self._observer.start()
        except OSError as exc:
            self.unavailable = f"file watching unavailable ({exc}); rescanning periodically"
            self._close()
            return False
        return True

    def _watch(self, directory: Path) -> None:
        if self._inotify is not None:
            self._inotify.watch(directory)
        elif self._observer is not None:
            self._observer.schedule(
                self._handler, str(directory), recursive=False, event_filter=CHANGES
            )

    def add(self, directory: Path) -> bool:
        """Also watch ``directory`` (one that appeared after ``start``); False if not watched."""
        if directory in self.directories:
            return self.running
        if not self.running:
            return False
        try:
            self._watch(directory)
        except OSError as exc:
            self.unavailable = f"cannot watch {directory} ({exc}); rescanning periodically"
            return False
        self.directories.append(directory)
        return True

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
        if self._inotify is not None:
            self._inotify.stop()
        self._close()

    def _close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
        self._observer = self._inotify = None


def _each(callback: Callable[[Path], None], paths: Iterable[Path]) -> None:
    """A batch given to a callback of one path, a path at a time: a caller's error on one
    path leaves the others reported (and the watching on)."""
    for path in paths:
        try:
            callback(path)
        except Exception:  # a caller's error must not end the watching (nor reach the
            # terminal a console draws on: logged below the default level)
            logging.getLogger(__name__).debug("watch callback failed", exc_info=True)


class _InotifyThread:
    """One inotify instance and the thread that reads it: each event's path (the watched
    directory joined with the entry's name; the directory itself for its own events)."""

    MASK = (
        inotify_flags.CREATE
        | inotify_flags.MODIFY
        | inotify_flags.ATTRIB
        | inotify_flags.CLOSE_WRITE
        | inotify_flags.MOVED_FROM
        | inotify_flags.MOVED_TO
        | inotify_flags.DELETE
        | inotify_flags.DELETE_SELF
        | inotify_flags.MOVE_SELF
        | inotify_flags.EXCL_UNLINK
        if INotify is not None
        else 0
    )

    def __init__(self, callback: Batch, gap: float) -> None:
        if INotify is None:
            raise OSError("inotify_simple is not installed")
        self._callback = callback
        self._gap = gap
        self._inotify: Any = INotify()
        self._dirs: dict[int, Path] = {}  # watch descriptor -> its directory
        self.overflows = 0  # times the kernel's queue overflowed (events lost)
        self._wake_read, self._wake_write = os.pipe()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="runeconsole-inotify", daemon=True)

    def watch(self, directory: Path) -> None:
        self._dirs[self._inotify.add_watch(directory, self.MASK)] = directory

    def start(self) -> None:
        self._thread.start()

    @property
    def reading(self) -> bool:
        return self._thread.is_alive()

    def watched(self) -> set[Path]:
        """The directories whose watch is in place (the kernel drops a directory's as it
        goes)."""
        return set(self._dirs.values())

    def stop(self) -> None:
        self._stopping = True
        os.write(self._wake_write, b"x")
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)

    def close(self) -> None:
        if self._thread.is_alive():
            return  # still reading (a join that timed out): the process's end closes them
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._inotify.close()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._inotify.fileno(), select.POLLIN)
        poller.register(self._wake_read, select.POLLIN)
        while not self._stopping:
            try:
                poller.poll()
                if self._stopping:
                    return
                events = self._inotify.read(timeout=0)
            except (OSError, ValueError):  # closed under us: nothing more to watch
                return
            paths = self._paths(events)
            if paths:
                try:
                    self._callback(paths)
                except Exception:  # a caller's error must not end the watching
                    logging.getLogger(__name__).debug("watch callback failed", exc_info=True)
            if self._gap:
                time.sleep(self._gap)

    def _paths(self, events: list[Any]) -> list[Path]:
        """The paths of a batch, each once, in the order first seen; writers' temp files
        left out before a path is made for them."""
        seen: dict[tuple[Path, str], None] = {}
        dirs = self._dirs
        for wd, mask, _, name in events:
            directory = dirs.get(wd)
            if directory is None:
                self.overflows += bool(mask & inotify_flags.Q_OVERFLOW)  # events lost
                continue  # the queue overflowed (wd -1), or a watch already gone
            if not written_temp(name):
                seen[directory, name] = None
            if mask & inotify_flags.IGNORED:  # the directory went: its watch with it
                dirs.pop(wd, None)
        return [directory / name if name else directory for directory, name in seen]
