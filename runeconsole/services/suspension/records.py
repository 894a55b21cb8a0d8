"""What the service reads and returns: a context file with its verdict, and the results of
a resume or a suspend."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.adapters.tasks import TaskWrite
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import iso_exact, iso_z, parse_iso

OK, STALE, EXHAUSTED, CORRUPT, UNREADABLE = "ok", "stale", "exhausted", "corrupt", "unreadable"
VERDICTS = (OK, STALE, EXHAUSTED, CORRUPT, UNREADABLE)
REASONS = ("turn_limit", "budget_exceeded", "wave_timeout", "signal")


@dataclass
class ContextRecord:
    """One context file as read, with its verdict. Never raises for bad content."""

    key: str
    path: Path
    verdict: str = UNREADABLE
    reason: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    header: str = ""
    body: str = ""
    expected_sha: str | None = None
    actual_sha: str | None = None
    diverged: list[str] = field(default_factory=list)
    stashed: dict[str, str] = field(default_factory=dict)  # diverged file -> stash holding it
    written_at: datetime | None = None
    age_seconds: float | None = None

    def age_at(self, now: datetime) -> float | None:
        return None if self.written_at is None else (now - self.written_at).total_seconds()

    @property
    def arc(self) -> str:
        return self.path.parent.name

    @property
    def task_id(self) -> str:
        value = self.meta.get("task_id")
        return self.path.stem if value is None or isinstance(value, bool) else str(value)

    def text(self, name: str, default: str = "") -> str:
        """A field for display; structures are shown abbreviated, never expanded in full."""
        value = self.meta.get(name)
        if value is None:
            return default
        if isinstance(value, datetime):
            return iso_z(value)
        return str(value) if isinstance(value, str | int | float) else reprlib.repr(value)

    @property
    def resume_count(self) -> int:
        value = self.meta.get("resume_count", 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def files(self, name: str) -> list[str]:
        value = self.meta.get(name)
        return [str(v) for v in value] if isinstance(value, list) else []

    @property
    def detail(self) -> str:
        """What the verdict means, in a line."""
        if self.verdict == CORRUPT:
            return f"integrity check failed (expected {self.expected_sha}, got {self.actual_sha})"
        if self.verdict == STALE:
            return f"git diverged ({len(self.diverged)} files): advisory only{self.stash_hint}"
        return self.reason

    @property
    def stash_hint(self) -> str:
        """Where diverged files are, when the task's suspend stash holds them."""
        if not self.stashed:
            return ""
        held = "; ".join(f"{name} held in stash {stash}" for name, stash in self.stashed.items())
        return f" ({held}: `git stash apply` it to continue the work)"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key,
            "path": str(self.path),
            "task_id": self.task_id,
            "arc": self.arc,
            "verdict": self.verdict,
            "detail": self.detail,
            "reason": self.reason,
        }
        if self.verdict == UNREADABLE and not self.meta:
            return data
        age = None if self.age_seconds is None else round(self.age_seconds, 1)
        data.update(
            worker=self.text("worker"),
            timeout_reason=self.text("timeout_reason"),
            timestamp=self.text("timestamp"),
            age_seconds=age,
            resume_count=self.resume_count,
            files_modified=self.files("files_modified"),
            files_pending=self.files("files_pending"),
            last_action=self.text("last_action"),
            expected_sha=self.expected_sha,
            actual_sha=self.actual_sha,
            diverged=self.diverged,
            stashed=self.stashed,
            written_at=iso_exact(self.written_at) if self.written_at else None,
        )
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ContextRecord:
        """A context file's record as ``to_json`` wrote it (a row of another source's
        stream): its verdict as that source judged it, the frontmatter's fields a row
        carries. Anything of another shape reads as missing, never raises."""

        def text(name: str) -> str:
            value = data.get(name)
            return value if isinstance(value, str) else ""

        def texts(name: str) -> list[str]:
            value = data.get(name)
            return [str(v) for v in value] if isinstance(value, list) else []

        verdict = text("verdict")
        record = cls(
            text("key"),
            Path(text("path") or text("key") or "?"),
            verdict if verdict in VERDICTS else UNREADABLE,
            text("reason") or text("detail"),
            expected_sha=text("expected_sha") or None,
            actual_sha=text("actual_sha") or None,
            diverged=texts("diverged"),
            written_at=parse_iso(data.get("written_at")),
        )
        stashed = data.get("stashed")
        if isinstance(stashed, dict):
            record.stashed = {str(k): str(v) for k, v in stashed.items()}
        age = data.get("age_seconds")
        record.age_seconds = float(age) if isinstance(age, int | float) else None
        if "worker" in data:  # read, not unreadable: the frontmatter's fields it carries
            meta: dict[str, Any] = {name: text(name) for name in META_TEXTS if text(name)}
            meta.update(task_id=text("task_id") or None, resume_count=data.get("resume_count"))
            meta.update(files_modified=texts("files_modified"))
            meta.update(files_pending=texts("files_pending"))
            record.meta = meta
        return record


META_TEXTS = ("worker", "timeout_reason", "timestamp", "last_action")


class ResumeRefused(RuneError):
    """The context cannot be resumed (cold start, or permanently failed); ``task`` is
    what was done to the Claude Code task file."""

    def __init__(self, message: str, task: TaskWrite | None = None) -> None:
        super().__init__(message)
        self.task = task


@dataclass(frozen=True)
class ResumeResult:
    record: ContextRecord
    resume_count: int
    injection: str
    warnings: list[str]
    written: bool
    task: TaskWrite | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            **self.record.to_json(),
            "resume_count": self.resume_count,
            "written": self.written,
            "warnings": self.warnings,
            "injection": self.injection,
            "task": self.task.to_json() if self.task else None,
        }


@dataclass(frozen=True)
class SuspendResult:
    path: Path
    files_modified: list[str]
    files_pending: list[str]
    resume_count: int
    stash: str | None
    content_sha256: str
    warnings: list[str] = field(default_factory=list)
    task: TaskWrite | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "files_modified": self.files_modified,
            "files_pending": self.files_pending,
            "resume_count": self.resume_count,
            "stash": self.stash,
            "content_sha256": self.content_sha256,
            "warnings": self.warnings,
            "task": self.task.to_json() if self.task else None,
        }
