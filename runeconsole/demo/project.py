"""Create the demo project: a real git repository with short liveness thresholds, a test
of its own, the demo's scripted Claude Code as the agents' program and its test runner as
the merge queue's test command."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from runeconsole.adapters import git
from runeconsole.adapters.claude_settings import settings_path
from runeconsole.core.files import atomic_write_bytes
from runeconsole.demo.attempt_work import BASE_TEST
from runeconsole.demo.fake_claude import write_program
from runeconsole.demo.pipelines import write_pipelines
from runeconsole.services.claude.install.install import plan_install

DEMO_TALISMAN = """\
# Demo thresholds: short, so every liveness colour shows within a minute.
runeconsole:
  heartbeat_interval_seconds: 5
  stale_after_seconds: 30
  tmux:
    socket_name: {socket}
  supervisor:
    auto_handoff: true
  merge_queue:  # the project's tests (tests/test_*.py), run in a worktree or a batch
    test_command: {test_command}
    remote: origin  # lands on the team's remote (a bare repository in tmp/), as a team's does
  background:  # Claude Code here is the demo's scripted stand-in (runeconsole new, n)
    command: {claude}
    poll_seconds: 0
  claude:
    ask_wait_seconds: 120
question_relay:
  timeout_seconds: 90
"""


def demo_socket() -> str:
    """The demo's own tmux server: never the operator's, and killed whole on exit."""
    return f"runeconsole-demo-{os.getpid()}"


def make_origin(root: Path) -> None:
    """The team's remote: a bare repository in the project's scratch directory (``tmp/``,
    ignored by git, gone with the demo), ``main`` pushed to it."""
    origin = root / "tmp" / "origin.git"
    git.run_git(["init", "--quiet", "--bare", "-b", "main", str(origin)], root)
    git.run_git(["remote", "add", "origin", str(origin)], root)
    git.run_git(["push", "--quiet", "--set-upstream", "origin", "main"], root)


def make_project(root: Path, socket: str | None = None) -> Path:
    """The repository, a .gitignore for our state, and a private tmux server for the agents."""
    git.init_repo(root)
    atomic_write_bytes(root / "README.md", b"# demo project\n\nManaged by a simulated fleet.\n")
    atomic_write_bytes(
        root / ".gitignore", b".claude/state/\n.claude/worktrees/\ntmp/\n__pycache__/\n"
    )
    atomic_write_bytes(root / "tests" / "test_readme.py", BASE_TEST.encode())
    git.run_git(["add", "README.md", ".gitignore", "tests/test_readme.py"], root)
    git.run_git(["commit", "--quiet", "-m", "demo project"], root)
    make_origin(root)
    # Quoted as JSON, which YAML reads: a path with spaces or colons stays one value.
    talisman = DEMO_TALISMAN.format(
        socket=socket or demo_socket(),
        test_command=json.dumps([sys.executable, "-m", "runeconsole.demo.checks"]),
        claude=json.dumps(str(write_program(root))),
    )
    atomic_write_bytes(root / ".claude" / "talisman.yml", talisman.encode())
    # The agents send Claude Code's hook events through the hook as installed for real.
    plan_install(settings_path("local", root)).apply()
    # The plan the fleet works on (the harness's DOT pipelines), one gate waiting.
    write_pipelines(root, datetime.now(UTC))
    return root
