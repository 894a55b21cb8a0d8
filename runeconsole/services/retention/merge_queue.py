"""Merge-queue entries: completed and failed ones older than the policy leave
``merge-queue.json`` for the archive (taken out under the queue's lock, which
``QueueEdits.remove_finished`` holds); pending and in-progress entries never do. The file's
own ``history`` list is already bounded (its last 200 actions)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.merge_queue import COMPLETED, FAILED
from runeconsole.services.merge_queue.edits import QueueEdits
from runeconsole.services.retention.archive import month_of
from runeconsole.services.retention.pruner import Job, Pruner, Record
from runeconsole.services.retention.report import KindReport

KIND = "merge_queue"
TIMES = ("completed_at", "started_at", "enqueued_at", "requested_at")


def finished_at(entry: dict[str, Any]) -> datetime | None:
    for name in TIMES:
        moment = parse_iso(entry.get(name))
        if moment is not None:
            return moment
    return None


class MergeQueuePruner(Pruner[dict[str, Any]]):
    kind = KIND

    def __init__(self, job: Job) -> None:
        super().__init__(job)
        self.queue = QueueEdits(job.project)

    def closed(self, report: KindReport) -> list[tuple[datetime, dict[str, Any]]]:
        state = self.queue.read()
        if state.error:
            report.notes.append(f"{self.queue.path}: unreadable: {state.error}")
            return []
        finished: list[tuple[datetime, dict[str, Any]]] = []
        for entry in state.entries:
            if entry.status not in (COMPLETED, FAILED):
                report.pending += 1
                continue
            finished.append((finished_at(entry.fields) or self.job.now, entry.fields))
        return finished

    def record(self, entry: dict[str, Any]) -> Record:
        when = finished_at(entry) or self.job.now
        entry_id = str(entry.get("entry_id"))
        return entry_id, month_of(when), {"id": entry_id, "at": iso_z(when), "entry": entry}

    def remove(self, entry_ids: list[str]) -> None:
        self.queue.remove_finished(set(entry_ids))
