"""The conversation index follows the transcripts Claude Code keeps: a session whose
transcript is gone (Claude Code cleaned it up, or it was deleted) stays searchable for the
policy's days after it was found gone, then its rows leave the index. Only the index's own
rows are deleted: Claude Code's files (``~/.claude/projects/``) are never touched, and an
index that does not exist yet is not made."""

from __future__ import annotations

from datetime import timedelta

from runeconsole.services.conversations.index import ConversationIndex
from runeconsole.services.conversations.index_schema import DB_NAME
from runeconsole.services.retention.pruner import Job
from runeconsole.services.retention.report import KindReport


class ConversationPruner:
    kind = "conversations"

    def __init__(self, job: Job) -> None:
        self.job = job

    def prune(self) -> KindReport:
        report = self.job.report(self.kind)
        if not (self.job.project.paths.state / DB_NAME).exists():
            return report
        index = ConversationIndex(self.job.project)
        try:
            if not self.job.dry_run:
                index.check_gone()
            gone = index.gone_sessions()
            days = report.policy.days
            cutoff = self.job.now - timedelta(days=days) if days else None
            leaving = [path for path, at in gone if cutoff is not None and at < cutoff]
            report.kept = len(gone) - len(leaving)
            report.deleted = len(leaving)
            if leaving and not self.job.dry_run:
                report.deleted = index.drop_gone(leaving)
            report.notes.extend(index.messages)
        finally:
            index.close()
        return report
