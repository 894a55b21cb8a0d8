"""Processing the merge queue end to end on real temporary git repositories."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from runeconsole.core.errors import RuneError
from runeconsole.core.pids import pid_alive
from runeconsole.services.merge_queue import (
    BASE_MOVED,
    BRANCH_MISSING,
    COMPLETED,
    CONFLICT,
    FAILED,
    MAIN_DIRTY,
    PENDING,
    TESTS_FAILED,
    TIMEOUT,
)
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.support.merge_queue import (
    branch_exists,
    commit_in_checkout,
    commit_on,
    first_parent_subjects,
    git,
    make_queue,
    queue_file,
    rev,
    worktree_paths,
)
from tests.support.polling import wait_until


def signals_of(root: Path, signal_type: str) -> list[dict]:
    return [s.to_json() for s in Signals(Project(root)).pending(signal_type=signal_type)]


@pytest.mark.e2e
def test_clean_branches_merge_in_queue_order(repo: Path, clock) -> None:
    for name in ("one", "two", "three"):
        commit_on(repo, f"feat/{name}", {f"{name}.txt": name}, message=f"add {name}")
    hooks = repo / ".claude" / "state" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "worker-two.json").write_text(json.dumps({"phase": "impl_complete", "custom": [1]}))
    queue = make_queue(repo, clock)
    for name in ("one", "two", "three"):
        queue.add(f"feat/{name}", identity=f"worker-{name}")
    queue.move(queue.read().pending()[2].entry_id, -1)  # three before two

    report = queue.process(run_all=True)

    assert [o.status for o in report.outcomes] == [COMPLETED] * 3
    assert first_parent_subjects(repo)[:3] == ["add two", "add three", "add one"]
    assert not any(branch_exists(repo, f"feat/{n}") for n in ("one", "two", "three"))
    assert (repo / "three.txt").read_text() == "three"  # the checkout of main followed
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert worktree_paths(repo) == [str(repo)]
    entries = queue.read().entries
    assert all(e.get("merged_commit") and e.get("attempts") == 1 for e in entries)
    assert [s["step"] for s in entries[0].get("steps")] == ["verify", "rebase", "test", "merge"]
    hook = json.loads((hooks / "worker-two.json").read_text())
    assert hook["phase"] == "merged" and hook["custom"] == [1] and hook["merged_at"]
    complete = signals_of(repo, "MERGE_COMPLETE")
    # Told to the role of each entry's identity (the harness's parties are roles).
    assert [s["target"] for s in complete] == ["worker", "worker", "worker"]
    assert sorted(s["payload"]["identity_name"] for s in complete) == [
        "worker-one",
        "worker-three",
        "worker-two",
    ]


@pytest.mark.e2e
def test_conflict_reports_exact_files_and_changes_nothing_else(repo: Path, clock) -> None:
    commit_in_checkout(repo, {"a.txt": "main a\n", "b.txt": "main b\n"}, "main edits")
    branch_tip = commit_on(
        repo, "feat/x", {"a.txt": "x a\n", "b.txt": "x b\n", "new.txt": "n"}, base="main~1"
    )
    main_before = rev(repo, "main")
    queue = make_queue(repo, clock)
    entry, _ = queue.add("feat/x", identity="worker-x")

    report = queue.process()

    outcome = report.outcomes[0]
    assert (outcome.status, outcome.reason) == (FAILED, CONFLICT)
    assert outcome.conflict_files == ["a.txt", "b.txt"]
    assert rev(repo, "main") == main_before
    assert rev(repo, "feat/x") == branch_tip
    assert worktree_paths(repo) == [str(repo)]
    stored = queue.get(entry.entry_id)
    assert stored.conflict_files == ["a.txt", "b.txt"] and stored.reason == CONFLICT
    (conflict,) = signals_of(repo, "MERGE_CONFLICT")
    assert conflict["target"] == "worker"
    assert conflict["payload"]["conflict_files"] == ["a.txt", "b.txt"]
    (failed,) = signals_of(repo, "MERGE_FAILED")
    assert failed["payload"]["reason"] == CONFLICT


def test_red_tests_fail_with_output_tail(repo: Path, clock) -> None:
    commit_on(repo, "feat/red", {"a.txt": "red"})
    before = rev(repo, "main")
    lines: list[str] = []
    queue = make_queue(repo, clock, ["sh", "-c", "echo checking; echo boom >&2; exit 3"])
    queue.add("feat/red")
    report = queue.process(progress=lambda p: lines.append(p.message) if p.output else None)
    outcome = report.outcomes[0]
    assert (outcome.reason, outcome.error) == (TESTS_FAILED, "tests failed (exit 3)")
    assert outcome.output_tail == ["checking", "boom"]
    assert lines == ["checking", "boom"]
    assert rev(repo, "main") == before
    assert branch_exists(repo, "feat/red")


@pytest.mark.e2e
def test_slow_tests_time_out(repo: Path, clock) -> None:
    commit_on(repo, "feat/slow", {"a.txt": "slow"})
    queue = make_queue(repo, clock, ["sleep", "30"], test_timeout=0.5)
    queue.add("feat/slow")
    outcome = queue.process().outcomes[0]
    assert outcome.reason == TIMEOUT


def test_tests_run_on_the_rebased_code(repo: Path, clock) -> None:
    commit_in_checkout(repo, {"main-only.txt": "m"}, "main moves on")
    commit_on(repo, "feat/t", {"feat.txt": "f"}, base="main~1")
    queue = make_queue(repo, clock, ["sh", "-c", "test -f main-only.txt && test -f feat.txt"])
    queue.add("feat/t")
    assert queue.process().outcomes[0].status == COMPLETED


def test_missing_branch_fails_without_touching_git(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    queue.add("feat/never-pushed", identity="worker-n")
    outcome = queue.process().outcomes[0]
    assert outcome.reason == BRANCH_MISSING
    assert worktree_paths(repo) == [str(repo)]
    assert signals_of(repo, "MERGE_FAILED")[0]["target"] == "worker"


MOVE_MAIN_ONCE = """
import pathlib, subprocess, sys
marker = pathlib.Path(sys.argv[1]) / "moved"
if not marker.exists():
    marker.write_text("1")
    root = sys.argv[2]
    pathlib.Path(root, "hotfix.txt").write_text("hotfix")
    subprocess.run(["git", "add", "hotfix.txt"], cwd=root, check=True, timeout=30)
    subprocess.run(["git", "commit", "-qm", "hotfix"], cwd=root, check=True, timeout=30)
