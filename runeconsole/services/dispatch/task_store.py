"""Tasks on disk: ``.claude/state/tasks/{task}.json``, one file a task (its text, base,
attempts with their agents, the pick, its state), and ``tasks/{task}/`` beside it with each
attempt's setup and test output.

Every change is a read and an atomic write under the task's lock; a new task is created
exclusively (two ``new`` of one name: the second is refused); ids are checked before any
path is built from them. A file that cannot be read is a task shown as unreadable with the
reason, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import (
    atomic_write_bytes,
    atomic_write_json,
    create_exclusive,
    dump_json,
    is_temp_name,
    read_json_object,
)
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import parse_iso
from runeconsole.core.validate import validate_id
from runeconsole.services.project import Project

DIRECTORY = "tasks"
MAX_OUTPUT = 256 * 1024  # the tail of a setup's or a test's output kept

# A task's states, in the order a task moves through them.
CREATING, WORKING, PICKED, LANDED, DROPPED = "creating", "working", "picked", "landed", "dropped"
# An attempt's states.
STARTING, SETUP_FAILED, FAILED, STARTED = "starting", "setup_failed", "failed", "started"
STOPPED, REMOVED, KEPT = "stopped", "removed", "kept"


@dataclass
class Attempt:
    fields: dict[str, Any]

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def number(self) -> int:
        found = self.fields.get("n")
        return found if isinstance(found, int) else 0

    @property
    def agent(self) -> str:
        return str(self.fields.get("agent") or "")

    @property
    def branch(self) -> str:
        return str(self.fields.get("branch") or "")

    @property
    def worktree(self) -> Path | None:
        found = self.fields.get("worktree")
        return Path(found) if isinstance(found, str) and found.startswith("/") else None

    @property
    def state(self) -> str:
        return str(self.fields.get("state") or STARTING)


@dataclass
class Task:
    task_id: str
    path: Path
    fields: dict[str, Any]
    error: str | None = None

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def state(self) -> str:
        return "unreadable" if self.error else str(self.fields.get("state") or CREATING)

    @property
    def text(self) -> str:
        return str(self.fields.get("text") or "")

    @property
    def attempts(self) -> list[Attempt]:
        found = self.fields.get("attempts")
        if not isinstance(found, list):
            return []
        return [Attempt(a) for a in found if isinstance(a, dict)]

    def attempt(self, number: int) -> Attempt:
        for attempt in self.attempts:
            if attempt.number == number:
                return attempt
        known = ", ".join(str(a.number) for a in self.attempts) or "none"
        raise InvalidInput(f"task {self.task_id} has no attempt {number} (attempts: {known})")

    @property
    def pick(self) -> int | None:
        found = self.fields.get("pick")
        return found if isinstance(found, int) else None

    def title(self, width: int = 60) -> str:
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        return first if len(first) <= width else first[: width - 1] + "…"

    def to_json(self) -> dict[str, Any]:
        if self.error:
            return {
                "task_id": self.task_id,
                "state": "unreadable",
                "error": self.error,
                "path": str(self.path),
            }
        return {**self.fields, "task_id": self.task_id, "state": self.state}


class TaskStore:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.paths = project.paths

    @property
    def directory(self) -> Path:
        return self.paths.state / DIRECTORY

    def path_for(self, task_id: str) -> Path:
        return self.paths.inside(self.directory / f"{validate_id(task_id, 'task id')}.json")

    def output_path(self, task_id: str, attempt: int, kind: str) -> Path:
        name = f"attempt-{int(attempt)}-{validate_id(kind, 'output kind')}.log"
        return self.paths.inside(self.directory / validate_id(task_id, "task id") / name)

    def exists(self, task_id: str) -> bool:
        return self.path_for(task_id).exists()

    def create(self, task_id: str, fields: dict[str, Any]) -> Task:
        path = self.path_for(task_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            create_exclusive(path, dump_json(fields))
        except FileExistsError:
            raise RuneError(
                f"task {task_id} already exists; give another --name (`runeconsole task "
                f"show {task_id}` shows it)"
            ) from None
        return Task(task_id, path, fields)

    def read(self, task_id: str) -> Task:
        path = self.path_for(task_id)
        if not path.exists():
            raise RuneError(f"no task {task_id!r} (`runeconsole task list` lists them)")
        return self._read(task_id, path)

    def _read(self, task_id: str, path: Path) -> Task:
        try:
            fields = read_json_object(path)
        except UnreadableFile as exc:
            return Task(task_id, path, {}, error=exc.reason)
        if not isinstance(fields.get("attempts"), list):
            return Task(task_id, path, fields, error="no attempts list")
        return Task(task_id, path, fields)

    def list(self) -> list[Task]:
        """Every task, newest first (unreadable ones included, with why)."""
        try:
            names = sorted(p.name for p in self.directory.iterdir() if p.suffix == ".json")
        except OSError:
            return []
        found = []
        for name in names:
            if is_temp_name(name):
                continue
            task_id = name.removesuffix(".json")
            try:
                validate_id(task_id)
            except InvalidInput:
                continue
            found.append(self._read(task_id, self.directory / name))
        created = {t.task_id: parse_iso(t.get("created_at")) for t in found}
        return sorted(
            found, key=lambda t: (created[t.task_id] is None, created[t.task_id] or 0, t.task_id)
        )[::-1]

    def update(self, task_id: str, change: Callable[[dict[str, Any]], None]) -> Task:
        """``change`` applied to the task's fields under its lock, written atomically."""
        path = self.path_for(task_id)
        with locked(
            self.paths.lock_for(f"task-{task_id}"), what=f"task {task_id}", within=self.paths.root
        ):
            task = self.read(task_id)
            if task.error:
                raise RuneError(f"task {task_id} cannot be changed: {path}: {task.error}")
            change(task.fields)
            atomic_write_json(path, task.fields)
        return Task(task_id, path, task.fields)

    def update_attempt(self, task_id: str, number: int, changes: dict[str, Any]) -> Task:
        def apply(fields: dict[str, Any]) -> None:
            for attempt in fields.get("attempts") or []:
                if isinstance(attempt, dict) and attempt.get("n") == number:
                    attempt.update(changes)

        return self.update(task_id, apply)

    def keep_output(self, task_id: str, attempt: int, kind: str, output: bytes) -> Path:
        """The tail of a command's output, kept for the operator to read."""
        path = self.output_path(task_id, attempt, kind)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, output[-MAX_OUTPUT:])
        return path
