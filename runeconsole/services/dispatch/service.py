"""``Dispatch``: the one entry point for starting work and ending worktrees (the CLI and the
console come here).

- ``new``: a task and its attempts made and started (``creation``); ``recover`` finishes or
  undoes what a kill cut short;
- ``tasks``, ``compare``, ``test``: each attempt side by side, its changes, its tests run in
  its worktree (output kept), its cost and time;
- ``pick``: one attempt approved into the merge queue like a review's approve, the others
  stopped and their worktrees and branches removed; ``drop``: the whole task ended so;
  both first say what would be lost (``losses``) and lose commits only with consent;
- ``worktrees``, ``clean``, ``after_landing``: every worktree with its state, and the
  landed and dropped ones removed when nothing would be lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.adapters.git_worktrees import resolve_commit
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.dispatch import worktree_prep as prep
from runeconsole.services.dispatch.creation import Creator, NewTask
from runeconsole.services.dispatch.removal import Removal, Remover
from runeconsole.services.dispatch.settings import WorktreeSettings
from runeconsole.services.dispatch.task_store import (
    DROPPED,
    KEPT,
    LANDED,
    PICKED,
    REMOVED,
    STARTED,
    STOPPED,
    Attempt,
    Task,
    TaskStore,
)
from runeconsole.services.dispatch.undoing import Recovery
from runeconsole.services.dispatch.worktree_list import (
    DROPPED_STATE,
    MAIN,
    MISSING,
    WorktreeRow,
    own_files,
    read_rows,
)
from runeconsole.services.dispatch.worktree_list import (
    LANDED as LANDED_STATE,
)
from runeconsole.services.merge_queue import MergeQueue, ProcessReport, QueueEntry
from runeconsole.services.merge_queue.model import EntryChanges
from runeconsole.services.project import Project
from runeconsole.services.review.service import Reviews
from runeconsole.services.supervision.service import Supervisor


@dataclass
class AttemptView:
    """One attempt as compare shows it."""

    attempt: Attempt
    activity: str | None = None
    added: int | None = None
    removed: int | None = None
    files: list[str] = field(default_factory=list)
    commits: int = 0
    cost_usd: float | None = None
    seconds: float | None = None
    error: str | None = None

    @property
    def test(self) -> dict[str, Any] | None:
        found = self.attempt.get("test")
        return found if isinstance(found, dict) else None

    def to_json(self) -> dict[str, Any]:
        return {
            **self.attempt.fields,
            "activity": self.activity,
            "added": self.added,
            "removed": self.removed,
            "files": self.files,
            "commits": self.commits,
            "cost_usd": self.cost_usd,
            "seconds": self.seconds,
            "changes_error": self.error,
        }


@dataclass
class Loss:
    """What ending one attempt would lose or keep: its agent's files and lone commits."""

    attempt: int
    agent: str
    files: list[str]
    commits: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "agent": self.agent,
            "files": self.files,
            "commits": self.commits,
        }


@dataclass
class Ending:
    """What a pick or a drop did."""

    task: Task
    removals: list[Removal]
    approval: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task.to_json(),
            "approval": self.approval,
            "removals": [r.to_json() for r in self.removals],
        }