"""


@pytest.mark.parametrize("rounds", [3, 1])
@pytest.mark.e2e
def test_main_moving_during_tests_rebases_and_tests_again(
    repo: Path, clock, tmp_path: Path, rounds: int
) -> None:
    commit_on(repo, "feat/m", {"feat.txt": "f"}, message="feature")
    command = [sys.executable, "-c", MOVE_MAIN_ONCE, str(tmp_path), str(repo)]
    queue = make_queue(repo, clock, command, max_rebase_rounds=rounds)
    entry, _ = queue.add("feat/m")

    outcome = queue.process().outcomes[0]

    steps = [s["step"] for s in queue.get(entry.entry_id).get("steps")]
    if rounds == 1:
        assert outcome.reason == BASE_MOVED
        assert first_parent_subjects(repo)[0] == "hotfix"
        return
    assert outcome.status == COMPLETED
    assert steps == ["verify", "rebase", "test", "merge", "rebase", "test", "merge"]
    assert first_parent_subjects(repo)[:2] == ["feature", "hotfix"]
    assert rev(repo, "main") == queue.get(entry.entry_id).get("tested_commit")
    assert (repo / "feat.txt").exists() and (repo / "hotfix.txt").exists()


@pytest.mark.e2e
def test_edits_in_the_main_checkout_block_only_a_merge_of_the_same_files(repo: Path, clock) -> None:
    """The operator's work in progress is never overwritten, and never holds up merges of
    other files."""
    commit_on(repo, "feat/d", {"d.txt": "d"})
    commit_on(repo, "feat/a", {"a.txt": "the branch's a\n"})
    (repo / "b.txt").write_text("operator is editing b\n")
    (repo / "a.txt").write_text("operator is editing a\n")
    before_a = None
    queue = make_queue(repo, clock)
    queue.add("feat/d")
    entry_a, _ = queue.add("feat/a")
    merged = queue.process().outcomes[0]
    assert merged.status == COMPLETED and (repo / "d.txt").read_text() == "d"
    before_a = rev(repo, "main")
    refused = queue.process().outcomes[0]
    assert (refused.status, refused.reason) == (FAILED, MAIN_DIRTY)
    assert "a.txt" in (refused.error or "") and "b.txt" not in (refused.error or "")
    assert rev(repo, "main") == before_a and queue.get(entry_a.entry_id).status == FAILED
    assert (repo / "a.txt").read_text() == "operator is editing a\n"
    assert (repo / "b.txt").read_text() == "operator is editing b\n"


@pytest.mark.e2e
def test_branch_checked_out_by_its_agent_is_left_alone(repo: Path, clock, tmp_path) -> None:
    commit_on(repo, "feat/agent", {"agent.txt": "1"})
    agent_tree = tmp_path / "agent-wt"
    git(repo, "worktree", "add", "--quiet", str(agent_tree), "feat/agent")
    queue = make_queue(repo, clock)
    queue.add("feat/agent")
    outcome = queue.process().outcomes[0]
    assert outcome.status == COMPLETED
    assert branch_exists(repo, "feat/agent")
    assert git(agent_tree, "status", "--porcelain") == ""
    assert any("checked out" in note for note in outcome.notes)


@pytest.mark.e2e
def test_keep_branch_points_it_at_the_tested_commit(repo: Path, clock) -> None:
    commit_in_checkout(repo, {"m.txt": "m"}, "main moves")
    commit_on(repo, "feat/k", {"k.txt": "k"}, base="main~1")
    queue = make_queue(repo, clock, keep_branch=True)
    queue.add("feat/k")
    queue.process()
    assert rev(repo, "feat/k") == rev(repo, "main")


def test_a_harness_entry_is_processed_and_its_fields_kept(repo: Path, clock) -> None:
    commit_on(repo, "worktree-impl_auth", {"auth.txt": "auth"})
    harness_entry = {
        "entry_id": "mq-impl_auth-1772070240",
        "node_id": "impl_auth",
        "branch": "worktree-impl_auth",
        "repo_root": str(repo),
        "enqueued_at": "2026-02-26T01:44:00.123456+00:00",
        "status": "pending",
        "started_at": None,
        "completed_at": None,
        "error": None,
        "harness_only": {"keep": True},
    }
    path = repo / ".claude" / "state" / "merge-queue.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"entries": [harness_entry], "last_updated": "x", "extra": 7}))
    queue = make_queue(repo, clock)
    assert queue.read().entries[0].queued_at() is not None

    queue.add("feat/other")
    assert queue_file(repo)["entries"][0] == harness_entry
    assert queue_file(repo)["extra"] == 7
    queue.remove(queue.read().entries[1].entry_id)
    outcome = queue.process().outcomes[0]

    stored = queue_file(repo)["entries"][0]
    assert outcome.status == COMPLETED
    assert stored["harness_only"] == {"keep": True} and stored["node_id"] == "impl_auth"
    assert stored["status"] == "completed" and stored["completed_at"]
    assert signals_of(repo, "MERGE_COMPLETE")[0]["target"] == "guardian"


def test_nothing_to_process(repo: Path, clock) -> None:
    report = make_queue(repo, clock).process(run_all=True)
    assert report.outcomes == []


@pytest.mark.e2e
def test_paused_queue_refuses_to_process(repo: Path, clock) -> None:
    commit_on(repo, "feat/p", {"p.txt": "p"})
    queue = make_queue(repo, clock)
    queue.add("feat/p")
    queue.set_paused(True)
    with pytest.raises(RuneError, match="paused"):
        queue.process()
    queue.set_paused(False)
    assert queue.process().outcomes[0].status == COMPLETED


@pytest.mark.e2e
def test_no_test_command_refuses_before_claiming(repo: Path, clock) -> None:
    commit_on(repo, "feat/n", {"n.txt": "n"})
    queue = make_queue(repo, clock, test_command=[])
    queue.settings = type(queue.settings)(test_command=None)
    entry, _ = queue.add("feat/n")
    with pytest.raises(RuneError, match="no test command"):
        queue.process()
    assert queue.get(entry.entry_id).status == PENDING
    queue.remove(entry.entry_id)
    queue.add("feat/n", test_command="true")
    assert queue.process().outcomes[0].status == COMPLETED


@pytest.mark.e2e
def test_odd_identity_from_another_tool_never_blocks_a_merge(repo: Path, clock) -> None:
    commit_on(repo, "feat/odd", {"odd.txt": "o"})
    queue = make_queue(repo, clock)
    entry, _ = queue.add("feat/odd")
    queue.update_entry(entry.entry_id, {"identity_name": "orchestrator.auth/1"})

    report = queue.process()

    assert report.outcomes[0].status == COMPLETED
    assert signals_of(repo, "MERGE_COMPLETE")[0]["target"] == "guardian"
    assert report.recovered == []


@pytest.mark.e2e
def test_unrelated_edits_in_the_main_checkout_survive_the_fast_forward(repo: Path, clock) -> None:
    commit_on(repo, "feat/u", {"u.txt": "u"})
    edit = ["sh", "-c", f"echo operator >> {repo}/c.txt"]  # made while the tests run
    queue = make_queue(repo, clock, edit)
    queue.add("feat/u")
    assert queue.process().outcomes[0].status == COMPLETED
    assert (repo / "u.txt").read_text() == "u"
    assert (repo / "c.txt").read_text() == "c\noperator\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == "M c.txt"


@pytest.mark.e2e
def test_timeout_holds_after_the_tests_close_their_output(repo: Path, clock) -> None:
    commit_on(repo, "feat/quiet", {"q.txt": "q"})
    before = rev(repo, "main")
    command = ["sh", "-c", "echo hi; exec >/dev/null 2>&1; sleep 25"]
    queue = make_queue(repo, clock, command, test_timeout=1)
    queue.add("feat/quiet")
    started = time.monotonic()
    outcome = queue.process().outcomes[0]
    assert outcome.reason == TIMEOUT
    assert time.monotonic() - started < 15
    assert rev(repo, "main") == before
    assert outcome.output_tail == ["hi"]


@pytest.mark.e2e
def test_passing_tests_that_leave_a_background_process_pass(repo: Path, clock, tmp_path) -> None:
    commit_on(repo, "feat/bg", {"bg.txt": "bg"})
    marker = tmp_path / "leftover-pid"
    command = ["sh", "-c", f"sleep 30 & echo $! > {marker}; echo ok; exit 0"]
    queue = make_queue(repo, clock, command, test_timeout=20)
    queue.add("feat/bg")
    started = time.monotonic()
    outcome = queue.process().outcomes[0]
    assert outcome.status == COMPLETED, outcome
    assert time.monotonic() - started < 15
    leftover = int(marker.read_text())
    wait_until(lambda: not pid_alive(leftover), timeout=5, what="the leftover sleep to be stopped")


def test_rebase_works_without_a_configured_git_identity(
    repo: Path, clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_on(repo, "feat/anon", {"anon.txt": "a"})
    commit_in_checkout(repo, {"main.txt": "m"}, "main moves")  # so the rebase makes commits
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("GIT_COMMITTER_EMAIL", raising=False)
    monkeypatch.delenv("EMAIL", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.useConfigOnly", "true")  # no guessing from the host name either
    queue = make_queue(repo, clock)
    queue.add("feat/anon")

    outcome = queue.process().outcomes[0]

    assert outcome.status == COMPLETED, outcome
    assert first_parent_subjects(repo)[:2] == ["feat/anon: edit", "main moves"]
    assert "user.name" not in git(repo, "config", "--local", "--list")  # not configured for them


def test_conflicts_of_every_commit_are_reported_not_only_the_first(repo: Path, clock) -> None:
    commit_on(repo, "feat/two", {"a.txt": "two a\n"}, message="commit 1")
    commit_on(repo, "feat/two", {"c.txt": "two c\n"}, base="feat/two", message="commit 2")
    commit_in_checkout(repo, {"a.txt": "main a\n", "c.txt": "main c\n"}, "main edits")
    queue = make_queue(repo, clock)
    entry, _ = queue.add("feat/two", identity="worker-two")

    outcome = queue.process().outcomes[0]

    assert (outcome.reason, outcome.conflict_files) == (CONFLICT, ["a.txt", "c.txt"])
    assert queue.get(entry.entry_id).conflict_files == ["a.txt", "c.txt"]
    (conflict,) = signals_of(repo, "MERGE_CONFLICT")
    assert conflict["payload"]["conflict_files"] == ["a.txt", "c.txt"]


@pytest.mark.e2e
def test_untracked_file_in_the_main_checkout_is_refused_before_main_moves(
    repo: Path, clock
) -> None:
    commit_on(repo, "feat/new", {"new.txt": "from the branch\n", "d.txt": "d"})
    (repo / "new.txt").write_text("the operator's own\n")
    before = rev(repo, "main")
    queue = make_queue(repo, clock)
    entry, _ = queue.add("feat/new", identity="worker-new")

    outcome = queue.process().outcomes[0]

    assert (outcome.status, outcome.reason) == (FAILED, MAIN_DIRTY)
    assert "new.txt" in (outcome.error or "") and "d.txt" not in (outcome.error or "")
    assert rev(repo, "main") == before
    assert git(repo, "status", "--porcelain") == "?? new.txt"  # checkout and main agree
    assert (repo / "new.txt").read_text() == "the operator's own\n"
    assert branch_exists(repo, "feat/new")
    assert signals_of(repo, "MERGE_FAILED")[0]["payload"]["reason"] == MAIN_DIRTY
    (repo / "new.txt").unlink()
    queue.retry(entry.entry_id)
    assert queue.process().outcomes[0].status == COMPLETED
    assert (repo / "new.txt").read_text() == "from the branch\n"


def test_a_file_touched_but_unchanged_in_the_main_checkout_does_not_block(
    repo: Path, clock
) -> None:
    commit_on(repo, "feat/a2", {"a.txt": "the branch's a\n"})
    os.utime(repo / "a.txt", (1, 1))  # same content, new stat: the index is out of date
    queue = make_queue(repo, clock)
    queue.add("feat/a2")
    assert queue.process().outcomes[0].status == COMPLETED
    assert (repo / "a.txt").read_text() == "the branch's a\n"
