"""Building real git histories for merge-queue tests without touching any checkout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import Clock
from runeconsole.core.crash_points import PAUSE_AT_ENV, PAUSE_DIR_ENV
from runeconsole.services.merge_queue import MergeQueue, MergeQueueSettings
from runeconsole.services.project import Project
from tests.support.cli import cli_env
from tests.support.polling import wait_until


def git(root: Path, *args: str, env: dict[str, str] | None = None, data: str | None = None) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=root,
        capture_output=True,
        text=True,
        input=data,
        timeout=60,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return result.stdout.strip()


def commit_on(
    root: Path, branch: str, files: dict[str, str], *, base: str = "main", message: str = ""
) -> str:
    """Commit ``files`` on top of ``base`` as ``branch`` using a private index (no checkout)."""
    index = root / ".git" / f"tmp-index-{os.getpid()}-{time.monotonic_ns()}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        parent = git(root, "rev-parse", "--verify", f"{base}^{{commit}}")
        git(root, "read-tree", parent, env=env)
        for path, content in files.items():
            blob = git(root, "hash-object", "-w", "--stdin", data=content)
            git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(root, "write-tree", env=env)
        commit = git(root, "commit-tree", tree, "-p", parent, "-m", message or f"{branch}: edit")
    finally:
        index.unlink(missing_ok=True)
    git(root, "update-ref", f"refs/heads/{branch}", commit)
    return commit


def commit_in_checkout(root: Path, files: dict[str, str], message: str = "operator edit") -> str:
    """What an operator does in their checkout of main: edit, add, commit."""
    for path, content in files.items():
        (root / path).write_text(content)
    git(root, "add", *files)
    git(root, "commit", "--quiet", "-m", message)
    return git(root, "rev-parse", "HEAD")


def rev(root: Path, ref: str) -> str:
    return git(root, "rev-parse", "--verify", f"{ref}^{{commit}}")


def branch_exists(root: Path, branch: str) -> bool:
    result = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
        cwd=root,
        capture_output=True,
        timeout=30,
        check=False,
    )
    return result.returncode == 0


def first_parent_subjects(root: Path, ref: str = "main") -> list[str]:
    return git(root, "log", "--first-parent", "--format=%s", ref).splitlines()


def worktree_paths(root: Path) -> list[str]:
    out = git(root, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


# The queue as it first was: one entry at a time, nothing speculative, no retries. The
# tests written for it run it so; those of batches, bisection and speculation say what
# they use (``BATCHED``, or their own settings).
SEQUENTIAL: dict[str, Any] = {"batch_max": 1, "parallel_runs": 1, "flaky_retries": 0}


def make_queue(
    root: Path, clock: Clock | None = None, test_command: list[str] | None = None, **settings: Any
) -> MergeQueue:
    command = test_command if test_command is not None else ["true"]
    chosen = {**SEQUENTIAL, **settings}
    return MergeQueue(Project(root, clock), MergeQueueSettings(test_command=command, **chosen))


def write_talisman(root: Path, test_command: str, **extra: Any) -> None:
    lines = ["runeconsole:", "  merge_queue:", f"    test_command: {json.dumps(test_command)}"]
    lines += [f"    {key}: {json.dumps(value)}" for key, value in {**SEQUENTIAL, **extra}.items()]
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "talisman.yml").write_text("\n".join(lines) + "\n")


def ignore_state(root: Path) -> None:
    """Keep the project's own state out of ``git status`` (as a real project would)."""
    (root / ".git" / "info" / "exclude").write_text(".claude/\n")


def queue_file(root: Path) -> dict[str, Any]:
    return json.loads((root / ".claude" / "state" / "merge-queue.json").read_text())


# -- real processors, killed at exact places ------------------------------------------------


def start_processor(
    root: Path, env: dict[str, str] | None = None, *more: str
) -> subprocess.Popen[str]:
    """``runeconsole merge-queue process`` (``more``: e.g. ``--all``) as a real process."""
    return subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "merge-queue", "process", *more, "--root", str(root)],
        env={**cli_env(), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def kill_processor_when(
    root: Path,
    ready: Callable[[], bool],
    whole_group: bool = False,
    env: dict[str, str] | None = None,
    *more: str,
) -> None:
    """Start ``merge-queue process`` and kill -9 it (or its process group) once ``ready()``."""
    processor = start_processor(root, env, *more)
    wait_until(ready, what="the processor to reach the step under test")
    if whole_group:
        os.killpg(processor.pid, signal.SIGKILL)
    else:
        os.kill(processor.pid, signal.SIGKILL)
    processor.wait(timeout=10)


def paused_at(point: str, directory: Path) -> tuple[dict[str, str], Callable[[], bool]]:
    """Environment that stops a processor at ``point``, and a check that it got there."""
    env = {PAUSE_AT_ENV: point, PAUSE_DIR_ENV: str(directory)}
    return env, (directory / f"{point}.paused").exists
