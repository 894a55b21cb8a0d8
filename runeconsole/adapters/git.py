"""Git through its CLI: argument lists only, always with a timeout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from runeconsole.core.errors import RuneError

DEFAULT_TIMEOUT = 60.0


def run_git(
    args: list[str],
    cwd: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    check: bool = True,
    env: dict[str, str] | None = None,
    input: str | None = None,
    errors: str = "strict",
) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` in ``cwd``; ``env``: variables set on top of ours; ``input``: stdin;
    ``errors``: how output that is not UTF-8 is decoded (``replace`` for file contents)."""
    try:
        result = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors=errors,
            timeout=timeout,
            check=False,
            env={**os.environ, **env} if env else None,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise RuneError("git is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise RuneError(f"git {' '.join(args)} took longer than {timeout:g}s in {cwd}") from None
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise RuneError(
            f"git {' '.join(args)} failed in {cwd}: {detail[-1] if detail else 'no output'}"
        )
    return result


def toplevel(start: Path) -> Path | None:
    """The git root containing ``start``, or ``None`` outside a repository."""
    try:
        result = run_git(["rev-parse", "--show-toplevel"], start, timeout=10, check=False)
    except RuneError:
        return None
    if result.returncode != 0:
        return None
    return Path(result.stdout.strip())


def init_repo(path: Path, *, branch: str = "main") -> None:
    """A fresh repository with one commit, identity set locally (for demos and tests)."""
    path.mkdir(parents=True, exist_ok=True)
    run_git(["init", "--quiet", f"--initial-branch={branch}"], path)
    run_git(["config", "user.email", "runeconsole@example.invalid"], path)
    run_git(["config", "user.name", "runeconsole"], path)
    run_git(["commit", "--quiet", "--allow-empty", "-m", "initial commit"], path)


def changed_files(worktree: Path) -> list[str]:
    """``git diff --name-only HEAD --``: what the work tree changed, per git, not per agent."""
    result = run_git(["diff", "--name-only", "HEAD", "--"], worktree, timeout=30)
    return [line for line in result.stdout.splitlines() if line]


def _stash_top(worktree: Path) -> str:
    result = run_git(["rev-parse", "--quiet", "--verify", "refs/stash"], worktree, check=False)
    return result.stdout.strip()


def stash_push(worktree: Path, message: str) -> bool:
    """``git stash push -m MESSAGE``; False when there was nothing to stash."""
    before = _stash_top(worktree)
    run_git(["stash", "push", "-m", message], worktree, timeout=60)
    return _stash_top(worktree) != before


def stash_list(worktree: Path) -> list[tuple[str, str]]:
    """``(ref, message)`` for each stash, newest first (``On main: msg`` -> ``msg``)."""
    result = run_git(["stash", "list", "--format=%gd%x00%gs"], worktree, timeout=30, check=False)
    entries = []
    for line in result.stdout.splitlines():
        ref, _, subject = line.partition("\0")
        entries.append((ref, subject.split(": ", 1)[-1]))
    return entries


def stash_files(worktree: Path, ref: str) -> list[str]:
    """Files a stash entry changed (``git stash show --name-only REF``)."""
    result = run_git(["stash", "show", "--name-only", ref], worktree, timeout=30, check=False)
    return [line for line in result.stdout.splitlines() if line]
