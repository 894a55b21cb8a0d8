"""What the dispatch tests share (the service's and the CLI's): a project whose state is
kept out of ``git status``, the Claude Code stand-in, the talisman, commits made in a
worktree as an agent makes them, and what git and the files say afterwards."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runeconsole.adapters.claude_cli import COMMAND_ENV
from tests.support.merge_queue import commit_in_checkout, git

# Claude Code's stand-in: its arguments (NUL-separated) written beside it, named by the
# agent the supervisor started it as; then it waits, as a session at its prompt does.
STAND_IN = """#!/bin/sh
printf '%s\\0' "$@" > "$(dirname "$0")/args-$RUNECONSOLE_AGENT_KEY"
exec sleep 300
"""


def install_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in for Claude Code (writes its arguments beside itself, then sleeps),
    reached through ``$RUNECONSOLE_CLAUDE``; its path."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(STAND_IN)
    path.chmod(0o755)
    monkeypatch.setenv(COMMAND_ENV, str(path))
    return path


def project_excluding_state(root: Path) -> Path:
    """Three files committed on main; the project's own state and talisman kept out of
    ``git status``, as a project using runeconsole keeps them (the worktrees are not)."""
    (root / ".git" / "info" / "exclude").write_text(
        "/.claude/state/\n/.claude/attractor/\n/.claude/talisman.yml\n"
    )
    commit_in_checkout(root, {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}, "base files")
    return root


def write_talisman(root: Path, worktrees: str = "", merge_queue: str = "") -> None:
    """``.claude/talisman.yml`` with the given ``runeconsole.worktrees`` and
    ``runeconsole.merge_queue`` lines (YAML, indented under their section)."""
    lines = ["runeconsole:"]
    for section, body in (("worktrees", worktrees), ("merge_queue", merge_queue)):
        if body.strip():
            lines.append(f"  {section}:")
            lines += [f"    {line}" for line in body.strip().splitlines()]
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "talisman.yml").write_text("\n".join(lines) + "\n")


def stand_in_args(stand_in: Path, agent: str) -> list[str] | None:
    """The arguments the stand-in was started with as ``agent`` (None: not started)."""
    path = stand_in.parent / f"args-{agent}"
    if not path.exists() or not path.read_bytes().endswith(b"\0"):
        return None
    return path.read_bytes().decode().split("\0")[:-1]


def commit_in(worktree: Path, files: dict[str, str], message: str) -> str:
    """What an agent does in its worktree: write the files, add them, commit."""
    for name, content in files.items():
        (worktree / name).parent.mkdir(parents=True, exist_ok=True)
        (worktree / name).write_text(content)
    git(worktree, "add", "--", *files)
    git(worktree, "commit", "--quiet", "-m", message)
    return git(worktree, "rev-parse", "HEAD")


def branches(root: Path) -> set[str]:
    return set(git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split())


def worktree_paths(root: Path) -> set[Path]:
    out = git(root, "worktree", "list", "--porcelain")
    return {
        Path(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("worktree ")
    }


def status(path: Path) -> list[str]:
    """``git status --porcelain`` with every untracked file named."""
    return git(path, "status", "--porcelain", "--untracked-files=all").splitlines()


def task_file(root: Path, task_id: str) -> dict[str, Any]:
    loaded = json.loads((root / ".claude" / "state" / "tasks" / f"{task_id}.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


def identity(root: Path, key: str) -> dict[str, Any]:
    loaded = json.loads((root / ".claude" / "state" / "identities" / f"{key}.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    process = subprocess.Popen(["true"])
    process.wait(timeout=10)
    return process.pid
