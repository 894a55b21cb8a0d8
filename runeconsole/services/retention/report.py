"""What a prune did (or, with ``--dry-run``, would do), kind by kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runeconsole.services.retention.settings import Policy


@dataclass
class KindReport:
    kind: str
    policy: Policy
    archived: int = 0  # moved into the monthly archive
    deleted: int = 0  # removed without an archive (log files, notification entries)
    kept: int = 0  # closed records still within the policy
    pending: int = 0  # open records: never touched
    recovered: int = 0  # originals of a prune cut short, removed now
    notes: list[str] = field(default_factory=list)  # records left alone, and why

    @property
    def changed(self) -> int:
        return self.archived + self.deleted + self.recovered

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "policy": self.policy.to_json(),
            "archived": self.archived,
            "deleted": self.deleted,
            "kept": self.kept,
            "pending": self.pending,
            "recovered": self.recovered,
            "notes": self.notes,
        }


@dataclass
class PruneReport:
    dry_run: bool
    started_at: str
    seconds: float = 0.0
    kinds: list[KindReport] = field(default_factory=list)
    archive_months_dropped: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return sum(kind.changed for kind in self.kinds) + len(self.archive_months_dropped)

    def summary(self) -> str:
        """One line: ``archived 1,204 permissions, 33 questions; deleted 1 logs``."""
        archived = [f"{k.archived:,} {k.kind}" for k in self.kinds if k.archived]
        deleted = [f"{k.deleted:,} {k.kind}" for k in self.kinds if k.deleted]
        verb = "would archive" if self.dry_run else "archived"
        parts = [f"{verb} {', '.join(archived)}"] if archived else []
        if deleted:
            parts.append(f"{'would delete' if self.dry_run else 'deleted'} {', '.join(deleted)}")
        if self.archive_months_dropped:
            parts.append(f"{len(self.archive_months_dropped)} archive months past keeping")
        return "; ".join(parts) or "nothing to prune"

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "started_at": self.started_at,
            "seconds": round(self.seconds, 3),
            "kinds": [kind.to_json() for kind in self.kinds],
            "archive_months_dropped": self.archive_months_dropped,
            "summary": self.summary(),
        }
