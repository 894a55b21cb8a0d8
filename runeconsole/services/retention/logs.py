"""Files bounded in place, with nothing worth archiving: the logs (rotated past 1 MiB;
the rotated file goes once it is older than the policy) and the notification times (an
agent's entry goes once older than the policy; the notifier also drops entries a day old
each time it writes)."""

from __future__ import annotations

import contextlib
import json
import os
from datetime import timedelta

from runeconsole.core.files import atomic_write_json
from runeconsole.core.locks import flocked
from runeconsole.services.claude.hooks.hook import LOG_LIMIT, LOG_NAME
from runeconsole.services.notify import LOG_NAME as PUSH_LOG
from runeconsole.services.notify import STATE_NAME
from runeconsole.services.retention.pruner import Job
from runeconsole.services.retention.report import KindReport


class LogPruner:
    """The hook's log (which the hook rotates past 1 MiB itself) and the push log
    (``notify.log``, which nothing else rotates): each rotated here once past 1 MiB, and
    its rotated file (``.1``) deleted once older than the policy."""

    kind = "logs"

    def __init__(self, job: Job) -> None:
        self.job = job
        paths = job.project.paths
        self.logs = [os.fspath(paths.claude_bridge / LOG_NAME), os.fspath(paths.state / PUSH_LOG)]

    def prune(self) -> KindReport:
        report = self.job.report(self.kind)
        for log in self.logs:
            self._prune(log, report)
        return report

    def _prune(self, log: str, report: KindReport) -> None:
        rotated = log + ".1"
        with contextlib.suppress(OSError):
            if os.stat(log).st_size > LOG_LIMIT:
                report.notes.append(f"{os.path.basename(log)} is over {LOG_LIMIT} bytes: rotated")
                if not self.job.dry_run:
                    os.replace(log, rotated)
        try:
            age = self.job.now.timestamp() - os.stat(rotated).st_mtime
        except OSError:
            return
        days = report.policy.days
        if days and age > days * 86400:
            report.deleted += 1
            if not self.job.dry_run:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(rotated)
        else:
            report.kept += 1


class NotificationPruner:
    kind = "notifications"

    def __init__(self, job: Job) -> None:
        self.job = job
        self.paths = job.project.paths

    def prune(self) -> KindReport:
        report = self.job.report(self.kind)
        days = report.policy.days
        path = self.paths.state / STATE_NAME
        if not days or not path.exists():
            return report
        oldest = (self.job.now - timedelta(days=days)).timestamp()
        lock = os.fspath(self.paths.lock_for("notify"))
        with flocked(lock, what="the notification times"):
            try:
                sent = json.loads(path.read_bytes()[: 1024 * 1024])
            except (OSError, ValueError):
                return report
            if not isinstance(sent, dict):
                return report
            kept = {k: v for k, v in sent.items() if isinstance(v, int | float) and v >= oldest}
            report.deleted, report.kept = len(sent) - len(kept), len(kept)
            if report.deleted and not self.job.dry_run:
                atomic_write_json(self.paths.inside(path), kept)
        return report
