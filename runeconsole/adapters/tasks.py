"""Claude Code task files: ``${CLAUDE_CONFIG_DIR:-~/.claude}/tasks/{team}/{id}.json``.

Read-only. Claude Code writes them; we only ask "is this task still in progress?"
(ASYNC-001). A bad or missing file never raises: it comes back as ``None`` or as a
``TaskFile`` carrying the reason, and the caller decides what that means.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import read_json_object
from runeconsole.core.validate import id_subdirectories, validate_id

STATUSES = ("pending", "in_progress", "completed", "deleted")
IN_PROGRESS = "in_progress"
# Rune names tasks ``task-3`` where Claude Code's own file is ``3.json``.
_RUNE_TASK = re.compile(r"^task-([0-9]+)$")


def config_dir() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


@dataclass(frozen=True)
class TaskFile:
    team: str
    task_id: str
    path: Path
    status: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def in_progress(self) -> bool:
        return self.error is None and self.status == IN_PROGRESS


def file_names(task_id: str) -> list[str]:
    """The file names a task id may have: as given, and ``3`` for Rune's ``task-3``."""
    names = [f"{task_id}.json"]
    match = _RUNE_TASK.fullmatch(task_id)
    if match:
        names.append(f"{int(match.group(1))}.json")
    return names


class TaskStore:
    def __init__(self, base: Path | None = None) -> None:
        self.base = base if base is not None else config_dir() / "tasks"

    def read(self, path: Path, team: str, task_id: str) -> TaskFile:
        try:
            body = read_json_object(path)
        except UnreadableFile as exc:
            return TaskFile(team, task_id, path, error=exc.reason)
        status = body.get("status")
        metadata = body.get("metadata")
        return TaskFile(
            team,
            task_id,
            path,
            status=status if isinstance(status, str) else None,
            metadata=metadata if isinstance(metadata, dict) else {},
            error=None if isinstance(status, str) else "no status field",
        )

    def teams(self) -> list[str]:
        return [path.name for path in id_subdirectories(self.base)]

    def find(self, task_id: str, team: str | None = None) -> list[TaskFile]:
        """Every file for ``task_id`` (in ``team``, or in any team when not given)."""
        validate_id(task_id, "task id")
        teams = [validate_id(team, "team")] if team else self.teams()
        found = []
        for name in teams:
            for file_name in file_names(task_id):
                path = self.base / name / file_name
                if path.exists():
                    found.append(self.read(path, name, task_id))
                    break
        return found
