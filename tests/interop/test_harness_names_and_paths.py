"""Names and paths as the harness writes them: relative worktrees, and names with '.'."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from tests.support.cli import cli_env
from tests.support.merge_queue import git


@pytest.mark.e2e
def test_a_relative_worktree_is_the_project_roots_wherever_the_command_runs(
    harness_repo: Path, tmp_path: Path
) -> None:
    """The harness recorded ``.claude/worktrees/impl_auth`` for orchestrator-impl_auth."""
    worktree = harness_repo / ".claude" / "worktrees" / "impl_auth"
    git(harness_repo, "worktree", "add", "--quiet", str(worktree), "worktree-impl_auth")
    (worktree / "impl_auth.py").write_text("# half done\n")
    (worktree / "notes.md").write_text("untracked\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    result = subprocess.run(
        [sys.executable, "-m", "runeconsole", "hook", "update", "orchestrator-impl_auth",
         "--summary", "auth flow", "--json", "--root", str(harness_repo)],
        cwd=elsewhere, env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    hook = json.loads(result.stdout)
    assert hook["files_modified"] == ["impl_auth.py", "notes.md"]
    saved = json.loads(
        (harness_repo / ".claude/state/hooks/orchestrator-impl_auth.json").read_text()
    )
    assert saved["resumption_instructions"] == "resume at step 3"  # the harness's fields kept
    assert saved["last_committed_node"] == "impl_auth"


NAMED = {
    "agent_id": "orchestrator-impl.v2-20261123T182326Z",
    "role": "orchestrator",
    "name": "impl.v2",
    "session_id": "orch-impl.v2",
    "worktree": ".claude/worktrees/impl.v2",
    "status": "active",
    "created_at": "2026-11-23T18:23:26Z",
    "last_heartbeat": "2026-11-23T18:23:26Z",
    "crashed_at": None,
    "terminated_at": None,
    "predecessor_id": None,
    "metadata": {},
}


def test_names_with_a_dot_are_listed_and_acted_on(harness_repo: Path, cli) -> None:
    """``create_identity("orchestrator", "impl.v2", …)``: the harness takes names as given."""
    identities = harness_repo / ".claude" / "state" / "identities"
    (identities / "orchestrator-impl.v2.json").write_text(json.dumps(NAMED, indent=2))
    root = ("--root", str(harness_repo))

    listed = {a["key"]: a for a in cli("agents", "--json", *root).json()}
    beat = cli("agent", "heartbeat", "orchestrator-impl.v2", *root)
    hooked = cli("hook", "update", "orchestrator-impl.v2", "--node", "impl.v2", *root)
    crashed = cli("agent", "crash", "orchestrator-impl.v2", *root)

    assert "error" not in listed["orchestrator-impl.v2"]
    assert (beat.code, hooked.code, crashed.code) == (0, 0, 0), beat.err + hooked.err + crashed.err
    saved = json.loads((identities / "orchestrator-impl.v2.json").read_text())
    assert saved["status"] == "crashed" and saved["session_id"] == "orch-impl.v2"


def test_queue_entries_with_a_dot_are_acted_on(harness_repo: Path, cli) -> None:
    queue = MergeQueue(Project(harness_repo))
    git(harness_repo, "branch", "worktree-impl.v2", "worktree-impl_db")
    entry, _ = queue.add("worktree-impl.v2", node_id="impl.v2")
    root = ("--root", str(harness_repo))

    moved = cli("merge-queue", "move", entry.entry_id, "--up", *root)
    removed = cli("merge-queue", "remove", entry.entry_id, *root)

    assert entry.entry_id.startswith("mq-impl.v2-")
    assert (moved.code, removed.code) == (0, 0), moved.err + removed.err


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("orchestrator-..", "contains '..'"),
        ("orchestrator-a..b", "contains '..'"),
        ("orchestrator/impl", "contains a path separator"),
        (".orchestrator-impl", "starts with '.'"),
    ],
)
def test_names_that_could_leave_their_directory_are_refused_with_the_reason(
    harness_repo: Path, cli, name: str, reason: str
) -> None:
    root = ("--root", str(harness_repo))
    for args in (("agent", "heartbeat", name), ("hook", "update", name, "--summary", "x")):
        result = cli(*args, *root)
        assert result.code == 2 and reason in result.err, (args, result.err)
    result = cli("merge-queue", "remove", name, *root)
    assert result.code == 2 and reason in result.err
