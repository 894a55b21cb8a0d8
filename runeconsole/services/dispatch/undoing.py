"""Undoing what a creation made, and finishing what a kill cut short.

``undo`` takes away what ``new`` made of one attempt (the files it placed, the worktree,
the branch still at the base) as long as nothing of the agent's would go with it: the
creation itself calls it when an attempt is refused mid-way. ``Recovery.recover`` runs at
the next command or console start: a task left ``creating`` by a process that is gone has
each attempt that started kept and the others undone, or kept and said why.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from runeconsole.adapters import agent_worktrees as aw
from runeconsole.adapters.git_worktrees import resolve_commit
from runeconsole.core.errors import InvalidInput
from runeconsole.core.pids import process_start
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import validate_id
from runeconsole.services.dispatch import worktree_prep as prep
from runeconsole.services.dispatch.task_store import (
    CREATING,
    DROPPED,
    FAILED,
    REMOVED,
    STARTED,
    STARTING,
    WORKING,
    Attempt,
    Task,
    TaskStore,
)
from runeconsole.services.supervision.service import Supervisor

MAKING: set[str] = set()  # the tasks this process is making now


def undo(root: Path, store: TaskStore, task_id: str, attempt: dict[str, Any]) -> bool:
    """What a creation made of an attempt taken away, as long as nothing of the agent's
    would go with it: the files placed here, the worktree, the branch still at the base.
    True when nothing is left."""
    task = store.read(task_id)
    path, branch = Path(attempt["worktree"]), attempt["branch"]
    listed = {w.path: w for w in aw.list_worktrees(root)}
    if path in listed:
        placed = attempt.get("placed") or {}
        for relative, digest in placed.items() if isinstance(placed, dict) else ():
            target = path / relative
            if prep.digest(target) == digest:
                target.unlink()
        if aw.dirty_files(path):
            return False
        aw.remove(root, path)
    base = str(task.get("base_commit") or "")
    return not resolve_commit(root, f"refs/heads/{branch}") or aw.delete_branch(root, branch, base)


class Recovery:
    def __init__(self, supervisor: Supervisor, store: TaskStore) -> None:
        self.supervisor = supervisor
        self.root = supervisor.root
        self.store = store

    def _as_made(self, task: Task, attempt: Attempt) -> bool:
        """The attempt names what ``new`` would have made of it (its agent, its branch
        ``agent/{agent}``, a worktree of its name under the root): a hand-edited one is never
        acted on, nor can it name another branch or path to undo."""
        role, name = task.get("role"), attempt.get("name")
        try:
            validate_id(role, "role")
            validate_id(name, "name")
        except InvalidInput:
            return False
        key = f"{role}-{name}"
        where = attempt.worktree
        return (
            attempt.agent == key
            and attempt.branch == f"agent/{key}"
            and where is not None
            and where.name == name
            and where.parent != self.root
            and where.is_relative_to(self.root)
            and ".." not in where.parts
        )

    def recover(self) -> list[str]:
        """Tasks whose creating process died half-way: each attempt it had started stands,
        the others are undone (or kept, said why, when something of them would be lost)."""
        said = []
        for task in self.store.list():
            if task.error or task.state != CREATING or _alive(task):
                continue
            for attempt in task.attempts:
                if attempt.state != STARTING:
                    continue
                if not self._as_made(task, attempt):
                    why = "interrupted while being made; not as new wrote it, left alone"
                    self.store.update_attempt(
                        task.task_id, attempt.number, {"state": FAILED, "error": why}
                    )
                    said.append(f"attempt {attempt.number} of {task.task_id}: {why}")
                    continue
                record = (
                    self.supervisor.registry.get(attempt.agent)
                    if (self.supervisor.registry.path_for(attempt.agent).exists())
                    else None
                )
                if record is not None and not record.error and record.status == "active":
                    self.store.update_attempt(task.task_id, attempt.number, {"state": STARTED})
                    said.append(f"{attempt.agent} had started: kept")
                    continue
                gone = undo(self.root, self.store, task.task_id, attempt.fields)
                why = (
                    "interrupted while being made; undone"
                    if gone
                    else ("interrupted while being made; its worktree has files, kept")
                )
                self.store.update_attempt(
                    task.task_id,
                    attempt.number,
                    {"state": REMOVED if gone else FAILED, "error": why},
                )
                said.append(f"{attempt.agent}: {why}")
            self.store.update(
                task.task_id,
                lambda fields: settled(fields, iso_z(self.supervisor.project.clock.now())),
            )
        return said


def settled(fields: dict[str, Any], now: str) -> None:
    """A task whose creation ended: working if any attempt started, else dropped (now)."""
    if fields.get("state") != CREATING:
        return
    attempts = [a for a in fields.get("attempts") or [] if isinstance(a, dict)]
    started = any(a.get("state") == STARTED for a in attempts)
    fields["state"] = WORKING if started else DROPPED
    if not started:
        fields["dropped_at"] = now
    fields.pop("creator_pid", None)
    fields.pop("creator_start", None)


def _alive(task: Task) -> bool:
    pid, started = task.get("creator_pid"), task.get("creator_start")
    if pid == os.getpid():  # this process (the console): making it now, or no longer
        return task.task_id in MAKING
    return isinstance(pid, int) and started is not None and process_start(pid) == started
