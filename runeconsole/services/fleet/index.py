"""Which files of a directory changed since they were read, told by ``stat`` alone.

A rescan (the recovery from dropped file events) used to read every file again; at
10,000 agents that is 10,000 opens and parses every few seconds. ``StatIndex`` keeps,
per file, the ``(inode, mtime_ns, size)`` seen *before* its last read, lists the
directory with ``os.scandir`` (one ``lstat`` per entry read before, no open) and names
only the files whose stamp moved, the new ones and the vanished ones (a file's reader
takes its stamp from the descriptor it read, so a new file costs no ``lstat``; nor does
the first pass over a fleet). An atomic replace changes
the inode; a write in place changes the mtime or the size. A file whose mtime is within
one timestamp tick of the moment it was read may change again within the same tick: its
stamp is not trusted, so the next scan reads it again (git's "racy clean" rule). The
tick is taken to be ``RACY_NS`` (2 s) for whole-second mtimes (FAT, HFS+, ext3, some
network file systems) and ``FINE_RACY_NS`` (100 ms) for finer ones, whose tick is the
kernel's clock tick (10 ms at most); a file written a second before the console read it
is then not read a second time.

A *paced* scan (the console's periodic one) saves even the ``lstat``s while nothing can
have moved: an entry created, renamed over (the harness's atomic replace) or removed
moves the directory's own mtime, so while that stays put only the files whose stamp is
not trusted are looked at again. A write in place moves no directory mtime, so a full
pass still runs every ``full_seconds`` or every ``COST_FACTOR`` times its own CPU cost,
whichever is longer (a large fleet's pass stays about 1 % of a core).

A *watched* index (``watched``: the console's, while inotify follows the directory on a
local file system and has lost no event) trusts what events read: every change is an
event of its own, read when it comes. So a stamp is kept even when it was taken in the
same tick as a write (a heartbeating fleet's files are all read within milliseconds of
their write, and each was read again by every full pass), and a paced scan stats
nothing between its full passes however often the directory moves. Its full passes are
``WATCHED_STRETCH`` times as far apart (5 minutes by default, as a watch-fed cache's
resync): a net for a write no event told of (a local disk that another host also writes,
exported), not the way changes are found (at 10,000 agents a pass is about a tenth of a
second of CPU: every 30 s, it was a seventh of an idle console's). Events lost (the kernel's
queue overflowed: ``lost``) leave every stamp untrusted, so the next paced scan reads
every file again. A root on a network file system is never watched, so it is stat'ed in
full every ``full_seconds``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from runeconsole.core.errors import RuneError
from runeconsole.core.files import is_temp_name, remove_orphan_temp

Stamp = tuple[int, int, int]  # st_ino, st_mtime_ns, st_size
RACY_NS = 2_000_000_000
FINE_RACY_NS = 100_000_000
FULL_SECONDS = 30.0  # a paced scan's longest stretch without a stat of every file
COST_FACTOR = 100  # ... stretched to this many times the last full pass's CPU time
WATCHED_STRETCH = 10  # ... and this many times as far apart while events tell of every change


def stamp_of(info: os.stat_result) -> Stamp:
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def trusted(stamp: Stamp | None, read_at_ns: int) -> Stamp | None:
    """``stamp``, or None when the file was written too close to its read to tell a later
    write in the same timestamp tick apart (it is then read again on the next scan)."""
    if stamp is None:
        return None
    mtime_ns = stamp[1]
    tick = RACY_NS if mtime_ns % 1_000_000_000 == 0 else FINE_RACY_NS
    return None if read_at_ns - mtime_ns < tick else stamp


def stat_path(path: str) -> Stamp | None:
    """The stamp of ``path`` now (not following a link), None if it is gone."""
    try:
        return stamp_of(os.lstat(path))
    except OSError:
        return None


@dataclass
class Listing:
    """One scan: files to read (key -> path, with the stamp each had when listed: None
    when it was not stat'ed, as a file never read is not, or its ``lstat`` failed) and
    keys whose file is gone. A reader that can takes the stamp of the file it opened."""

    changed: dict[str, tuple[str, Stamp | None]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)


class StatIndex:
    """Stamps of the ``*.json`` files of one directory, keyed by name without ``.json``.

    Not thread-safe by itself: its owner (``FleetModel``) guards it."""

    def __init__(self, directory: Path, full_seconds: float = FULL_SECONDS) -> None:
        self.directory = directory
        self.stamps: dict[str, Stamp | None] = {}
        self.full_seconds = full_seconds
        self._listed: Stamp | None = None  # the directory's stamp at the last full pass
        self._passed = False  # a full pass was made (and no event lost since)
        self._losses = 0  # times events were lost (a pass under way when they were counts not)
        self._full_at = 0.0  # monotonic moment of the last full pass
        self._full_cost = 0.0  # its CPU seconds
        self.watched = False  # events tell of every change (see the module's docstring)

    def _directory_stamp(self) -> Stamp | None:
        """The directory's stamp, None when it moved too recently to be trusted."""
        try:
            return trusted(stamp_of(os.stat(self.directory)), time.time_ns())
        except OSError:
            return None

    def _unmoved(self) -> bool:
        """True while no entry can have been created, replaced or removed since the last
        full pass, and no full pass is due."""
        if not self._passed or time.monotonic() >= self._next_full():
            return False
        return self.watched or (
            self._listed is not None and self._directory_stamp() == self._listed
        )

    def _next_full(self) -> float:
        """The monotonic moment a paced scan next stats every file (worked out when asked:
        a root found shared, no longer watched, is due ``full_seconds`` after its last)."""
        every = self.full_seconds * (WATCHED_STRETCH if self.watched else 1)
        return self._full_at + max(every, COST_FACTOR * self._full_cost)

    def entries(self) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """(key, entry) of every ``*.json`` entry (links and FIFOs too: reading one says
        why it is unusable); orphaned temp files of killed writers are removed."""
        try:
            listing = list(os.scandir(self.directory))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise RuneError(
                f"cannot list {self.directory}: {exc.strerror}; it should be a directory"
            ) from None
        for entry in listing:
            name = entry.name
            if is_temp_name(name):
                remove_orphan_temp(self.directory, name)
            elif name.endswith(".json"):
                yield name[: -len(".json")], entry

    def scan(self, known: dict[str, Stamp | None] | None = None, *, paced: bool = False) -> Listing:
        """What changed against ``known`` (default: this index's stamps); ``paced``: by the
        files whose stamp is untrusted alone while the directory has not moved."""
        known = self.stamps if known is None else known
        if paced and self._unmoved():
            return self._recheck(known)
        started, directory, losses = time.thread_time(), self._directory_stamp(), self._losses
        listing = self._list(known)
        self._listed, self._passed = directory, losses == self._losses
        self._full_at, self._full_cost = time.monotonic(), time.thread_time() - started
        return listing

    def _recheck(self, known: dict[str, Stamp | None]) -> Listing:
        """The files read too close to a write to trust their stamp, stat'ed again."""
        listing = Listing()
        for key, stamp in known.items():
            if stamp is None:
                path = os.path.join(self.directory, key + ".json")
                try:
                    listing.changed[key] = (path, stamp_of(os.lstat(path)))
                except FileNotFoundError:
                    listing.gone.add(key)
                except OSError:
                    listing.changed[key] = (path, None)  # reading it says why
        return listing

    def _list(self, known: dict[str, Stamp | None]) -> Listing:
        """Only the entries with a trusted stamp are stat'ed: the others (new files, those
        read too close to a write) are read anyway, and their reader takes the stamp
        (``Listing``). So a first pass over 10,000 files lists them and stats none."""
        listing = Listing()
        present = set()
        for key, entry in self.entries():
            present.add(key)
            old = known.get(key)
            if old is None:
                listing.changed[key] = (entry.path, None)
                continue
            try:
                stamp: Stamp | None = stamp_of(entry.stat(follow_symlinks=False))
            except OSError:
                stamp = None
            if stamp != old:
                listing.changed[key] = (entry.path, stamp)
        listing.gone = {key for key in known if key not in present}
        return listing

    def remember(self, key: str, stamp: Stamp | None, read_at_ns: int | None = None) -> None:
        """``stamp`` was taken before ``key``'s file was read at ``read_at_ns``."""
        if self.watched:  # a later write in the same tick is an event, read then
            self.stamps[key] = stamp
            return
        now = time.time_ns() if read_at_ns is None else read_at_ns
        self.stamps[key] = trusted(stamp, now)

    def forget(self, key: str) -> None:
        self.stamps.pop(key, None)

    def lost(self) -> None:
        """Events were lost: every file is read again by the next scan, paced or not."""
        self.stamps = dict.fromkeys(self.stamps)
        self._passed, self._losses = False, self._losses + 1
