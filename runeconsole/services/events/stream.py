"""``runeconsole events``: a project's state as one JSON object per line.

A stream begins with the whole state, so a reader never needs a second command::

    {"event": "snapshot", "protocol": 1, "version": "…", "root": "/…", "tmux_socket": …}
    {"event": "upsert", "kind": "agent", "key": "worker-a", "data": {…}}
    …
    {"event": "ready", "at": "…Z", "rows": 42}

then one line per change, as it happens::

    {"event": "upsert", "kind": "question", "key": "…", "data": {…}}
    {"event": "remove", "kind": "agent", "key": "worker-a"}
    {"event": "heartbeat", "at": "…Z"}

A heartbeat is written when nothing else was for ``heartbeat`` seconds: a reader tells a
quiet stream from a dead one, and the writer learns that its reader has gone.
``EventStream`` turns file events, rescans and ticks into those lines; ``follow`` drives
it from a directory watcher (``adapters.fswatch``) and a periodic rescan that recovers
what watching missed. No Textual: a dashboard, a script and a remote console read the
same lines.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from runeconsole import __version__
from runeconsole.adapters.fswatch import DirWatcher
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.bridge.presence import ConsolePresence
from runeconsole.services.events.sections import RowKey, Rows, Section, sections_of
from runeconsole.services.project import Project
from runeconsole.services.supervision.settings import SupervisorSettings

PROTOCOL = 1
PROBLEM = "problem"  # a section that cannot be read now: {"section", "message"}
# Fields that move with the clock alone: a row whose other fields did not change is not
# sent again for them (a reader computes ages from the timestamps).
VOLATILE = frozenset({"age_seconds", "seconds_left"})

Event = dict[str, Any]


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in VOLATILE}


class EventStream:
    """The state a stream has told its reader, and the events that bring it up to date."""

    def __init__(self, project: Project, sections: list[Section] | None = None) -> None:
        self.project = project
        self.sections = sections if sections is not None else sections_of(project)
        self.rows: dict[RowKey, dict[str, Any]] = {}
        self._owned: list[set[RowKey]] = [set() for _ in self.sections]
        self._dirs: list[set[Path]] = [set() for _ in self.sections]

    def now(self) -> str:
        return iso_z(self.project.clock.now())

    def watch_dirs(self) -> set[Path]:
        """Every directory some section follows (asked again on each rescan)."""
        for index, section in enumerate(self.sections):
            # what is wrong is told by the section's read; its last dirs stay watched
            with contextlib.suppress(RuneError, OSError):
                self._dirs[index] = set(section.watch_dirs())
        return set().union(*self._dirs)

    def snapshot(self) -> list[Event]:
        """The opening lines: everything, as of now."""
        self.rows = {}
        events: list[Event] = [
            {
                "event": "snapshot",
                "protocol": PROTOCOL,
                "version": __version__,
                "root": str(self.project.root),
                "tmux_socket": self.project.settings(SupervisorSettings).socket_name,
                "at": self.now(),
            }
        ]
        self.watch_dirs()
        for index, section in enumerate(self.sections):
            rows = self._read(index, section.read)
            self._owned[index] = set(rows)
            self.rows.update(rows)
            events += [_upsert(key, data) for key, data in rows.items()]
        events.append({"event": "ready", "at": self.now(), "rows": len(self.rows)})
        return events

    def apply_paths(self, paths: Iterable[Path]) -> list[Event]:
        """Events for files that changed (from the watcher)."""
        paths = set(paths)
        events: list[Event] = []
        for index, section in enumerate(self.sections):
            mine = {p for p in paths if p.parent in self._dirs[index] or p in self._dirs[index]}
            if not mine:
                continue
            try:
                partial = section.read_paths(mine)
            except (RuneError, OSError):
                partial = None  # read whole, which says what is wrong
            if partial is None:
                events += self._replace(index, self._read(index, section.read))
            else:
                rows, removed = partial
                events += self._merge(index, rows, removed)
        return events

    def rescan(self) -> list[Event]:
        """Read every section again (recovers dropped file events)."""
        events: list[Event] = []
        for index, section in enumerate(self.sections):
            events += self._replace(index, self._read(index, section.read))
        return events

    def tick(self) -> list[Event]:
        """Rows whose look changes with time alone (liveness colours)."""
        events: list[Event] = []
        for index, section in enumerate(self.sections):
            rows = section.tick()
            if rows:
                events += self._merge(index, rows, set())
        return events

    def _read(self, index: int, read: Callable[[], Rows]) -> Rows:
        """``read()``, or, when it fails (a directory that is a file, no permission), the
        section's rows as they were and a ``problem`` row saying why; the row goes when
        the section reads again."""
        try:
            return read()
        except (RuneError, OSError) as exc:
            kept = {key: self.rows[key] for key in self._owned[index] if key in self.rows}
            name = type(self.sections[index]).__name__.removesuffix("Section").lower()
            message = exc.message if isinstance(exc, RuneError) else str(exc)
            kept = {key: data for key, data in kept.items() if key[0] != PROBLEM}
            return {**kept, (PROBLEM, name): {"section": name, "message": message}}

    def _replace(self, index: int, rows: Rows) -> list[Event]:
        gone = self._owned[index] - rows.keys()
        return self._merge(index, rows, gone)

    def _merge(self, index: int, rows: Rows, removed: set[RowKey]) -> list[Event]:
        events: list[Event] = []
        owned = self._owned[index]
        for key, data in rows.items():
            old = self.rows.get(key)
            owned.add(key)
            if old is not None and comparable(old) == comparable(data):
                continue
            self.rows[key] = data
            events.append(_upsert(key, data))
        for key in removed - rows.keys():
            owned.discard(key)
            if self.rows.pop(key, None) is not None:
                events.append({"event": "remove", "kind": key[0], "key": key[1]})
        return events


def _upsert(key: RowKey, data: dict[str, Any]) -> Event:
    return {"event": "upsert", "kind": key[0], "key": key[1], "data": data}


def follow(
    stream: EventStream,
    emit: Callable[[list[Event]], None],
    *,
    stop: threading.Event,
    heartbeat: float = 5.0,
    rescan: float = 5.0,
    tick: float = 1.0,
    watch: bool = True,
    presence: ConsolePresence | None = None,
) -> None:
    """Emit the snapshot, then every change until ``stop`` is set or ``emit`` raises
    (``BrokenPipeError`` when the reader has gone). With ``presence`` the stream stands
    for an open console while it runs (taken as soon as no console holds it, tried again
    at each rescan): Claude Code's hooks then bring their AskUserQuestion calls and
    permission requests to whoever reads it, to be answered with the CLI."""
    if presence is not None:
        presence.try_hold(started_at=stream.now(), via="events --present")
    pending: set[Path] = set()
    wake = threading.Condition()

    def on_path(path: Path) -> None:
        with wake:
            pending.add(path)
            wake.notify()

    emit(stream.snapshot())
    watcher = DirWatcher(sorted(stream.watch_dirs()), on_path) if watch else None
    if watcher is not None and not watcher.start():
        watcher = None  # watching unavailable: the rescan alone keeps the stream current
    last_line = next_rescan = next_tick = time.monotonic()
    next_rescan += rescan
    next_tick += tick
    try:
        while not stop.is_set():
            now = time.monotonic()
            wait = min(next_rescan, next_tick, last_line + heartbeat) - now
            with wake:
                if not pending and wait > 0:
                    wake.wait(min(wait, 0.5))
                paths, pending_now = set(pending), bool(pending)
                pending.clear()
            events = stream.apply_paths(paths) if pending_now else []
            now = time.monotonic()
            if now >= next_tick:
                events += stream.tick()
                next_tick = now + tick
            if now >= next_rescan:
                if presence is not None:
                    presence.try_hold(started_at=stream.now(), via="events --present")
                events += stream.rescan()
                if watcher is not None:
                    for directory in stream.watch_dirs() - set(watcher.directories):
                        watcher.add(directory)
                next_rescan = now + rescan
            if not events and now - last_line >= heartbeat:
                events = [{"event": "heartbeat", "at": stream.now()}]
            if events:
                emit(events)
                last_line = time.monotonic()
    finally:
        if watcher is not None:
            watcher.stop()
        if presence is not None:
            presence.release()
