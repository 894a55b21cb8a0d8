"""The one way a kind of record is pruned: its closed records, the ones the policy sends
away (older than its days, or past the newest ``keep`` of them), archived a batch at a time
and their originals removed (``Archive.move``), after finishing what a prune killed
half-way left (``Archive.recover``). Each kind says what its closed records are, how one
is archived and how its originals go (``Pruner``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from runeconsole.services.project import Project
from runeconsole.services.retention.archive import Archive
from runeconsole.services.retention.report import KindReport
from runeconsole.services.retention.settings import Policy, RetentionSettings

T = TypeVar("T")
BATCH = 10_000  # records archived (and removed) at a time: a bounded memory, any size
Record = tuple[str, str, dict[str, Any]]  # id, month, what is archived


@dataclass
class Job:
    """One prune: the project, its archive, the moment it started, whether it writes."""

    project: Project
    archive: Archive
    settings: RetentionSettings
    now: datetime
    dry_run: bool

    def report(self, kind: str) -> KindReport:
        return KindReport(kind, self.settings.policy(kind))


def leaving(policy: Policy, closed: list[tuple[datetime, T]], now: datetime) -> list[T]:
    """Which closed records leave: older than ``policy.days``, or beyond the newest
    ``policy.keep``; oldest first."""
    ordered = sorted(closed, key=lambda pair: pair[0])
    cut = len(ordered) - policy.keep if policy.keep and len(ordered) > policy.keep else 0
    if policy.days:
        cutoff = now - timedelta(days=policy.days)
        while cut < len(ordered) and ordered[cut][0] < cutoff:
            cut += 1
    return [item for _, item in ordered[:cut]]


class Pruner(Generic[T]):
    """A kind of record that leaves for the archive; ``T`` is how it finds one."""

    kind = ""

    def __init__(self, job: Job) -> None:
        self.job = job

    def prune(self) -> KindReport:
        report = self.job.report(self.kind)
        if not self.job.dry_run:
            report.recovered = self.job.archive.recover(self.kind, self.remove)
            self.prepare(report)
        closed = self.closed(report)
        going = leaving(report.policy, closed, self.job.now)
        report.kept = len(closed) - len(going)
        if self.job.dry_run or not going:
            report.archived = len(going)
            return report
        for start in range(0, len(going), BATCH):
            batch = [self.record(item) for item in going[start : start + BATCH]]
            report.archived += self.job.archive.move(self.kind, batch, self.remove)
        self.finish(report)
        return report

    def prepare(self, report: KindReport) -> None:
        """Before a prune that writes: what closes records first (stopped hooks)."""

    def closed(self, report: KindReport) -> list[tuple[datetime, T]]:
        """Every closed record and when it closed (open ones counted in ``pending``)."""
        raise NotImplementedError

    def record(self, item: T) -> Record:
        raise NotImplementedError

    def remove(self, ids: list[str]) -> None:
        """The originals of these archived records gone (some may be gone already)."""
        raise NotImplementedError

    def finish(self, report: KindReport) -> None:
        """After the records left: what they leave empty."""
