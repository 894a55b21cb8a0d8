"""Ending a task's attempts (a pick, a drop) once the operator has seen what it loses: the
blocking half, run in a worker, and what it did in words.

The confirmation (``confirms.py``) names the commits on no other branch that ending the
other attempts would lose; only those are given up (``discard_commits``). Before the
service is called, what would be lost is read again: a commit the operator was not shown
(an agent committed meanwhile) stops it, to be looked at again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.notifications import SeverityLevel

from runeconsole.core.errors import RuneError
from runeconsole.services.dispatch.service import Dispatch, Ending, Loss


def lost_commits(losses: list[Loss]) -> frozenset[str]:
    """The commits that would go: those of attempts whose worktree goes (an attempt whose
    agent left files keeps its worktree, and its branch and commits with it)."""
    return frozenset(commit for loss in losses if not loss.files for commit in loss.commits)


@dataclass(frozen=True)
class Consent:
    """What the operator saw and said yes to: ending ``task_id``'s attempts but ``keep``
    (None: all of them, a drop), losing ``commits``."""

    task_id: str
    keep: int | None
    commits: frozenset[str]


def end_task(dispatch: Dispatch, consent: Consent) -> Ending:
    """Pick ``consent.keep`` (or drop the task), losing no commit the operator was not
    shown. Blocking: git, the queue, the agents' sessions."""
    fresh = dispatch.losses(consent.task_id, consent.keep)
    unseen = lost_commits(fresh) - consent.commits
    if unseen:
        raise RuneError(
            f"{len(unseen)} commit(s) on no other branch appeared since you confirmed "
            f"({sorted(unseen)[0]}…): nothing was done; look again"
        )
    # Given up: what was shown. Commits of worktrees kept for their files stay with them.
    discard = any(loss.commits for loss in fresh)
    if consent.keep is None:
        return dispatch.drop(consent.task_id, discard_commits=discard)
    return dispatch.pick(consent.task_id, consent.keep, discard_commits=discard)


def ending_said(ending: Ending, keep: int | None) -> tuple[str, SeverityLevel]:
    """What a pick or a drop did, for a toast: the queue entry, the worktrees removed, the
    ones kept and why."""
    task = ending.task
    approval = ending.approval or {}
    lines = []
    if keep is not None:
        entry = (approval.get("entry") or {}).get("entry_id") or "?"
        lines.append(f"picked #{keep} of {task.task_id}: queued as {entry}")
    else:
        lines.append(f"dropped {task.task_id}")
    removed = [r for r in ending.removals if r.removed]
    kept = [r for r in ending.removals if not r.removed]
    if removed:
        lines.append(f"{len(removed)} worktree{'s' * (len(removed) != 1)} removed")
    lines += [f"kept {Path(r.path).name}: {r.reason}" for r in kept]
    warnings = [str(w) for w in approval.get("warnings") or []]
    lines += warnings
    return "\n".join(lines), "warning" if kept or warnings else "information"
