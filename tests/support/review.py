"""Agents with real git worktrees and real work in them, for review tests."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters.clock import Clock
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.service import Reviews
from tests.support.merge_queue import git


def worktree_for(root: Path, name: str, *, branch: str | None = None) -> Path:
    """A linked worktree of the project on a new branch (``feat-NAME``), beside it."""
    path = root.parent / f"wt-{name}"
    git(root, "worktree", "add", "--quiet", "-b", branch or f"feat-{name}", str(path), "main")
    return path


def agent_with_worktree(
    root: Path, name: str, *, clock: Clock | None = None, register: bool = True, **fields: str
) -> tuple[str, Path]:
    """``worker-NAME`` registered with a worktree of its own; its key and the worktree."""
    worktree = worktree_for(root, name)
    if register:
        Registry(Project(root, clock)).register("worker", name, worktree=str(worktree), **fields)
    return f"worker-{name}", worktree


def write(worktree: Path, files: dict[str, str | bytes]) -> None:
    for path, content in files.items():
        target = worktree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)


def commit(worktree: Path, files: dict[str, str | bytes], message: str) -> str:
    """What an agent does: edit, add, commit (in its own worktree)."""
    write(worktree, files)
    git(worktree, "add", "--", *files)
    git(worktree, "-c", "user.name=agent", "-c", "user.email=agent@x", "commit", "-qm", message)
    return git(worktree, "rev-parse", "HEAD")


def reviews(root: Path, clock: Clock | None = None) -> Reviews:
    return Reviews(Project(root, clock))
