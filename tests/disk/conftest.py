"""Fixtures of the full-disk and read-only tests: a project on a small tmpfs of its own
(``tests/support/disk.py``), with what each write path needs already there: an open
question, a permission request whose hook still waits, a queued branch, a suspended task
and a standing rule."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from runeconsole.adapters import git
from runeconsole.core.paths import ProjectPaths
from runeconsole.demo.suspended import write_context
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.cost import ledger
from runeconsole.services.merge_queue.edits import QueueEdits
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import AskRequest, Questions
from tests.support.disk import SmallDisk, small_disk
from tests.support.old_records import decided_requests

pytestmark = pytest.mark.timeout(180)


@dataclass
class Scene:
    root: Path
    disk: SmallDisk
    question: str  # an open question's id
    request: str  # a permission request whose hook still waits
    entry: str  # a pending merge-queue entry
    rule: str  # a standing rule's id
    context: Path  # a suspended task's context file

    @property
    def paths(self) -> ProjectPaths:
        return ProjectPaths(self.root)

    def files(self) -> dict[str, bytes]:
        """Every file of the project but git's and the locks (empty files made to be
        locked; a lock takes no space), with its bytes."""
        found = {}
        for path in self.root.rglob("*"):
            parts = path.relative_to(self.root).parts
            if path.is_file() and ".git" not in parts and ".locks" not in parts:
                found[str(path.relative_to(self.root))] = path.read_bytes()
        return found


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(tmp_path / "disk") as mounted:
        yield mounted


@pytest.fixture
def scene(disk: SmallDisk) -> Iterator[Scene]:
    root = disk.mountpoint / "project"
    git.init_repo(root)
    project = Project(root)
    question, _ = Questions(project).ask(
        AskRequest(
            task_id="task-1",
            question="Which database?",
            options=["A: postgres", "B: sqlite"],
            signal_dir="rune-work-20260101-000000",
        )
    )
    waiting_hook = subprocess.Popen(["sleep", "600"])  # the hook that waits for a decision
    [request] = decided_requests(root, 1, newest=datetime.now(UTC), days=0.001)
    path = files.request_path(ProjectPaths(root), request)
    files.decision_path(path).unlink()
    body = json.loads(path.read_text())
    body["hook_pid"] = waiting_hook.pid
    path.write_text(json.dumps(body))
    entry, _ = QueueEdits(project).add("feat/parser", identity="worker-a")
    rule = Permissions(project).add_rule("allow", "Bash", "npm test", None)
    context = write_context(root)
    now = datetime.now(UTC)  # the requesting agent has spent (a budget can be lifted)
    ledger.record(ProjectPaths(root), "claude-web-0000", "claude", "s-1", 1.5, False,
                  ledger.local_day(now), now.timestamp())  # fmt: skip
    try:
        yield Scene(root, disk, question.id, request, entry.entry_id, rule.id, context)
    finally:
        waiting_hook.kill()
        waiting_hook.wait(timeout=10)
