"""Git worktrees agents work in, from birth to removal: a branch and a worktree made from a
base, every worktree listed with its lock and whether git still finds it, what a worktree
holds that would be lost (uncommitted files, commits on no other branch), and its removal
through ``git worktree remove`` only (never a recursive delete of a path git does not list).

Argument lists through ``adapters.git.run_git``, each under a timeout.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from runeconsole.adapters import git_status
from runeconsole.adapters.git import run_git
from runeconsole.adapters.git_worktrees import common_dir, resolve_commit, valid_branch_name
from runeconsole.core.errors import RuneError

# Claude Code's lock reason on a worktree it made: ``claude session NAME (pid N start T)``.
_CLAUDE_LOCK = re.compile(r"claude session .*\(pid (\d+)")
GIT_TIMEOUT = 120.0


@dataclass(frozen=True)
class LinkedWorktree:
    """One entry of ``git worktree list --porcelain``."""

    path: Path
    head: str | None
    branch: str | None  # short name (``agent/worker-x``); None when detached
    locked: str | None  # the lock's reason ("" when locked without one), None when not
    prunable: str | None  # why git would prune it (its directory is gone), None when not
    main: bool  # the repository's main worktree (never removed)

    @property
    def lock_pid(self) -> int | None:
        """The pid of the Claude Code session that locked it, when its lock names one."""
        found = _CLAUDE_LOCK.search(self.locked or "")
        return int(found.group(1)) if found else None


def list_worktrees(repo: Path) -> list[LinkedWorktree]:
    """Every worktree of ``repo``'s repository, the main one first."""
    out = run_git(["worktree", "list", "--porcelain"], repo, timeout=GIT_TIMEOUT).stdout
    found: list[LinkedWorktree] = []
    for block in out.strip().split("\n\n"):
        fields: dict[str, str | None] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" not in fields or "bare" in fields:
            continue
        branch = fields.get("branch")
        found.append(
            LinkedWorktree(
                path=Path(str(fields["worktree"])),
                head=fields.get("HEAD"),
                branch=branch.removeprefix("refs/heads/") if branch else None,
                locked=fields.get("locked"),
                prunable=fields.get("prunable"),
                main=not found,
            )
        )
    return found


def add_worktree(repo: Path, path: Path, branch: str, base: str) -> None:
    """A new branch ``branch`` at ``base`` checked out in a new worktree at ``path``.

    Refuses (``RuneError`` saying what to do) a branch or a path that already exists, and a
    base that names no commit; git's own hooks do not run (``post-checkout``)."""
    if not valid_branch_name(branch):
        raise RuneError(f"{branch!r} is not a valid branch name")
    commit = resolve_commit(repo, base)
    if commit is None:
        raise RuneError(f"base {base!r} names no commit in {repo}; give --base an existing ref")
    if resolve_commit(repo, f"refs/heads/{branch}") is not None:
        raise RuneError(
            f"branch {branch} already exists; choose another --name, or delete the branch "
            f"(`git branch -D {branch}`) if nothing on it matters"
        )
    if path.exists():
        raise RuneError(f"{path} already exists; choose another --name, or remove it first")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        run_git(
            [
                "-c",
                "core.hooksPath=/dev/null",
                "worktree",
                "add",
                "--quiet",
                "-b",
                branch,
                str(path),
                commit,
            ],
            repo,
            timeout=GIT_TIMEOUT,
        )
    except RuneError as exc:
        short = _short_of_space(path.parent)
        if short is None:
            raise
        raise RuneError(f"{exc.message}; {short}") from None


def _short_of_space(directory: Path, floor: int = 1 << 20) -> str | None:
    """Why a write there may have failed when git's own words do not say (``Could not
    reset index file``): the disk nearly full."""
    try:
        info = os.statvfs(directory)
    except OSError:
        return None
    free = info.f_bavail * info.f_frsize
    if free >= floor:
        return None
    return f"the disk is full ({free // 1024} KiB free): free some space and try again"


def exclude(repo: Path, *patterns: str) -> list[str]:
    """``patterns`` in the repository's ``info/exclude`` (kept out of ``git status``, never
    committed); returns those added now."""
    path = common_dir(repo) / "info" / "exclude"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    there = set(text.splitlines())
    added = [pattern for pattern in dict.fromkeys(patterns) if pattern not in there]
    if not added:
        return []
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(("" if not text or text.endswith("\n") else "\n") + "\n".join(added) + "\n")
    return added


def dirty_files(worktree: Path) -> list[str]:
    """Uncommitted and untracked files in ``worktree`` (what a removal would lose)."""
    return sorted({entry.path for entry in git_status.status(worktree).entries})


def unique_commits(repo: Path, branch: str, *, also_kept: tuple[str, ...] = ()) -> list[str]:
    """Commits of ``branch`` found on no other branch (nor on ``also_kept`` commits), as
    ``"abc1234 subject"`` lines, newest first: what deleting it would lose."""
    args = [
        "log",
        "--format=%h %s",
        f"refs/heads/{branch}",
        "--not",
        f"--exclude={branch}",
        "--branches",
        *also_kept,
    ]
    result = run_git(args, repo, timeout=GIT_TIMEOUT, check=False)
    if result.returncode != 0:
        return []
    return [line for line in result.stdout.splitlines() if line.strip()]


def size_bytes(path: Path, limit: int = 200_000) -> int | None:
    """The bytes under ``path`` (its ``.git`` file and links not followed); ``None`` when
    it holds more than ``limit`` entries (a count that would cost too much to take)."""
    total, seen = 0, 0
    for directory, dirs, files in os.walk(path):
        seen += len(dirs) + len(files)
        if seen > limit:
            return None
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                continue
    return total


def unlock(repo: Path, path: Path) -> None:
    run_git(["worktree", "unlock", str(path)], repo, timeout=GIT_TIMEOUT)


def remove(repo: Path, path: Path) -> None:
    """``git worktree remove`` (no force: git itself refuses a worktree with changes)."""
    run_git(["worktree", "remove", str(path)], repo, timeout=GIT_TIMEOUT)


def delete_branch(repo: Path, branch: str, expected: str) -> bool:
    """Delete ``branch`` if it still points at ``expected`` (compare-and-swap)."""
    result = run_git(
        ["update-ref", "-d", f"refs/heads/{branch}", expected],
        repo,
        check=False,
        timeout=GIT_TIMEOUT,
    )
    return result.returncode == 0
