"""The journal of operator actions in flight: what did not complete when the console (or a
command) was killed half-way.

Before an action writes anything (an answer, a decision, a rule, a queue change, a resume)
it records itself in ``.claude/state/actions/{pid}-{n}.json``: what it is, the files it may
write and how each stood (absent, or its size, time and inode), the pid and when that
process started. When the action ends, done or refused, the record goes. A record whose
process is gone is an action a kill cut short: ``interrupted()`` lists each with, file by
file, whether it was written since (an atomic write replaces the file whole: it is the
old one or the new one), so the console can say exactly what stands; ``dismiss`` clears a
record once said, and the writers' temp files the kill left beside those files.

The pause points ``action-{kind}`` (recorded, nothing written yet) and
``action-{kind}-written`` (every write done, the record not yet cleared) are where the
kill -9 tests stop a real console; actions of several writes name their own between them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import UnreadableFile, WriteFailed
from runeconsole.core.files import (
    atomic_write_json,
    is_temp_name,
    read_json_object,
    remove_orphan_temp,
)
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.pids import process_start
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.project import Project

DIRECTORY = "actions"
_numbers = itertools.count(1)


def _stamp(path: Path) -> list[int] | None:
    """How a file stands: ``None`` when absent, else its size, time and inode."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


@dataclass
class Interrupted:
    """An action whose process died before it ended."""

    path: Path
    kind: str
    what: str
    pid: int | None
    started_at: datetime | None
    written: list[str]  # the files written since it started
    untouched: list[str]  # the files as they were
    via: str

    @property
    def outcome(self) -> str:
        if not self.written:
            return "nothing was written: do it again"
        if not self.untouched:
            return f"{', '.join(self.written)} written: it had finished"
        return f"{', '.join(self.written)} written; {', '.join(self.untouched)} not"

    def message(self) -> str:
        when = f" at {self.started_at:%H:%M:%S}Z" if self.started_at else ""
        return f"{self.what} ({self.via}, pid {self.pid}{when}) did not complete: {self.outcome}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "what": self.what,
            "pid": self.pid,
            "started_at": iso_z(self.started_at) if self.started_at else None,
            "via": self.via,
            "written": self.written,
            "untouched": self.untouched,
            "message": self.message(),
            "path": str(self.path),
        }


def journaled(
    project: Project, kind: str, what: str, files: list[Path]
) -> contextlib.AbstractContextManager[None]:
    """``Journal.action`` for an action on ``project``, by whoever acts through it."""
    return Journal(project.paths, project.via).action(kind, what, files, project.clock.now())


class Journal:
    def __init__(self, paths: ProjectPaths, via: str = "cli") -> None:
        self.paths = paths
        self.via = via  # who acts: "console" or "cli"

    @property
    def directory(self) -> Path:
        return self.paths.state / DIRECTORY

    @contextlib.contextmanager
    def action(self, kind: str, what: str, files: list[Path], now: datetime) -> Iterator[None]:
        """Record the action for the block; the record stays only if the process dies in
        it. A record that cannot be written (a full disk) stops the action before it
        writes anything."""
        pid = os.getpid()
        record = self.paths.inside(self.directory / f"{pid}-{next(_numbers)}.json")
        body = {
            "kind": kind,
            "what": what,
            "via": self.via,
            "pid": pid,
            "process_start": process_start(pid),
            "started_at": iso_z(now),
            "files": {os.fspath(path): _stamp(path) for path in files},
        }
        try:
            atomic_write_json(record, body, 0o600)
        except WriteFailed as exc:  # said of the action's own file: that is what was not done
            raise WriteFailed(files[0] if files else record, exc) from None
        try:
            pause_point(f"action-{kind}")
            yield
            pause_point(f"action-{kind}-written")
        finally:
            with contextlib.suppress(OSError):
                record.unlink()

    def interrupted(self) -> list[Interrupted]:
        """Actions whose process is gone (a live one is still under way), oldest first."""
        try:
            names = sorted(n for n in os.listdir(self.directory) if not is_temp_name(n))
        except OSError:
            return []
        found = []
        for name in names:
            path = self.directory / name
            try:
                body = read_json_object(path)
            except UnreadableFile:
                continue
            pid, started = body.get("pid"), body.get("process_start")
            if isinstance(pid, int) and started is not None and process_start(pid) == started:
                continue  # still running
            found.append(_interrupted(path, body, self.paths.root))
        return sorted(found, key=lambda i: (i.started_at is None, i.started_at or 0, i.what))

    def dismiss(self, interrupted: Interrupted) -> None:
        """The record gone (it was said), and the temp files its process left beside the
        files it was writing."""
        for name in {*interrupted.written, *interrupted.untouched}:
            directory = (self.paths.root / name).parent
            with contextlib.suppress(OSError):
                for entry in os.listdir(directory):
                    remove_orphan_temp(directory, entry)
        with contextlib.suppress(FileNotFoundError):
            interrupted.path.unlink()


def _interrupted(path: Path, body: dict[str, Any], root: Path) -> Interrupted:
    files = found if isinstance(found := body.get("files"), dict) else {}
    written: list[str] = []
    untouched: list[str] = []
    for name, before in files.items():
        (untouched if _stamp(Path(name)) == before else written).append(_shown(name, root))
    pid = body.get("pid")
    return Interrupted(
        path,
        str(body.get("kind") or "?"),
        str(body.get("what") or "an action"),
        pid if isinstance(pid, int) else None,
        parse_iso(body.get("started_at")),
        written,
        untouched,
        str(body.get("via") or "?"),
    )


def _shown(name: str, root: Path) -> str:
    """A file as the operator reads it: under the root, relative to it."""
    path = Path(name)
    return str(path.relative_to(root)) if path.is_relative_to(root) else name
