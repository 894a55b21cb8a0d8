"""What an agent changed, as a review shows it: the commits its branch is ahead of its
base, and every file that differs from the base, with its lines added and removed and
where the change lives (committed, staged, unstaged, untracked). Plain data, with
``to_json`` for ``review --json`` and ``from_json`` for a review read from another source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runeconsole.adapters.git_diff import Commit, RawChange
from runeconsole.adapters.git_status import Status

ADDED, MODIFIED, DELETED, RENAMED = "added", "modified", "deleted", "renamed"
COPIED, TYPE_CHANGED = "copied", "type changed"
STATUS_WORDS = {
    "A": ADDED,
    "M": MODIFIED,
    "D": DELETED,
    "R": RENAMED,
    "C": COPIED,
    "T": TYPE_CHANGED,
}
COMMITTED, STAGED, UNSTAGED, UNTRACKED, CONFLICTED = (
    "committed",
    "staged",
    "unstaged",
    "untracked",
    "conflicted",
)
PLACES = (COMMITTED, STAGED, UNSTAGED, UNTRACKED, CONFLICTED)


@dataclass(frozen=True)
class FileChange:
    """One file that differs from the base; ``added``/``removed`` are ``None`` for a
    binary file (git counts no lines in it)."""

    path: str
    status: str = MODIFIED
    old_path: str | None = None
    added: int | None = 0
    removed: int | None = 0
    where: tuple[str, ...] = ()
    similarity: int | None = None

    @property
    def binary(self) -> bool:
        return self.added is None

    @property
    def shown_path(self) -> str:
        return f"{self.old_path} → {self.path}" if self.old_path else self.path

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "old_path": self.old_path,
            "status": self.status,
            "added": self.added,
            "removed": self.removed,
            "binary": self.binary,
            "where": list(self.where),
            "similarity": self.similarity,
        }

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> FileChange:
        binary = bool(row.get("binary"))
        return cls(
            path=str(row.get("path") or ""),
            status=str(row.get("status") or MODIFIED),
            old_path=_text(row.get("old_path")),
            added=None if binary else _count(row.get("added")),
            removed=None if binary else _count(row.get("removed")),
            where=tuple(str(w) for w in row.get("where") or () if w in PLACES),
            similarity=_count(row.get("similarity")) if row.get("similarity") is not None else None,
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True)
class Changes:
    """An agent's work against its base. ``error`` says why there is nothing to show (the
    worktree is gone, is not a repository, the base cannot be found)."""

    worktree: str | None = None
    branch: str | None = None
    head: str | None = None
    base: str | None = None  # the merge-base commit the diff starts from
    base_ref: str | None = None  # what it was found from (the main branch, or --base)
    commits: tuple[Commit, ...] = ()
    ahead: int = 0
    files: tuple[FileChange, ...] = ()
    error: str | None = None
    fingerprint: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed or 0 for f in self.files)

    @property
    def uncommitted(self) -> list[FileChange]:
        return [f for f in self.files if set(f.where) - {COMMITTED}]

    @property
    def empty(self) -> bool:
        return not self.files and not self.ahead

    def summary(self) -> str:
        """``+120 −34 · 5 files · 3 commits`` (or the error)."""
        if self.error:
            return self.error
        files = len(self.files)
        text = f"+{self.added} −{self.removed} · {files} file{'s' * (files != 1)}"
        if self.ahead:
            text += f" · {self.ahead} commit{'s' * (self.ahead != 1)}"
        return text

    def file(self, path: str) -> FileChange | None:
        return next((f for f in self.files if path in (f.path, f.old_path)), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "worktree": self.worktree,
            "branch": self.branch,
            "head": self.head,
            "base": self.base,
            "base_ref": self.base_ref,
            "ahead": self.ahead,
            "commits": [
                {"sha": c.sha, "subject": c.subject, "author": c.author, "time": c.when}
                for c in self.commits
            ],
            "added": self.added,
            "removed": self.removed,
            "files": [f.to_json() for f in self.files],
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Changes:
        """What ``to_json`` wrote (another source's ``review --json``), every field checked."""
        commits = tuple(
            Commit(
                str(c.get("sha") or ""),
                str(c.get("subject") or ""),
                str(c.get("author") or ""),
                _count(c.get("time")),
            )
            for c in data.get("commits") or ()
            if isinstance(c, dict)
        )
        files = tuple(
            FileChange.from_json(f) for f in data.get("files") or () if isinstance(f, dict)
        )
        return cls(
            worktree=_text(data.get("worktree")),
            branch=_text(data.get("branch")),
            head=_text(data.get("head")),
            base=_text(data.get("base")),
            base_ref=_text(data.get("base_ref")),
            commits=commits,
            ahead=_count(data.get("ahead")),
            files=files,
            error=_text(data.get("error")),
        )


def places(status: Status, committed: set[str]) -> dict[str, tuple[str, ...]]:
    """Where each path's change lives, from ``git status`` and the paths the commits ahead
    changed."""
    found: dict[str, list[str]] = {path: [COMMITTED] for path in committed}
    for entry in status.entries:
        where = found.setdefault(entry.path, [])
        if entry.conflicted:
            where.append(CONFLICTED)
        elif entry.untracked:
            where.append(UNTRACKED)
        else:
            if entry.staged != ".":
                where.append(STAGED)
            if entry.unstaged != ".":
                where.append(UNSTAGED)
        if entry.orig_path:
            found.setdefault(entry.orig_path, []).extend(w for w in where if w != COMMITTED)
    return {path: tuple(dict.fromkeys(where)) for path, where in found.items()}


def file_changes(raw: list[RawChange], where: dict[str, tuple[str, ...]]) -> tuple[FileChange, ...]:
    files = []
    for change in raw:
        found = where.get(change.path, ())
        if change.old_path:
            found = tuple(dict.fromkeys((*found, *where.get(change.old_path, ()))))
        files.append(
            FileChange(
                path=change.path,
                status=STATUS_WORDS.get(change.status, MODIFIED),
                old_path=change.old_path,
                added=change.added,
                removed=change.removed,
                where=found or (COMMITTED,),
                similarity=change.similarity,
            )
        )
    return tuple(files)
