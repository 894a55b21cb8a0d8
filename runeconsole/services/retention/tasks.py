"""Tasks (``runeconsole new``): a landed or dropped task leaves for the archive whole (its
file, as its object), by when it closed, and the setup and test output of its attempts
(``tasks/{task}/``) goes with it. A task still being made, worked on or in the queue is
never touched; an unreadable one is left for the operator to see."""

from __future__ import annotations

import contextlib
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import is_temp_name, read_json_object
from runeconsole.core.timeutil import parse_iso
from runeconsole.core.validate import ID_PATTERN
from runeconsole.services.retention.archive import month_of
from runeconsole.services.retention.pruner import Job, Pruner, Record
from runeconsole.services.retention.report import KindReport

CLOSED = {"landed": "landed_at", "dropped": "dropped_at"}  # a closed state: when it closed


class TaskPruner(Pruner[tuple[str, datetime, dict[str, Any]]]):
    kind = "tasks"

    def __init__(self, job: Job) -> None:
        super().__init__(job)
        self.directory = job.project.paths.state / "tasks"

    def closed(self, report: KindReport) -> list[tuple[datetime, tuple[str, datetime, Any]]]:
        found = []
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return []
        for name in names:
            task_id = name.removesuffix(".json")
            if is_temp_name(name) or not name.endswith(".json") or not ID_PATTERN.match(task_id):
                continue
            try:
                data = read_json_object(self.directory / name)
            except UnreadableFile:
                continue
            when_field = CLOSED.get(str(data.get("state")))
            when = parse_iso(data.get(when_field)) if when_field else None
            if when is None:
                report.pending += 1
                continue
            found.append((when, (task_id, when, data)))
        return found

    def record(self, item: tuple[str, datetime, dict[str, Any]]) -> Record:
        task_id, when, data = item
        return task_id, month_of(when), {"id": task_id, "data": data}

    def remove(self, ids: list[str]) -> None:
        for task_id in ids:
            if not ID_PATTERN.fullmatch(task_id):  # an id out of a journal: checked first
                continue
            with contextlib.suppress(FileNotFoundError):
                (self.directory / f"{task_id}.json").unlink()
            outputs = self.directory / task_id
            _remove_logs(outputs)


def _remove_logs(outputs: Path) -> None:
    """The attempts' output files (``*.log``) and their directory, nothing else."""
    try:
        entries = list(os.scandir(outputs))
    except OSError:
        return
    for entry in entries:
        if entry.name.endswith(".log") and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
    with contextlib.suppress(OSError):
        outputs.rmdir()
