"""Create the demo project: a real git repository with short liveness thresholds."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters import git
from runeconsole.core.files import atomic_write_bytes
from runeconsole.demo.merge_queue import build_queue

DEMO_TALISMAN = """\
# Demo thresholds: short, so every liveness colour shows within a minute.
runeconsole:
  heartbeat_interval_seconds: 5
  stale_after_seconds: 30
  merge_queue:
    test_command: "sh -c 'echo collecting 42 tests; sleep 2; echo 42 passed'"
question_relay:
  timeout_seconds: 40
"""


def make_project(root: Path) -> Path:
    git.init_repo(root)
    atomic_write_bytes(root / "README.md", b"# demo project\n\nManaged by a simulated fleet.\n")
    atomic_write_bytes(root / ".gitignore", b".claude/state/\ntmp/\n")
    git.run_git(["add", "README.md", ".gitignore"], root)
    git.run_git(["commit", "--quiet", "-m", "demo project"], root)
    atomic_write_bytes(root / ".claude" / "talisman.yml", DEMO_TALISMAN.encode())
    build_queue(root)
    return root