class Dispatch:
    def __init__(self, project: Project, *, supervisor: Supervisor | None = None) -> None:
        self.project = project
        self.root = project.root
        self.supervisor = supervisor or Supervisor(project)
        self.store = TaskStore(project)
        self.creator = Creator(self.supervisor, self.store)
        self.remover = Remover(self.supervisor)
        self.queue = MergeQueue(project)
        self.settings = project.settings(WorktreeSettings)

    # -- starting --------------------------------------------------------------------------

    def new(self, request: NewTask) -> Task:
        return self.creator.new(request)

    def suggest(self, text: str, role: str = "worker") -> str:
        return self.creator.suggest(text, role)

    def recover(self) -> list[str]:
        return Recovery(self.supervisor, self.store).recover()

    # -- tasks -----------------------------------------------------------------------------

    def tasks(self) -> list[Task]:
        return self.store.list()

    def task(self, task_id: str) -> Task:
        task = self.store.read(task_id)
        if task.error:
            raise RuneError(f"task {task_id} is unreadable: {task.path}: {task.error}")
        return task

    def compare(self, task_id: str) -> list[AttemptView]:
        task = self.task(task_id)
        reviews = Reviews(self.project, registry=self.supervisor.registry, queue=self.queue)
        now = self.project.clock.now()
        views = []
        for attempt in task.attempts:
            view = AttemptView(attempt)
            record = None
            if self.supervisor.registry.path_for(attempt.agent).exists():
                record = self.supervisor.registry.get(attempt.agent)
            if record is not None and not record.error:
                view.activity = (
                    _text(record.get("activity")) if record.status == "active" else "ended"
                )
                cost = record.get("cost")
                if isinstance(cost, dict) and isinstance(cost.get("usd"), int | float):
                    view.cost_usd = float(cost["usd"])
                view.seconds = _seconds(attempt, record.fields, now)
            worktree = attempt.worktree
            if worktree is not None and worktree.is_dir():
                changes = reviews.changes_at(worktree, str(task.get("base_commit") or "") or None)
                if changes.error:
                    view.error = changes.error
                else:
                    view.added, view.removed = changes.added, changes.removed
                    view.files = [f.path for f in changes.files]
                    view.commits = changes.ahead
            views.append(view)
        return views

    def test(self, task_id: str, attempt: int | None = None) -> list[Attempt]:
        """``merge_queue.test_command`` in each attempt's worktree (or the one named), its
        output kept; the result is the attempt's ``test``."""
        task = self.task(task_id)
        settings = self.queue.settings
        if not settings.test_command:
            raise RuneError(
                "no test command: set runeconsole.merge_queue.test_command in .claude/talisman.yml"
            )
        chosen = [task.attempt(attempt)] if attempt is not None else task.attempts
        for one in chosen:
            worktree = one.worktree
            if worktree is None or not worktree.is_dir():
                self.store.update_attempt(
                    task_id,
                    one.number,
                    {"test": {"ok": False, "message": "no worktree to test in", "at": self._now()}},
                )
                continue
            run = prep.run_in(
                settings.test_command,
                worktree,
                settings.test_timeout,
                "runeconsole.merge_queue.test_timeout_seconds",
            )
            log = self.store.keep_output(task_id, one.number, "test", run.output)
            head = _head(worktree)
            self.store.update_attempt(
                task_id, one.number, {"test": {**run.to_json(log), "at": self._now(), "head": head}}
            )
        return self.task(task_id).attempts

    # -- ending ----------------------------------------------------------------------------

    def losses(self, task_id: str, keep: int | None = None) -> list[Loss]:
        """What ending every attempt but ``keep`` would lose (files are kept, commits lost)."""
        task = self.task(task_id)
        rows = self._rows_by_path()
        found = []
        for attempt in task.attempts:
            if attempt.number == keep or attempt.worktree is None:
                continue
            row = rows.get(str(attempt.worktree))
            if row is None:
                continue
            found.append(
                Loss(attempt.number, attempt.agent, own_files(row), self.remover.lost_commits(row))
            )
        return found

    def pick(self, task_id: str, number: int, *, discard_commits: bool = False) -> Ending:
        task = self.task(task_id)
        chosen = task.attempt(number)
        if task.pick is not None:
            raise RuneError(f"task {task_id} already picked attempt {task.pick}")
        if task.state in (DROPPED, LANDED):
            raise RuneError(f"task {task_id} is {task.state}")
        self._consent(task_id, number, discard_commits)
        reviews = Reviews(self.project, registry=self.supervisor.registry, queue=self.queue)
        approval = reviews.approve(chosen.agent)
        self.store.update(
            task_id,
            lambda f: f.update(
                {
                    "pick": number,
                    "state": PICKED,
                    "queue_entry": approval.entry.entry_id,
                    "picked_at": self._now(),
                }
            ),
        )
        self.store.update_attempt(task_id, number, {"state": PICKED})
        removals = self._end_others(task_id, keep=number, discard=discard_commits)
        return Ending(self.task(task_id), removals, approval.to_json())

    def drop(self, task_id: str, *, discard_commits: bool = False) -> Ending:
        task = self.task(task_id)
        if task.state == PICKED and task.get("queue_entry"):
            entry = next(
                (e for e in self.queue.read().entries if e.entry_id == task.get("queue_entry")),
                None,
            )
            if entry is not None and entry.get("status") in ("pending", "in_progress"):
                raise RuneError(
                    f"task {task_id}'s pick is in the merge queue as {entry.entry_id}; take it "
                    f"out first (`runeconsole merge-queue remove {entry.entry_id}`)"
                )
        self._consent(task_id, None, discard_commits)
        self.store.update(
            task_id, lambda f: f.update({"state": DROPPED, "dropped_at": self._now()})
        )
        removals = self._end_others(task_id, keep=None, discard=discard_commits)
        return Ending(self.task(task_id), removals)

    def _consent(self, task_id: str, keep: int | None, discard: bool) -> None:
        lost = [loss for loss in self.losses(task_id, keep) if loss.commits]
        if lost and not discard:
            said = "; ".join(
                f"{loss.agent}: {len(loss.commits)} ({', '.join(loss.commits[:3])})"
                for loss in lost
            )
            raise RuneError(
                f"commits on no other branch would be lost: {said}; say so to go on "
                "(--discard-commits)"
            )

    def _end_others(self, task_id: str, *, keep: int | None, discard: bool) -> list[Removal]:
        """Every attempt but ``keep`` stopped, then the worktrees read once and each removed
        where nothing would be lost."""
        task = self.task(task_id)
        ending = [
            attempt
            for attempt in task.attempts
            if attempt.number != keep
            # a removed worktree's path may be another task's now
            and not (attempt.state == REMOVED or attempt.get("worktree_removed_at"))
        ]
        for attempt in ending:
            if attempt.state == STARTED and self._active(attempt.agent):
                self.supervisor.kill(
                    attempt.agent,
                    f"task {task_id}: another attempt was picked"
                    if keep
                    else f"task {task_id} was dropped",
                )
            self.store.update_attempt(task_id, attempt.number, {"state": STOPPED})
        rows = self._rows_by_path()
        removals = []
        for attempt in ending:
            row = rows.get(str(attempt.worktree))
            if row is None:
                self.store.update_attempt(task_id, attempt.number, {"state": REMOVED})
                continue
            if row.state not in (MAIN, MISSING):  # the remover refuses those, saying why
                row.state = DROPPED_STATE
            removal = self.remover.remove(row, discard_commits=discard)
            removals.append(removal)
            self.store.update_attempt(
                task_id,
                attempt.number,
                {
                    "state": REMOVED if removal.removed else KEPT,
                    "kept_because": None if removal.removed else removal.reason,
                    "kept_files": removal.files,
                    # The operator let these commits go: a later clean may, once the files
                    # that kept the worktree are gone and its head is still this one.
                    "commits_let_go_at": row.head if discard and not removal.removed else None,
                },
            )
        return removals

    def _active(self, key: str) -> bool:
        registry = self.supervisor.registry
        if not registry.path_for(key).exists():
            return False
        record = registry.get(key)
        return not record.error and record.status == "active"

    # -- worktrees -------------------------------------------------------------------------

    def worktrees(self, *, sizes: bool = True) -> list[WorktreeRow]:
        return read_rows(
            self.root,
            self.supervisor.registry.list(),
            self.store.list(),
            self.queue.read().entries,
            sizes=sizes,
        )

    def _rows_by_path(self) -> dict[str, WorktreeRow]:
        return {str(row.path): row for row in self.worktrees(sizes=False)}

    def clean(self, *, dry_run: bool = False) -> list[Removal]:
        """The landed and dropped worktrees removed, each when nothing would be lost (a
        branch whose commits are on no other branch is left alone, unless the pick or drop
        that kept it for its files had the operator let those very commits go)."""
        removals = []
        for row in self.worktrees(sizes=False):
            if row.state in (LANDED_STATE, DROPPED_STATE):
                let_go = row.commits_let_go_at is not None and row.commits_let_go_at == row.head
                removals.append(
                    self.remover.remove(
                        row, stop_agent=True, dry_run=dry_run, discard_commits=let_go
                    )
                )
        if not dry_run:
            self._after_removals(removals)
        return removals

    def after_landing(self) -> list[Removal]:
        """After the queue landed something: its worktrees removed
        (``runeconsole.worktrees.remove_after_land``) and its tasks marked landed."""
        removals = []
        rows = self.worktrees(sizes=False)
        notes: dict[str, EntryChanges] = {}
        for row in rows:
            if row.state == LANDED_STATE and self.settings.remove_after_land:
                removal = self.remover.remove(row, stop_agent=True)
                removals.append(removal)
                if row.entry is not None:
                    notes[row.entry.entry_id] = {"notes": _landed_notes(row.entry, removal)}
        if notes:
            self.queue.update_entries(notes)
        landed = {str(row.path) for row in rows if row.state == LANDED_STATE}
        for task in self.store.list():
            if task.error or task.state != PICKED or task.pick is None:
                continue
            picked = task.attempt(task.pick)
            if str(picked.worktree) in landed or self._entry_landed(task):
                self.store.update(
                    task.task_id, lambda f: f.update({"state": LANDED, "landed_at": self._now()})
                )
        self._after_removals(removals)
        return removals

    def _entry_landed(self, task: Task) -> bool:
        wanted = task.get("queue_entry")
        return any(
            e.entry_id == wanted and e.get("status") == "completed"
            for e in self.queue.read().entries
        )

    def _after_removals(self, removals: list[Removal]) -> None:
        gone = {r.path for r in removals if r.removed}
        if not gone:
            return
        for task in self.store.list():
            for attempt in task.attempts:
                if str(attempt.worktree) in gone:
                    self.store.update_attempt(
                        task.task_id,
                        attempt.number,
                        {
                            "state": REMOVED if attempt.state != PICKED else PICKED,
                            "worktree_removed_at": self._now(),
                        },
                    )

    def _now(self) -> str:
        return iso_z(self.project.clock.now())


def _landed_notes(entry: QueueEntry, removal: Removal) -> list[str]:
    """The entry's notes after its worktree was looked at: the landing's word that the branch
    was left because a worktree held it gives way to what became of that worktree."""
    kept = [
        n for n in entry.get("notes") or [] if isinstance(n, str) and " checked out in " not in n
    ]
    return [*kept, f"worktree {removal.describe()}"]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _seconds(attempt: Attempt, fields: dict[str, Any], now: datetime) -> float | None:
    started = parse_iso(attempt.get("started_at"))
    if started is None:
        return None
    ended = parse_iso(fields.get("terminated_at") or fields.get("ended_at")) or now
    return max(0.0, (ended - started).total_seconds())


def _head(worktree: Path) -> str | None:
    return resolve_commit(worktree, "HEAD")


def tidy_after_landing(project: Project, report: ProcessReport) -> list[Removal]:
    """After a processing pass that landed something: its worktrees removed and its tasks
    marked landed (``Dispatch.after_landing``); never a failure of the pass itself."""
    if not any(outcome.merged for outcome in report.outcomes):
        return []
    try:
        return Dispatch(project).after_landing()
    except RuneError as exc:
        return [Removal("", None, reason=f"worktrees after the landing: {exc.message}")]
