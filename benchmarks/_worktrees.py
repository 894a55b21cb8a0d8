"""Agents with real work in git worktrees of their own, for the review benchmarks: a
project whose main branch holds some files, and per agent a worktree on its own branch
with commits ahead and uncommitted changes, registered idle (ready for review)."""

from __future__ import annotations

import os
from pathlib import Path

from runeconsole.adapters import git
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry

IDENTITY = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def code(module: int, lines: int, *, changed: bool = False) -> str:
    """A Python module of ``lines`` lines; ``changed``: every other line rewritten."""
    out = []
    for n in range(lines):
        if changed and n % 2:
            out.append(f"value_{module}_{n} = compute({n}, scale={module})  # revised\n")
        else:
            out.append(f"value_{module}_{n} = {n} * {module}  # step {n}\n")
    return "".join(out)


def project(root: Path, base_files: dict[str, str]) -> Registry:
    """The repository with ``base_files`` on main; its state and worktrees ignored."""
    git.init_repo(root)
    (root / ".git" / "info" / "exclude").write_text(".claude/\n.worktrees/\n")
    for name, text in base_files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if base_files:
        git.run_git(["add", "--", *base_files], root)
        git.run_git([*IDENTITY, "commit", "--quiet", "-m", "base"], root)
    return Registry(Project(root))


def agent(
    registry: Registry,
    name: str,
    committed: dict[str, str],
    dirty: dict[str, str] | None = None,
) -> Path:
    """``worker-NAME`` on branch ``agent/worker-NAME``: ``committed`` in one commit ahead
    of main, ``dirty`` written and left uncommitted; registered idle."""
    root = registry.root
    worktree = root / ".worktrees" / f"worker-{name}"
    git.run_git(["worktree", "add", "--quiet", "-b", f"agent/worker-{name}", str(worktree)], root)
    for files in (committed, dirty or {}):
        for path, text in files.items():
            target = worktree / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    git.run_git(["add", "--", *committed], worktree)
    git.run_git([*IDENTITY, "commit", "--quiet", "-m", f"{name}: work"], worktree)
    registry.register("worker", name, worktree=str(worktree))
    registry.update(f"worker-{name}", {"activity": "idle"})
    return worktree


def touch(path: Path) -> None:
    """Something moved: the file's content changes (the next look computes again)."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"# {os.getpid()} {len(path.read_text())}\n")
