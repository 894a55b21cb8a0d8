"""``Retention``: one prune over every kind of record (``runeconsole prune``, and the
console once every ``retention.every_hours``).

One prune at a time: it holds the ``retention`` lock (a second one is refused, naming the
first's pid). Each kind is pruned on its own: one that fails (a full disk, a lock held too
long) is reported and the others go on. The moment of the last prune is kept in
``.claude/state/retention.json``, which is how a console knows one is due.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from runeconsole.core.errors import RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.locks import LockBusy, owned
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.claude.permissions.service import PermissionRequest
from runeconsole.services.project import Project
from runeconsole.services.retention import permissions, questions
from runeconsole.services.retention.archive import Archive
from runeconsole.services.retention.conversations import ConversationPruner
from runeconsole.services.retention.files_by_age import FilesByAge
from runeconsole.services.retention.logs import LogPruner, NotificationPruner
from runeconsole.services.retention.merge_queue import MergeQueuePruner
from runeconsole.services.retention.permissions import PermissionPruner
from runeconsole.services.retention.pruner import Job
from runeconsole.services.retention.questions import QuestionPruner
from runeconsole.services.retention.report import KindReport, PruneReport
from runeconsole.services.retention.settings import POLICIES, RetentionSettings
from runeconsole.services.retention.tasks import TaskPruner
from runeconsole.services.worker_questions import Question

STATE_NAME = "retention.json"
PRUNERS: dict[str, Callable[[Job], Any]] = {
    "permissions": PermissionPruner,
    "questions": QuestionPruner,
    "reviews": lambda job: FilesByAge(job, "reviews"),
    "merge_queue": MergeQueuePruner,
    "tasks": TaskPruner,
    "signals": lambda job: FilesByAge(job, "signals"),
    "agent_history": lambda job: FilesByAge(job, "agent_history"),
    "cost": lambda job: FilesByAge(job, "cost"),
    "logs": LogPruner,
    "notifications": NotificationPruner,
    "conversations": ConversationPruner,
}
assert set(PRUNERS) == {kind.name for kind in POLICIES}


class PruneRunning(RuneError):
    """Another process is pruning the root now."""


class Retention:
    def __init__(self, project: Project, settings: RetentionSettings | None = None) -> None:
        self.project = project
        self.paths = project.paths
        self.settings = settings or project.settings(RetentionSettings)
        self.archive = Archive(project.paths)

    @property
    def state_path(self) -> Path:
        return self.paths.state / STATE_NAME

    def prune(self, *, dry_run: bool = False) -> PruneReport:
        """Every kind pruned as its policy says (``dry_run``: counted, nothing written)."""
        now = self.project.clock.now()
        report = PruneReport(dry_run, iso_z(now))
        started = time.monotonic()
        job = Job(self.project, self.archive, self.settings, now, dry_run)
        if dry_run:  # counts only: no lock either (a read-only root can be asked)
            self._prune(job, report)
        else:
            lock = self.paths.lock_for("retention")
            try:
                with owned(lock, self.paths.state / "retention.owner.json", "pruning"):
                    self._prune(job, report)
            except LockBusy as exc:
                raise PruneRunning(f"another prune is running: {exc}") from None
        report.seconds = time.monotonic() - started
        if not dry_run:
            atomic_write_json(
                self.paths.inside(self.state_path),
                {"last_run": report.started_at, "summary": report.summary()},
            )
        return report

    def _prune(self, job: Job, report: PruneReport) -> None:
        for kind in POLICIES:
            try:
                found = PRUNERS[kind.name](job).prune()
            except (RuneError, OSError) as exc:
                found = KindReport(kind.name, self.settings.policy(kind.name))
                found.notes.append(f"not pruned: {_reason(exc)}")
            report.kinds.append(found)
            for month in self.archive.old_months(kind.name, self.settings.archive_months, job.now):
                report.archive_months_dropped.append(f"{kind.name}/{month}")
                if not job.dry_run:
                    self.archive.drop_month(kind.name, month)

    def archived_permissions(self, live: list[PermissionRequest]) -> list[PermissionRequest]:
        """The archived permission requests (not also among ``live``), oldest first."""
        return permissions.archived(self.archive, {request.id for request in live})

    def archived_questions(self, live: list[Question]) -> list[Question]:
        """The archived questions (not also among ``live``)."""
        return questions.archived(self.archive, {question.id for question in live})

    def last_run(self) -> datetime | None:
        try:
            return parse_iso(read_json_object(self.state_path).get("last_run"))
        except UnreadableFile:
            return None

    def due(self) -> bool:
        """Whether the console should prune now (never with ``every_hours: 0``)."""
        if not self.settings.every_hours:
            return False
        last = self.last_run()
        every = timedelta(hours=self.settings.every_hours)
        return last is None or self.project.clock.now() - last >= every


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RuneError):
        return exc.message
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return str(exc)
