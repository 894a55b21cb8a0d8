"""Claude Code task files: ``${CLAUDE_CONFIG_DIR:-~/.claude}/tasks/{team}/{id}.json``.

Claude Code writes them. We read them to ask "is this task still in progress?"
(a question of a task that ended is not surfaced), and write only what the Rune
protocols set with ``TaskUpdate``: the ``suspended`` / ``context_path`` /
``permanently_failed`` metadata and, after a resume, ``status`` and ``owner``. A write is a locked
read-modify-write of a file that already exists in a named team: every field we do
not set is kept, ids are validated, the real path must stay inside the Claude config
dir, and the file is replaced atomically. A task file is never created, so no task
appears in a team that was only guessed. A bad or missing file never raises: it comes
back as a ``TaskFile`` or ``TaskWrite`` carrying the reason.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.paths import claude_config_dir as config_dir
from runeconsole.core.validate import contained, id_subdirectories, validate_id

STATUSES = ("pending", "in_progress", "completed", "deleted")
IN_PROGRESS = "in_progress"
# Rune names tasks ``task-3`` where Claude Code's own file is ``3.json``.
_RUNE_TASK = re.compile(r"^task-([0-9]+)$")


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


@dataclass(frozen=True)
class TaskWrite:
    """What a metadata update did to a task file, or why it wrote nothing.

    ``fields`` are dotted names (``status``, ``metadata.suspended``); a ``None`` metadata
    value deletes the key, as ``TaskUpdate`` does.
    """

    task_id: str
    team: str | None
    fields: dict[str, Any]
    path: Path | None = None
    written: bool = False
    dry_run: bool = False
    reason: str = ""

    def describe(self) -> str:
        where = f"{self.team}/{self.task_id}" if self.team else f"#{self.task_id}"
        shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in self.fields.items())
        if self.written:
            return f"task {where}: set {shown} ({self.path})"
        if self.dry_run and not self.reason:
            return f"task {where}: would set {shown} ({self.path})"
        return f"task {where}: not written ({self.reason}); wanted {shown}"

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "team": self.team,
            "path": None if self.path is None else str(self.path),
            "fields": self.fields,
            "written": self.written,
            "reason": self.reason,
        }


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

    def file_for(self, task_id: str, team: str) -> Path | None:
        """The existing file for ``task_id`` in ``team`` (symlinks too: refused later)."""
        for file_name in file_names(task_id):
            path = self.base / team / file_name
            if os.path.lexists(path):
                return path
        return None

    def update(
        self,
        task_id: str,
        team: str | None,
        fields: dict[str, Any],
        *,
        locks: Path,
        locks_within: Path | None = None,
        dry_run: bool = False,
    ) -> TaskWrite:
        """Set ``fields`` on the task's file, as ``TaskUpdate`` would; see ``TaskWrite``.

        The lock, in ``locks`` (the project's lock dir, checked to resolve inside
        ``locks_within``), serialises our own writers, the console and the CLI; so
        nothing but the task file itself is written under the config dir. Bad ids raise
        ``InvalidInput``; anything else comes back as a reason.
        """
        validate_id(task_id, "task id")
        note = TaskWrite(task_id, team, dict(fields), dry_run=dry_run)
        if team is None:
            return replace(note, reason="no team known: pass --team TEAM")
        validate_id(team, "team")
        path = self.file_for(task_id, team)
        if path is None:
            names = " or ".join(file_names(task_id))
            return replace(
                note, reason=f"no task file {names} in {self.base / team}; none is created"
            )
        note = replace(note, path=path)
        try:
            contained(self.base.parent, path, "the Claude config dir")
        except InvalidInput as exc:
            return replace(note, reason=f"refused: {exc.message}")
        if dry_run:
            problem = _refusal(path)
            return replace(note, reason=problem) if problem else note
        lock = locks / f"task-{team}-{path.stem}.lock"
        with locked(lock, what=str(path), within=locks_within):
            problem = _refusal(path)
            if problem:
                return replace(note, reason=problem)
            try:
                body = read_json_object(path)
            except UnreadableFile as exc:
                return replace(note, reason=f"unreadable: {exc.reason}")
            metadata = body.get("metadata", {})
            if not isinstance(metadata, dict):
                return replace(note, reason="its metadata is not an object; left as it is")
            updated = _apply(body, dict(metadata), fields)
            if updated == body:
                return replace(note, written=True)
            try:
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                atomic_write_json(path, updated, mode)
            except OSError as exc:
                raise RuneError(f"could not write {path}: {exc.strerror or exc}") from None
        return replace(note, written=True)


def _refusal(path: Path) -> str | None:
    """Why ``path`` must not be rewritten (a symlink or a non-file), or ``None``."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if stat.S_ISLNK(mode):
        return "the task file is a symbolic link; not followed"
    if not stat.S_ISREG(mode):
        return "the task file is not a regular file"
    return None


def _apply(
    body: dict[str, Any], metadata: dict[str, Any], fields: dict[str, Any]
) -> dict[str, Any]:
    """``body`` with ``fields`` set; unknown fields and metadata keys are kept."""
    updated = dict(body)
    for name, value in fields.items():
        if name.startswith("metadata."):
            key = name.removeprefix("metadata.")
            if value is None:
                metadata.pop(key, None)
            else:
                metadata[key] = value
        else:
            updated[name] = value
    if metadata or "metadata" in body:
        updated["metadata"] = metadata
    return updated
