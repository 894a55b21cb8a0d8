"""Create the demo project: a real git repository with short liveness thresholds."""

from __future__ import annotations

import os
from pathlib import Path

from runeconsole.adapters import git
from runeconsole.adapters.claude_settings import settings_path
from runeconsole.core.files import atomic_write_bytes
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
  merge_queue:
    test_command: sh -c 'echo collecting tests; sleep 2; echo 12 passed in 2.01s'
  claude:
    ask_wait_seconds: 120
question_relay:
  timeout_seconds: 90
"""


def demo_socket() -> str:
    """The demo's own tmux server: never the operator's, and killed whole on exit."""
    return f"runeconsole-demo-{os.getpid()}"


def make_project(root: Path, socket: str | None = None) -> Path:
    """The repository, a .gitignore for our state, and a private tmux server for the agents."""
    git.init_repo(root)
    atomic_write_bytes(root / "README.md", b"# demo project\n\nManaged by a simulated fleet.\n")
    atomic_write_bytes(root / ".gitignore", b".claude/state/\ntmp/\n.worktrees/\n")
    git.run_git(["add", "README.md", ".gitignore"], root)
    git.run_git(["commit", "--quiet", "-m", "demo project"], root)
    talisman = DEMO_TALISMAN.format(socket=socket or demo_socket())
    atomic_write_bytes(root / ".claude" / "talisman.yml", talisman.encode())
    # The agents send Claude Code's hook events through the hook as installed for real.
    plan_install(settings_path("local", root)).apply()
    return root
