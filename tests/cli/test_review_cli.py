"""``runeconsole review``: what scripts and the fleet console rely on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from tests.support.review import agent_with_worktree, commit, write


def test_review_prints_the_commits_the_files_and_the_diff(repo: Path, cli) -> None:
    key, wt = agent_with_worktree(repo, "a")
    commit(wt, {"app.py": "print('hi')\n"}, "say hi")
    write(wt, {"notes.md": "todo\n"})
    result = cli("review", key, "--root", str(repo))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == f"{key}  feat-a  {wt}"
    assert "+2 −0 · 2 files · 1 commit" in lines[1]
    assert "say hi" in lines[2]
    assert "+1 −0  app.py    added, committed" in result.out
    assert "+1 −0  notes.md  added, untracked" in result.out
    assert "diff --git a/app.py b/app.py" in result.out and "+todo" in result.out
    stat = cli("review", key, "--stat", "--root", str(repo))
    assert "diff --git" not in stat.out and "app.py" in stat.out


def test_review_json_has_the_changes_the_diff_and_the_state(repo: Path, cli) -> None:
    key, wt = agent_with_worktree(repo, "b")
    first = commit(wt, {"one.txt": "1\n"}, "one")
    commit(wt, {"two.txt": "2\n"}, "two")
    data = cli("review", key, "--json", "--root", str(repo)).json()
    assert (data["agent"], data["branch"], data["ahead"]) == (key, "feat-b", 2)
    assert [f["path"] for f in data["files"]] == ["one.txt", "two.txt"]
    assert data["diff"].startswith("diff --git a/one.txt b/one.txt")
    assert data["review_state"] == "working" and data["review"] is None
    since = cli("review", key, "--json", "--stat", "--base", first, "--root", str(repo)).json()
    assert [f["path"] for f in since["files"]] == ["two.txt"] and "diff" not in since


def test_review_exits_1_without_a_worktree_and_says_why(repo: Path, cli) -> None:
    Registry(Project(repo)).register("worker", "nowhere")
    result = cli("review", "worker-nowhere", "--root", str(repo))
    assert result.code == 1 and "has no worktree to review" in result.err
    key, wt = agent_with_worktree(repo, "gone")
    shutil.rmtree(wt)
    gone = cli("review", key, "--root", str(repo))
    assert gone.code == 1 and f"worktree {wt} is gone" in gone.err
    assert cli("review", key, "--json", "--root", str(repo)).json()["error"].endswith("is gone")
    assert cli("review", "worker-nobody", "--root", str(repo)).code == 1
    bad = cli("review", "../etc", "--root", str(repo))
    assert bad.code == 2 and "Traceback" not in bad.err


@pytest.mark.e2e
def test_comment_approve_and_history_from_a_shell(repo: Path, cli) -> None:
    key, wt = agent_with_worktree(repo, "c", node_id="n-3")
    commit(wt, {"app.py": "x = 1\ny = 2\n"}, "app")
    root = ("--root", str(repo))
    said = cli("review", "comment", key, "--file", "app.py", "--line", "2", "Rename y.", *root)
    assert said.code == 0 and "comment on app.py:2" in said.out
    whole = cli("review", "comment", key, "Add a test.", "--json", *root).json()
    assert [c["quoted"] for c in whole["comments"]] == ["y = 2", None]
    approved = cli("review", "approve", key, "--json", *root)
    assert approved.code == 0, approved.err
    data = approved.json()
    assert data["entry"]["branch"] == "feat-c" and data["entry"]["node_id"] == "n-3"
    assert data["predicted_conflicts"]["against_main"] == []
    assert data["review"]["verdict"] == "approved"
    history = cli("review", "history", key, *root)
    assert "approved" in history.out and "2 comments" in history.out
    listed = cli("agents", "--json", *root).json()
    assert {row["key"]: row["review_state"] for row in listed} == {key: "working"}


def test_send_without_comments_is_refused(repo: Path, cli) -> None:
    key, _ = agent_with_worktree(repo, "d")
    result = cli("review", "send", key, "--root", str(repo))
    assert result.code == 1 and "no comments to send" in result.err


def test_agents_json_says_which_agents_are_ready(repo: Path, cli) -> None:
    key, wt = agent_with_worktree(repo, "e")
    commit(wt, {"e.txt": "e\n"}, "e")
    Registry(Project(repo)).mark_terminated(key, "done")  # its session ended
    Registry(Project(repo)).register("worker", "plain")
    listed = cli("agents", "--json", "--root", str(repo)).json()
    states = {row["key"]: row["review_state"] for row in listed}
    assert states == {key: "ready", "worker-plain": "working"}
