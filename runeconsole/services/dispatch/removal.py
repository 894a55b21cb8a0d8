"""Removing a worktree and its branch when nothing would be lost.

Only through ``git worktree remove`` (never a recursive delete of a path git does not
list), without force: git itself refuses a worktree with changes. Before it:

- the main worktree is never removed, a missing one is reported (``git worktree prune``),
  a locked one is left alone unless its lock is a Claude Code session's that has ended;
- uncommitted or untracked files that are the agent's keep the worktree, listed (files we
  placed there ourselves, unchanged, are ours to take away);
- an agent still running there keeps it, unless the caller stops it (its work landed, or
  was dropped), and never while it is busy;
- commits on no other branch keep it, unless the operator consented (a pick or a drop that
  named them), or its branch landed as it stands.
Then the files placed there, the worktree, and the branch (by compare-and-swap at the head
read) go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runeconsole.adapters import agent_worktrees as aw
from runeconsole.core.errors import RuneError
from runeconsole.services.dispatch import worktree_prep as prep
from runeconsole.services.dispatch.worktree_list import (
    LANDED,
    MAIN,
    MISSING,
    WorktreeRow,
    own_files,
)
from runeconsole.services.supervision.service import Supervisor

BUSY = "busy"


@dataclass
class Removal:
    path: str
    branch: str | None
    removed: bool = False
    branch_deleted: bool = False
    agent_stopped: str | None = None
    reason: str | None = None  # why it stays, when it does
    files: list[str] = field(default_factory=list)  # the agent's files that kept it
    commits: list[str] = field(default_factory=list)  # commits on no other branch
    dry_run: bool = False

    def describe(self) -> str:
        if self.removed:
            done = "would remove" if self.dry_run else "removed"
            gone = f" and branch {self.branch}" if self.branch_deleted else ""
            return f"{done} {self.path}{gone}"
        return f"kept {self.path}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "branch": self.branch,
            "removed": self.removed,
            "branch_deleted": self.branch_deleted,
            "agent_stopped": self.agent_stopped,
            "reason": self.reason,
            "files": self.files,
            "commits": self.commits,
            "dry_run": self.dry_run,
        }


class Remover:
    def __init__(self, supervisor: Supervisor) -> None:
        self.supervisor = supervisor
        self.root = supervisor.root

    def lost_commits(self, row: WorktreeRow) -> list[str]:
        """What deleting its branch would lose: commits on no other branch (none for a
        branch that landed as it stands)."""
        if not row.branch or row.state == LANDED:
            return []
        return aw.unique_commits(self.root, row.branch)

    def remove(
        self,
        row: WorktreeRow,
        *,
        discard_commits: bool = False,
        stop_agent: bool = False,
        dry_run: bool = False,
    ) -> Removal:
        done = Removal(str(row.path), row.branch, dry_run=dry_run)
        refusal = self._refusal(row, done, discard_commits, stop_agent)
        if refusal is not None:
            done.reason = refusal
            return done
        if dry_run:
            done.removed = True
            done.branch_deleted = bool(row.branch)
            return done
        if row.agent and row.agent_active and stop_agent:
            self.supervisor.kill(row.agent, "its work landed or was dropped; worktree removed")
            done.agent_stopped = row.agent
        try:
            if row.stale_lock:
                aw.unlock(self.root, row.path)
            for relative, digest in row.placed.items():
                target = row.path / relative
                if prep.digest(target) == digest:
                    target.unlink()
            aw.remove(self.root, row.path)
        except (RuneError, OSError) as exc:
            done.reason = getattr(exc, "message", None) or str(exc)
            return done
        done.removed = True
        if row.branch and row.head:
            done.branch_deleted = aw.delete_branch(self.root, row.branch, row.head)
        return done

    def _refusal(
        self, row: WorktreeRow, done: Removal, discard: bool, stop_agent: bool
    ) -> str | None:
        if row.state == MAIN:
            return "the repository's main worktree is never removed"
        if row.state == MISSING:
            return f"{row.note}; `git worktree prune` forgets it"
        if row.locked is not None and not row.stale_lock:
            return f"locked ({row.locked or 'no reason given'}); `git worktree unlock` first"
        files = own_files(row)
        if files:
            done.files = files
            shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
            return f"{len(files)} uncommitted or untracked file(s): {shown}"
        if row.agent and row.agent_active:
            if not stop_agent:
                return f"agent {row.agent} is still running there; stop it first"
            record = self.supervisor.registry.get(row.agent)
            if record.get("activity") == BUSY:
                return f"agent {row.agent} is busy; it is removed once the agent is idle"
        commits = self.lost_commits(row)
        if commits:
            done.commits = commits
            if not discard:
                return (
                    f"{len(commits)} commit(s) on no other branch would be lost "
                    f"({commits[0]}{' …' if len(commits) > 1 else ''})"
                )
        return None
