"""Every git worktree of the repository with what it is for: its agent, its task, where its
work stands (``working``, ``ready``, ``queued``, ``landed``, ``dropped``, ``orphan``: no agent),
its uncommitted files and its size. Ours, Claude Code's own (``claude --worktree``, locked by
its session) and the harness's are read the same way: git's list joined to the identities
(by path), the tasks (by path) and the merge queue (by branch).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.adapters import agent_worktrees as aw
from runeconsole.core.errors import RuneError
from runeconsole.core.pids import pid_alive
from runeconsole.services.dispatch import worktree_prep as prep
from runeconsole.services.dispatch.task_store import DROPPED, KEPT, REMOVED, STOPPED, Task
from runeconsole.services.liveness import ACTIVE, AgentRecord
from runeconsole.services.merge_queue.model import COMPLETED, FAILED, QueueEntry

MAIN, WORKING, READY, QUEUED, LANDED = "main", "working", "ready", "queued", "landed"
DROPPED_STATE, ORPHAN, MISSING = "dropped", "orphan", "missing"
STATES = (MAIN, WORKING, READY, QUEUED, LANDED, DROPPED_STATE, ORPHAN, MISSING)


@dataclass
class WorktreeRow:
    path: Path
    branch: str | None
    head: str | None
    state: str
    agent: str | None = None
    agent_active: bool = False
    task: str | None = None
    attempt: int | None = None
    entry: QueueEntry | None = None
    locked: str | None = None
    lock_pid: int | None = None
    dirty: list[str] = field(default_factory=list)
    placed: dict[str, str] = field(default_factory=dict)  # files we put there, by digest
    commits_let_go_at: str | None = None  # the head whose lone commits the operator let go
    size: int | None = None
    note: str | None = None  # why it stays, when it does

    @property
    def key(self) -> str:
        return str(self.path)

    @property
    def stale_lock(self) -> bool:
        """Locked by a Claude Code session that has ended (its pid gone)."""
        return self.lock_pid is not None and not pid_alive(self.lock_pid)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "branch": self.branch,
            "head": self.head,
            "state": self.state,
            "agent": self.agent,
            "agent_active": self.agent_active,
            "task": self.task,
            "attempt": self.attempt,
            "queue_entry": self.entry.entry_id if self.entry else None,
            "locked": self.locked,
            "dirty": self.dirty,
            "size_bytes": self.size,
            "note": self.note,
        }


def own_files(row: WorktreeRow) -> list[str]:
    """The uncommitted files that are the agent's: those we placed there unchanged are not."""
    return [
        path
        for path in row.dirty
        if not (path in row.placed and prep.digest(row.path / path) == row.placed[path])
    ]


def landed_entry(entries: list[QueueEntry], branch: str, head: str | None) -> QueueEntry | None:
    """The completed queue entry that landed ``branch`` as it stands now (its head is what
    was queued or what landed), if any."""
    for entry in reversed(entries):
        if entry.get("branch") != branch or entry.get("status") != COMPLETED:
            continue
        landed = {entry.get(k) for k in ("original_commit", "tested_commit", "merged_commit")}
        if head in landed:
            return entry
    return None


def read_rows(
    root: Path,
    records: list[AgentRecord],
    tasks: list[Task],
    entries: list[QueueEntry],
    *,
    sizes: bool = True,
) -> list[WorktreeRow]:
    rows = []
    agents: dict[Path, AgentRecord] = {}
    for record in records:
        if record.error:
            continue
        where = record.worktree_in(root)
        if where is not None:
            path = Path(os.path.realpath(where))
            current = agents.get(path)
            if current is None or (record.status == ACTIVE and current.status != ACTIVE):
                agents[path] = record
    attempts: dict[Path, tuple[Task, Any]] = {}
    for task in reversed(tasks):  # oldest first: a path made again is the newest task's
        for attempt in task.attempts:
            gone = attempt.state == REMOVED or attempt.get("worktree_removed_at")
            if attempt.worktree is not None and not gone:
                attempts[Path(os.path.realpath(attempt.worktree))] = (task, attempt)
    for listed in aw.list_worktrees(root):
        real = Path(os.path.realpath(listed.path))
        agent = agents.get(real)
        found = attempts.get(real)
        row = WorktreeRow(
            path=listed.path,
            branch=listed.branch,
            head=listed.head,
            state=ORPHAN,
            agent=agent.key if agent else (found[1].agent if found else None),
            agent_active=bool(agent and agent.status == ACTIVE),
            task=found[0].task_id if found else None,
            attempt=found[1].number if found else None,
            locked=listed.locked,
            lock_pid=listed.lock_pid,
        )
        if found:
            placed = found[1].get("placed")
            row.placed = dict(placed) if isinstance(placed, dict) else {}
            let_go = found[1].get("commits_let_go_at")
            row.commits_let_go_at = let_go if isinstance(let_go, str) else None
        if listed.main:
            row.state = MAIN
        elif listed.prunable is not None or not listed.path.is_dir():
            row.state, row.note = MISSING, f"its directory is gone ({listed.prunable or 'missing'})"
        else:
            _read_files(row, sizes)
            row.state = _state(row, found, entries)
        rows.append(row)
    return rows


def _read_files(row: WorktreeRow, sizes: bool) -> None:
    try:
        row.dirty = aw.dirty_files(row.path)
    except RuneError as exc:
        row.note = f"git status failed: {exc.message}"
    if sizes:  # never the main worktree's: it holds every other
        row.size = aw.size_bytes(row.path)


def _state(row: WorktreeRow, found: tuple[Task, Any] | None, entries: list[QueueEntry]) -> str:
    if row.branch:
        row.entry = landed_entry(entries, row.branch, row.head)
        if row.entry is not None:
            return LANDED
        for entry in reversed(entries):
            if entry.get("branch") == row.branch and entry.get("status") not in (COMPLETED, FAILED):
                row.entry = entry
                return QUEUED
    if found is not None:
        task, attempt = found
        if task.state == DROPPED or attempt.state in (STOPPED, REMOVED, KEPT, DROPPED):
            return DROPPED_STATE
    if row.agent_active:
        return WORKING
    if row.agent or found is not None:
        return READY
    return ORPHAN
