"""Kinds that are plain files, pruned by age (and count) whatever their format: reviews,
consumed signals, agents' history and spending ledgers. A file leaves for the archive
whole (a JSON file as its object, anything else as its text), by its modification time;
a directory it leaves empty goes with it (never the kind's own directory)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError
from runeconsole.core.files import is_temp_name, parse_json_object, read_bytes
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import contained
from runeconsole.services.retention.archive import month_of
from runeconsole.services.retention.pruner import Job, Pruner, Record
from runeconsole.services.retention.report import KindReport

MAX_FILE = 4 * 1024 * 1024


@dataclass(frozen=True)
class Place:
    """A directory of the kind's files: ``recursive`` for a tree (reviews by agent)."""

    directory: Callable[[ProjectPaths], Path]
    suffix: str = ""  # only names ending so ("": every file)
    recursive: bool = False


PLACES: dict[str, tuple[Place, ...]] = {
    "reviews": (Place(lambda p: p.state / "reviews", recursive=True),),
    "signals": (Place(lambda p: p.signals / "processed", ".json"),),
    "cost": (Place(lambda p: p.cost / "agents", ".json"),),
    "agent_history": (
        Place(lambda p: p.identity_history, ".json"),
        Place(lambda p: p.hook_history, ".json"),
        Place(lambda p: p.supervisor / "screens", ".txt"),
        Place(lambda p: p.supervisor / "wisdom", ".md"),
    ),
}


class FilesByAge(Pruner[Path]):
    def __init__(self, job: Job, kind: str) -> None:
        super().__init__(job)
        self.kind = kind
        self.paths = job.project.paths
        self.root = job.project.root
        self.places = PLACES[kind]

    def closed(self, report: KindReport) -> list[tuple[datetime, Path]]:
        found: list[tuple[datetime, Path]] = []
        for place in self.places:
            found += self._files(place.directory(self.paths), place)
        return found

    def _files(self, directory: Path, place: Place) -> list[tuple[datetime, Path]]:
        found = []
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return []
        for entry in entries:
            if is_temp_name(entry.name):
                continue
            if entry.is_dir(follow_symlinks=False):
                if place.recursive:
                    found += self._files(Path(entry.path), place)
                continue
            if not entry.name.endswith(place.suffix) or not entry.is_file(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):
                when = datetime.fromtimestamp(entry.stat(follow_symlinks=False).st_mtime, UTC)
                found.append((when, Path(entry.path)))
        return found

    def record(self, path: Path) -> Record:
        relative = path.relative_to(self.root).as_posix()
        try:
            when = datetime.fromtimestamp(path.lstat().st_mtime, UTC)
        except OSError:
            when = self.job.now
        record: dict[str, Any] = {"id": relative, "at": iso_z(when)}
        try:
            data = read_bytes(path, limit=MAX_FILE, follow_symlinks=False)
        except RuneError as exc:
            record["error"] = getattr(exc, "reason", exc.message)
            return relative, month_of(when), record
        try:
            record["data"] = parse_json_object(path, data) if path.suffix == ".json" else None
        except RuneError:
            record["data"] = None
        if record["data"] is None:
            record["text"] = data.decode("utf-8", "replace")
        return relative, month_of(when), record

    def remove(self, relatives: list[str]) -> None:
        tops = {place.directory(self.paths) for place in self.places}
        for relative in relatives:
            path = Path(os.path.normpath(self.root / relative))
            # An id out of a journal is checked before use: one of the kind's files only.
            if not any(path.is_relative_to(top) and path != top for top in tops):
                continue
            try:
                contained(self.root, path)
            except RuneError:
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            parent = path.parent
            while parent not in tops and parent != self.root:  # empty directories go too
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent
