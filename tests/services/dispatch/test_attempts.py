"""A task's attempts side by side and ended: ``compare`` after commits in the worktrees,
``test`` running ``merge_queue.test_command`` in each, ``pick`` into the merge queue with
the other attempts stopped and removed, ``drop``; never losing an agent's files, and its
lone commits only with consent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.errors import RuneError
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.dispatch.task_store import Task
from tests.services.dispatch.helpers import (
    branches,
    commit_in,
    identity,
    task_file,
    worktree_paths,
    write_talisman,
)
from tests.support.merge_queue import git, queue_file


def worktree(task: Task, number: int) -> Path:
    found = task.attempt(number).worktree
    assert found is not None
    return found


def running(tmux_socket: str, agent: str) -> bool:
    return Tmux(tmux_socket).has_session(f"rune-{agent}")


def test_compare_shows_each_attempts_lines_added_and_removed_and_its_files(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    task = dispatch().new(NewTask("Speed up parsing", name="speed", count=3))
    commit_in(worktree(task, 1), {"one.txt": "1\n2\n"}, "a new file")
    commit_in(worktree(task, 2), {"a.txt": "A\n"}, "a.txt rewritten")
    commit_in(worktree(task, 3), {"x.txt": "x\n", "y.txt": "y\n", "b.txt": "b\nmore\n"}, "three")
    commit_in(worktree(task, 3), {"y.txt": "y\nz\n"}, "and more")

    views = dispatch().compare("speed")

    seen = [(v.attempt.number, v.added, v.removed, v.files, v.commits) for v in views]
    assert seen == [
        (1, 2, 0, ["one.txt"], 1),
        (2, 1, 1, ["a.txt"], 1),
        (3, 4, 0, ["b.txt", "x.txt", "y.txt"], 2),
    ]
    assert all(v.error is None and v.seconds is not None for v in views)


def test_task_test_runs_the_test_command_in_each_worktree_and_keeps_pass_fail_and_output(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    write_talisman(root, merge_queue="test_command: sh -c 'echo in $PWD; test -f passed.txt'")
    task = dispatch().new(NewTask("Make the tests pass", name="green", count=2))
    commit_in(worktree(task, 1), {"passed.txt": "yes\n"}, "the fix")

    attempts = dispatch().test("green")

    first, second = (a.get("test") for a in attempts)
    assert (first["ok"], first["exit"]) == (True, 0)
    assert (second["ok"], second["exit"]) == (False, 1)
    assert "failed with exit 1" in second["message"]
    for number, result in ((1, first), (2, second)):
        log = root / ".claude" / "state" / "tasks" / "green" / f"attempt-{number}-test.log"
        assert result["output"] == str(log)
        assert log.read_text() == f"in {worktree(task, number)}\n"
    assert first["head"] == git(worktree(task, 1), "rev-parse", "HEAD")
    assert task_file(root, "green")["attempts"][1]["test"]["ok"] is False

    commit_in(worktree(task, 2), {"passed.txt": "now\n"}, "fixed too")
    [only] = [a for a in dispatch().test("green", 2) if a.number == 2]
    assert only.get("test")["ok"] is True


def test_task_test_without_a_test_command_says_where_to_set_it(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    dispatch().new(NewTask("Make the tests pass", name="green"))
    with pytest.raises(RuneError, match=r"set runeconsole\.merge_queue\.test_command"):
        dispatch().test("green")


def test_a_pick_queues_its_branch_stops_the_others_and_removes_them_keeping_uncommitted_files(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str
) -> None:
    task = dispatch().new(NewTask("Add retries", name="retry", count=3))
    commit_in(worktree(task, 1), {"retry.txt": "three times\n"}, "retries")
    (worktree(task, 3) / "notes.txt").write_text("half an idea\n")

    ending = dispatch().pick("retry", 1)

    [entry] = queue_file(root)["entries"]
    assert (entry["branch"], entry["status"]) == ("agent/worker-retry-1", "pending")
    assert (
        ending.approval is not None and ending.approval["entry"]["entry_id"] == (entry["entry_id"])
    )
    assert running(tmux_socket, "worker-retry-1")
    assert not running(tmux_socket, "worker-retry-2")
    assert not running(tmux_socket, "worker-retry-3")
    assert identity(root, "worker-retry-2")["status"] != "active"
    assert worktree_paths(root) == {root, worktree(task, 1), worktree(task, 3)}
    assert not worktree(task, 2).exists()
    assert "agent/worker-retry-2" not in branches(root)
    assert "agent/worker-retry-3" in branches(root)
    kept = ending.removals[1]
    assert (kept.removed, kept.files) == (False, ["notes.txt"])
    assert "uncommitted or untracked file(s): notes.txt" in (kept.reason or "")
    stored = task_file(root, "retry")
    assert (stored["state"], stored["pick"]) == ("picked", 1)
    assert [a["state"] for a in stored["attempts"]] == ["picked", "removed", "kept"]
    assert stored["attempts"][2]["kept_files"] == ["notes.txt"]

    with pytest.raises(RuneError, match=f"merge-queue remove {entry['entry_id']}"):
        dispatch().drop("retry")
    with pytest.raises(RuneError, match="already picked attempt 1"):
        dispatch().pick("retry", 3)


def test_a_pick_that_would_lose_another_attempts_lone_commits_needs_consent(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str
) -> None:
    task = dispatch().new(NewTask("Add retries", name="retry", count=3))
    for number in (1, 2, 3):
        commit_in(worktree(task, number), {f"r{number}.txt": "r\n"}, f"retries, take {number}")
    git(root, "branch", "kept-elsewhere", "agent/worker-retry-3")  # on another branch too

    with pytest.raises(RuneError) as refused:
        dispatch().pick("retry", 1)

    said = refused.value.message
    assert "worker-retry-2: 1 (" in said and "retries, take 2" in said
    assert "worker-retry-3" not in said
    assert "--discard-commits" in said
    assert not (root / ".claude" / "state" / "merge-queue.json").exists()
    assert task_file(root, "retry")["state"] == "working"
    assert running(tmux_socket, "worker-retry-2")
    assert worktree(task, 2).is_dir()

    ending = dispatch().pick("retry", 1, discard_commits=True)

    assert [r.removed for r in ending.removals] == [True, True]
    assert worktree_paths(root) == {root, worktree(task, 1)}
    assert {"agent/worker-retry-2", "agent/worker-retry-3"}.isdisjoint(branches(root))
    assert "kept-elsewhere" in branches(root)


def test_commits_let_go_at_a_pick_go_with_the_worktree_once_its_files_are_gone_but_no_later_ones(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    task = dispatch().new(NewTask("Add retries", name="retry", count=3))
    for number in (1, 2, 3):
        commit_in(worktree(task, number), {f"r{number}.txt": "r\n"}, f"retries, take {number}")
    (worktree(task, 2) / "notes.txt").write_text("half an idea\n")
    (worktree(task, 3) / "notes.txt").write_text("another\n")
    dispatch().pick("retry", 1, discard_commits=True)
    assert worktree(task, 2).is_dir() and worktree(task, 3).is_dir()  # kept for their files

    (worktree(task, 2) / "notes.txt").unlink()
    (worktree(task, 3) / "notes.txt").unlink()
    commit_in(worktree(task, 3), {"later.txt": "x\n"}, "a commit nobody was shown")
    removals = {r.path: r for r in dispatch().clean()}

    assert removals[str(worktree(task, 2))].removed
    assert "agent/worker-retry-2" not in branches(root)
    later = removals[str(worktree(task, 3))]
    assert not later.removed and "2 commit(s) on no other branch" in (later.reason or "")
    assert worktree(task, 3).is_dir()


def test_drop_stops_every_attempt_and_removes_the_files_it_placed_but_not_the_agents(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str
) -> None:
    (root / ".env").write_text("SECRET=1\n")
    write_talisman(root, 'copy: [".env"]')
    task = dispatch().new(NewTask("Try another parser", name="parser", count=2))
    (worktree(task, 2) / ".env").write_text("SECRET=changed by the agent\n")

    ending = dispatch().drop("parser")

    assert ending.task.state == "dropped"
    assert not running(tmux_socket, "worker-parser-1")
    assert not running(tmux_socket, "worker-parser-2")
    first, second = ending.removals
    assert first.removed and first.branch_deleted
    assert (second.removed, second.files) == (False, [".env"])
    assert worktree_paths(root) == {root, worktree(task, 2)}
    assert branches(root) == {"main", "agent/worker-parser-2"}
    assert [a["state"] for a in task_file(root, "parser")["attempts"]] == ["removed", "kept"]


def test_dropping_a_task_whose_attempt_has_lone_commits_needs_consent(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    task = dispatch().new(NewTask("Try another parser", name="parser"))
    commit_in(worktree(task, 1), {"p.txt": "p\n"}, "a parser of sorts")

    with pytest.raises(RuneError, match="a parser of sorts"):
        dispatch().drop("parser")
    assert task_file(root, "parser")["state"] == "working"

    assert dispatch().drop("parser", discard_commits=True).removals[0].removed
    assert branches(root) == {"main"}


def test_picking_an_attempt_with_no_commits_is_refused_and_changes_nothing(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str
) -> None:
    task = dispatch().new(NewTask("Add retries", name="retry", count=2))
    (worktree(task, 1) / "retry.txt").write_text("not committed\n")

    with pytest.raises(RuneError, match="has no commits ahead of main"):
        dispatch().pick("retry", 1)

    assert task_file(root, "retry")["state"] == "working"
    assert running(tmux_socket, "worker-retry-1") and running(tmux_socket, "worker-retry-2")
    assert worktree_paths(root) == {root, worktree(task, 1), worktree(task, 2)}
    assert not (root / ".claude" / "state" / "merge-queue.json").exists()
