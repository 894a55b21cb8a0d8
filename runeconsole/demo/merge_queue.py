"""A small merge queue on real branches, for the screenshots and the pane's snapshots.

Four pending entries (the last is predicted to conflict with the one before it) and
one that failed on a conflict. Branches are committed in a temporary worktree, so
the project's own checkout only gets the base commit on ``main``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.git import run_git
from runeconsole.core.files import atomic_write_bytes
from runeconsole.services.merge_queue import MergeQueue, MergeQueueSettings
from runeconsole.services.project import Project

BASE = {"src/api.py": "def handler():\n    return 1\n", "src/db.py": "SCHEMA = 1\n"}
# (branch, identity, node id, files, minutes since the previous entry was queued)
ENTRIES: tuple[tuple[str, str, str, dict[str, str], float], ...] = (
    ("feat/auth-tokens", "orchestrator-auth", "impl_auth", {"src/auth.py": "TOKENS = 1\n"}, 0),
    ("feat/search-index", "orchestrator-search", "impl_search", {"src/search.py": "I = 1\n"}, 2),
    ("feat/billing-api", "orchestrator-billing", "impl_billing", {"src/api.py": "# bill\n"}, 1),
    ("feat/api-v2", "worker-parser", "impl_parser", {"src/api.py": "# v2\n"}, 0.5),
)
FAILED = ("feat/schema", "worker-schema", "impl_schema", {"src/db.py": "SCHEMA = 2\n"})
FAILED_FILES = ["migrations/0002.sql", "src/db.py"]


def commit_files(worktree: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        atomic_write_bytes(worktree / name, text.encode())
    run_git(["add", "--", *files], worktree)
    run_git(["commit", "--quiet", "-m", message], worktree)


def commit_branch(root: Path, branch: str, files: dict[str, str], message: str) -> None:
    """``branch`` = main + one commit, made in a throw-away worktree."""
    scratch = Path(tempfile.mkdtemp(prefix="runeconsole-branch-"))
    worktree = scratch / "worktree"
    run_git(["worktree", "add", "--quiet", "-b", branch, str(worktree), "main"], root)
    try:
        commit_files(worktree, files, message)
    finally:
        run_git(["worktree", "remove", "--force", str(worktree)], root)
        shutil.rmtree(scratch, ignore_errors=True)


def build_queue(root: Path, clock: ManualClock | None = None) -> MergeQueue:
    """Commit the base files on main, make the branches and queue them (``root`` on main).

    With a manual clock the entries get fixed ages (screenshots, snapshots).
    """
    commit_files(root, BASE, "demo: service skeleton")
    queue = MergeQueue(Project(root, clock), MergeQueueSettings())
    for branch, identity, node, files, minutes in (*ENTRIES, (*FAILED, 0)):
        commit_branch(root, branch, files, f"{node}: {', '.join(files)}")
        if clock is not None:
            clock.advance(minutes * 60)
        queue.add(branch, identity=identity, node_id=node)
    failed = queue.read().entries[-1]
    queue.update_entry(
        failed.entry_id,
        {
            "status": "failed",
            "reason": "conflict",
            "error": "rebase onto main conflicts",
            "conflict_files": FAILED_FILES,
            "attempts": 1,
        },
    )
    if clock is not None:
        clock.advance(95)
    return queue
