"""Reviews kept on disk: ``.claude/state/reviews/{agent}/{seq}-{stamp}.json``.

A review is one round of reading an agent's changes: the base and head commits it was
made on, the comments (each with the line it quotes and the commit it was written
against), and how it ended: ``approved`` (its branch joined the merge queue; the entry's
id is kept) or ``changes_requested`` (its comments were sent to the agent as a prompt,
which is kept too). A review with no verdict is open: new comments join it. Every change
is a locked read-modify-write with an atomic replace; a new review is created with an
exclusive link, so none is ever overwritten. A file that cannot be read is listed with
the reason and never stops the others.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, UnreadableFile
from runeconsole.core.files import atomic_write_json, create_exclusive, dump_json, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import compact_stamp, iso_z
from runeconsole.core.validate import validate_name
from runeconsole.services.project import Project
from runeconsole.services.review.changes import Changes

APPROVED, CHANGES_REQUESTED = "approved", "changes_requested"
VERDICTS = (APPROVED, CHANGES_REQUESTED)
NEW, OLD = "new", "old"
MAX_COMMENT = 4000
MAX_QUOTE = 400


@dataclass(frozen=True)
class Comment:
    """A reviewer's comment: on a line (``file``, ``line`` of the ``side`` it was read
    on, and the line itself, ``quoted``), on a whole file (no ``line``), or on the whole
    change (no ``file``)."""

    text: str
    file: str | None = None
    line: int | None = None
    side: str = NEW
    quoted: str | None = None
    at: str | None = None
    head: str | None = None

    @property
    def place(self) -> str:
        if self.file is None:
            return "the whole change"
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}" + (" (before the change)" if self.side == OLD else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "side": self.side,
            "quoted": self.quoted,
            "text": self.text,
            "at": self.at,
            "head": self.head,
        }

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Comment:
        line = row.get("line")
        return cls(
            text=str(row.get("text") or ""),
            file=row.get("file") if isinstance(row.get("file"), str) else None,
            line=line if isinstance(line, int) and not isinstance(line, bool) else None,
            side=OLD if row.get("side") == OLD else NEW,
            quoted=row.get("quoted") if isinstance(row.get("quoted"), str) else None,
            at=row.get("at") if isinstance(row.get("at"), str) else None,
            head=row.get("head") if isinstance(row.get("head"), str) else None,
        )


@dataclass
class ReviewRecord:
    """One review file as read: every field kept; ``error`` when it cannot be used."""

    agent: str
    path: Path
    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def id(self) -> str:
        return self.path.stem

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def verdict(self) -> str | None:
        verdict = self.fields.get("verdict")
        return verdict if verdict in VERDICTS else None

    @property
    def open(self) -> bool:
        return not self.error and self.verdict is None

    @property
    def comments(self) -> list[Comment]:
        rows = self.fields.get("comments")
        rows = rows if isinstance(rows, list) else []
        return [Comment.from_json(row) for row in rows if isinstance(row, dict)]

    @property
    def head(self) -> str | None:
        head = self.fields.get("head")
        return head if isinstance(head, str) else None

    @property
    def queue_entry(self) -> str | None:
        entry = self.fields.get("queue_entry")
        return entry if isinstance(entry, str) else None

    def to_json(self) -> dict[str, Any]:
        if self.error:
            return {"agent": self.agent, "id": self.id, "path": str(self.path), "error": self.error}
        return {**self.fields, "id": self.id, "path": str(self.path)}


def _validated(comment: Comment) -> Comment:
    if not comment.text.strip():
        raise InvalidInput("a comment needs some text")
    if len(comment.text) > MAX_COMMENT:
        raise InvalidInput(f"a comment is at most {MAX_COMMENT} characters")
    if comment.line is not None and (comment.file is None or comment.line < 1):
        raise InvalidInput("--line needs --file, and counts from 1")
    if comment.file is not None:
        parts = Path(comment.file).parts
        if not comment.file or Path(comment.file).is_absolute() or ".." in parts:
            raise InvalidInput(f"--file {comment.file!r}: a path inside the worktree, please")
    return comment


class ReviewRecords:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.paths, self.clock = project.paths, project.clock

    def directory(self, agent: str) -> Path:
        return self.paths.reviews / validate_name(agent, "agent key")

    # -- reading ---------------------------------------------------------------------------

    def read_path(self, agent: str, path: Path) -> ReviewRecord:
        try:
            return ReviewRecord(agent, path, read_json_object(path))
        except UnreadableFile as exc:
            return ReviewRecord(agent, path, error=exc.reason)

    def history(self, agent: str) -> list[ReviewRecord]:
        """Every review of ``agent``, newest first (unreadable ones with their reason)."""
        directory = self.directory(agent)
        try:
            names = [e.name for e in os.scandir(directory) if e.name.endswith(".json")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        names = [n for n in names if not n.startswith(".")]
        names.sort(key=_sequence, reverse=True)
        return [self.read_path(agent, directory / name) for name in names]

    def latest(self, agent: str) -> ReviewRecord | None:
        found = self.history(agent)
        return next((r for r in found if not r.error), None)

    def open_review(self, agent: str) -> ReviewRecord | None:
        latest = self.latest(agent)
        return latest if latest is not None and latest.open else None

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def _locked(self, agent: str) -> Iterator[Path]:
        directory = self.paths.inside(self.directory(agent))
        with locked(self.paths.lock_for(f"review-{agent}"), what=f"the reviews of {agent}"):
            yield directory

    def _open_or_new(self, agent: str, directory: Path, changes: Changes) -> ReviewRecord:
        latest = self.latest(agent)
        if latest is not None and latest.open:
            return latest
        now = iso_z(self.clock.now())
        fields: dict[str, Any] = {
            "agent": agent,
            "branch": changes.branch,
            "worktree": changes.worktree,
            "base": changes.base,
            "base_ref": changes.base_ref,
            "head": changes.head,
            "created_at": now,
            "updated_at": now,
            "verdict": None,
            "decided_at": None,
            "queue_entry": None,
            "comments": [],
            "sent_at": None,
            "prompt": None,
        }
        sequence = 1 + max((_sequence(p.name) for p in _entries(directory)), default=0)
        path = directory / f"{sequence:04d}-{compact_stamp(self.clock.now())}.json"
        create_exclusive(path, dump_json(fields))
        return ReviewRecord(agent, path, fields)

    def _save(self, record: ReviewRecord) -> ReviewRecord:
        record.fields["updated_at"] = iso_z(self.clock.now())
        atomic_write_json(self.paths.inside(record.path), record.fields)
        return record

    def add_comment(self, agent: str, changes: Changes, comment: Comment) -> ReviewRecord:
        """``comment`` joins the open review (a new one is begun if none is open)."""
        comment = _validated(comment)
        with self._locked(agent) as directory:
            record = self._open_or_new(agent, directory, changes)
            stamped = {**comment.to_json(), "at": iso_z(self.clock.now()), "head": changes.head}
            comments = record.fields.get("comments")
            record.fields["comments"] = [*(comments if isinstance(comments, list) else []), stamped]
            return self._save(record)

    def decide(
        self,
        agent: str,
        changes: Changes,
        verdict: str,
        *,
        queue_entry: str | None = None,
        prompt: str | None = None,
    ) -> ReviewRecord:
        """End the open review (or a new one) with ``verdict``, on the head seen now."""
        with self._locked(agent) as directory:
            record = self._open_or_new(agent, directory, changes)
            now = iso_z(self.clock.now())
            record.fields.update(
                verdict=verdict,
                decided_at=now,
                head=changes.head,
                base=changes.base,
                branch=changes.branch,
            )
            if queue_entry is not None:
                record.fields["queue_entry"] = queue_entry
            if prompt is not None:
                record.fields.update(prompt=prompt, sent_at=now)
            return self._save(record)


def _entries(directory: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(directory) if e.name.endswith(".json")]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _sequence(name: str) -> int:
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() else 0


__all__ = [
    "APPROVED",
    "CHANGES_REQUESTED",
    "NEW",
    "OLD",
    "Comment",
    "ReviewRecord",
    "ReviewRecords",
]
