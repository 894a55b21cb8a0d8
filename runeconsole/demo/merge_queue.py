"""Small merge queues on real branches, for the screenshots and the pane's snapshots.

``build_queue``: four pending entries (the last is predicted to conflict with the one
before it) and one that failed on a conflict. ``build_batches``: a fleet's queue in the
middle of a run, batches at work. Branches are committed in a temporary worktree, so
the project's own checkout only gets the base commit on ``main``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.git import run_git
from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.timeutil import iso_z
from runeconsole.services.merge_queue import MergeQueue, MergeQueueSettings
from runeconsole.services.merge_queue.model import EntryChanges
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


# A fleet's queue in the middle of a run, for the batches' screenshots and snapshots:
# (branch, identity, files, minutes since the previous one joined, priority)
LANDED = (
    ("feat/login-form", "worker-login", {"src/login.py": "FORM = 1\n"}, 0),
    ("feat/rate-limit", "worker-limits", {"src/limits.py": "RATE = 5\n"}, 3),
    ("feat/cache-keys", "worker-cache", {"src/cache.py": "KEYS = 2\n"}, 4),
    ("feat/audit-log", "worker-audit", {"src/audit.py": "AUDIT = 1\n"}, 2),
)
CULPRIT = ("feat/pdf-report", "worker-pdf", {"src/pdf.py": "FONTS = 0\n"}, 2)
BISECTED = (  # one batch, red; now its halves test side by side
    ("feat/export-csv", "worker-export", {"src/export.py": "CSV = 1\n"}, 3),
    ("feat/search-ranks", "worker-search", {"src/search.py": "RANK = 2\n"}, 1),
    ("feat/quota-check", "worker-quota", {"src/quota.py": "QUOTA = 3\n"}, 2),
    ("feat/retry-jobs", "worker-jobs", {"src/jobs.py": "RETRY = 4\n"}, 1),
)
WAITING = (
    ("feat/docs-typos", "worker-docs", {"docs/guide.md": "typos\n"}, 1, "low"),
    ("feat/metrics", "worker-metrics", {"src/metrics.py": "M = 1\n"}, 28, "normal"),
    ("feat/hotfix-login", "orchestrator-auth", {"src/login.py": "FORM = 2\n"}, 4, "urgent"),
)


def build_batches(root: Path, clock: ManualClock) -> MergeQueue:
    """Commit the base files on main and leave the queue as a processor records it
    mid-run (this process standing in for it): four entries landed (one on a retry:
    flaky), one failed alone, a red batch of four bisected with both halves testing, the
    second on top of the first, and three waiting (an urgent one, a low one raised by
    waiting, a normal one)."""
    commit_files(root, BASE, "demo: service skeleton")
    settings = MergeQueueSettings(test_command=["make", "test"], batch_max=4, parallel_runs=2)
    queue = MergeQueue(Project(root, clock), settings)
    ids = []
    for branch, identity, files, minutes in (*LANDED, CULPRIT, *BISECTED):
        clock.advance(minutes * 60)
        ids.append(queue.add(branch, identity=identity)[0].entry_id)
        commit_branch(root, branch, files, f"{identity}: {', '.join(files)}")
    for branch, identity, files, minutes, priority in WAITING:
        clock.advance(minutes * 60)
        commit_branch(root, branch, files, f"{identity}: {', '.join(files)}")
        queue.add(branch, identity=identity, priority=priority)
    clock.advance(60)
    _record_the_run(queue, ids, clock)
    return queue


def _record_the_run(queue: MergeQueue, ids: list[str], clock: ManualClock) -> None:
    now = clock.now()
    done = [4, 2, 5, 1]  # minutes ago each landed
    for n, (entry_id, minutes) in enumerate(zip(ids[:4], done, strict=True)):
        landed: EntryChanges = {"status": "completed", "merged_commit": f"{n + 1:x}" * 40}
        landed["completed_at"] = iso_z(now - timedelta(minutes=minutes))
        landed["flaky"] = n == 2
        queue.update_entry(entry_id, landed)
    queue.update_entry(
        ids[4],
        {
            "status": "failed",
            "reason": "tests_failed",
            "error": "tests failed (exit 1)",
            "completed_at": iso_z(now - timedelta(minutes=3)),
            "output_tail": ["FAILED tests/test_pdf.py::test_fonts - missing glyph", "1 failed"],
            "notes": ["found by bisecting: it fails alone"],
        },
    )
    state = queue.read()
    bisected = [state.find(entry_id) for entry_id in ids[5:]]
    queue.claim_batch([e for e in bisected if e is not None], "b1")
    halves = (("b4", ids[5:7], None, 1, 72), ("b5", ids[7:9], "b4", 2, 40))
    batches: list[dict[str, Any]] = []
    changes: dict[str, dict[str, Any]] = {}
    for batch_id, entries, on, slot, seconds in halves:
        batches.append(
            {
                "batch_id": batch_id,
                "entries": entries,
                "state": "testing",
                "step": "test",
                "step_started_at": iso_z(now - timedelta(seconds=seconds)),
                "slot": slot,
                "on": on,
                "half_of": "b1",
                "half": slot,
                "runs": 1,
                "pid": os.getpid(),
            }
        )
        changes.update({e: {"batch_id": batch_id, "current_step": "test"} for e in entries})
    queue.show_batches(batches, 1, changes)
