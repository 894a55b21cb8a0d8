"""Every worktree's state and its removal: ``clean`` (and its dry run) of the dropped ones,
locks (a person's kept, an ended Claude Code session's lifted), a worktree whose directory
was deleted, the main worktree, and worktrees nobody made through ``new``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.dispatch.worktree_list import WorktreeRow
from tests.services.dispatch.helpers import branches, dead_pid, task_file, worktree_paths
from tests.support.merge_queue import git


def row_of(dispatch: Dispatch, path: Path) -> WorktreeRow:
    [found] = [row for row in dispatch.worktrees() if row.path == path]
    return found


def made(dispatch: Callable[[], Dispatch], name: str) -> Path:
    task = dispatch().new(NewTask(f"Work on {name}", name=name))
    path = task.attempts[0].worktree
    assert path is not None
    return path


def test_clean_removes_a_dropped_worktree_once_nothing_of_the_agent_is_left_in_it(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    path = made(dispatch, "late")
    (path / "notes.txt").write_text("unsaved thoughts\n")
    [kept] = dispatch().drop("late").removals
    assert not kept.removed and kept.files == ["notes.txt"]
    assert row_of(dispatch(), path).state == "dropped"
    (path / "notes.txt").unlink()

    [dry] = dispatch().clean(dry_run=True)

    assert (dry.removed, dry.dry_run, dry.branch_deleted) == (True, True, True)
    assert dry.describe() == f"would remove {path} and branch agent/worker-late"
    assert path in worktree_paths(root) and "agent/worker-late" in branches(root)

    [done] = dispatch().clean()

    assert done.describe() == f"removed {path} and branch agent/worker-late"
    assert worktree_paths(root) == {root} and branches(root) == {"main"}
    [attempt] = task_file(root, "late")["attempts"]
    assert attempt["state"] == "removed" and attempt["worktree_removed_at"]
    assert dispatch().clean() == []


def test_clean_leaves_working_and_hand_made_worktrees_alone(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    working = made(dispatch, "busy")
    hand = root.parent / "by-hand"
    git(root, "worktree", "add", "--quiet", "-b", "by-hand", str(hand))

    assert dispatch().clean() == []

    states = {row.path: row.state for row in dispatch().worktrees()}
    assert states == {root: "main", working: "working", hand: "orphan"}
    assert worktree_paths(root) == {root, working, hand}


def test_a_locked_worktree_is_reported_and_never_forced(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    path = made(dispatch, "held")
    git(root, "worktree", "lock", "--reason", "kept for a look", str(path))

    [dropped] = dispatch().drop("held").removals

    assert not dropped.removed
    assert dropped.reason == "locked (kept for a look); `git worktree unlock` first"
    [cleaned] = dispatch().clean()
    assert cleaned.reason == dropped.reason
    assert path in worktree_paths(root) and "agent/worker-held" in branches(root)
    assert row_of(dispatch(), path).locked == "kept for a look"


def test_a_claude_session_lock_whose_process_ended_is_lifted_and_the_worktree_removed(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    path = made(dispatch, "stale")
    reason = f"claude session stale (pid {dead_pid()} start 1234)"
    git(root, "worktree", "lock", "--reason", reason, str(path))
    assert row_of(dispatch(), path).stale_lock

    [removal] = dispatch().drop("stale").removals

    assert removal.removed, removal.reason
    assert worktree_paths(root) == {root} and branches(root) == {"main"}


def test_a_claude_session_lock_whose_process_runs_keeps_the_worktree(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    path = made(dispatch, "live")
    reason = f"claude session live (pid {os.getpid()} start 1234)"
    git(root, "worktree", "lock", "--reason", reason, str(path))

    [removal] = dispatch().drop("live").removals

    assert not removal.removed and removal.reason is not None
    assert removal.reason.startswith(f"locked ({reason})")
    assert path in worktree_paths(root)


def test_a_worktree_whose_directory_was_deleted_is_reported_missing_not_removed(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    path = made(dispatch, "gone")
    shutil.rmtree(path)

    row = row_of(dispatch(), path)
    assert row.state == "missing"
    assert row.note is not None and row.note.startswith("its directory is gone")

    [removal] = dispatch().drop("gone").removals

    assert not removal.removed
    assert removal.reason is not None and "`git worktree prune` forgets it" in removal.reason
    assert path in worktree_paths(root)  # git still lists it: prune is the operator's call
    assert dispatch().clean() == []


def test_the_main_worktree_is_never_removed(root: Path, dispatch: Callable[[], Dispatch]) -> None:
    made_one = dispatch()
    main = row_of(made_one, root)
    assert main.state == "main"

    removal = made_one.remover.remove(main, discard_commits=True, stop_agent=True)

    assert not removal.removed
    assert removal.reason == "the repository's main worktree is never removed"
    assert worktree_paths(root) == {root}


@pytest.mark.parametrize("size", [True, False])
def test_the_list_says_each_worktrees_dirty_files_and_size_when_asked(
    root: Path, dispatch: Callable[[], Dispatch], size: bool
) -> None:
    path = made(dispatch, "sized")
    (path / "new.txt").write_text("x" * 1000)
    (path / "a.txt").write_text("changed\n")

    row = (
        row_of(dispatch(), path)
        if size
        else next(r for r in dispatch().worktrees(sizes=False) if r.path == path)
    )

    assert row.dirty == ["a.txt", "new.txt"]
    assert (row.size is not None and row.size >= 1000) if size else row.size is None
    assert (row.agent, row.task, row.attempt) == ("worker-sized", "sized", 1)


def test_a_worktree_path_made_again_belongs_to_the_new_task_not_the_old_dropped_one(
    root: Path, dispatch: Callable[[], Dispatch]
) -> None:
    dispatch().new(NewTask("Work on it", name="x", count=2))
    dispatch().drop("x")
    for record in (root / ".claude" / "state" / "identities").iterdir():
        record.unlink()  # the ended agents pruned, the dropped task still kept
    assert dispatch().suggest("x") not in ("x-1", "x-2")

    path = made(dispatch, "x-2")

    row = row_of(dispatch(), path)
    assert (row.task, row.state) == ("x-2", "working")
    assert dispatch().clean(dry_run=True) == []


def test_dropping_a_task_again_never_touches_a_worktree_made_since_at_its_old_path(
    root: Path, dispatch: Callable[[], Dispatch], tmux_socket: str
) -> None:
    dispatch().new(NewTask("Work on it", name="x", count=2))
    dispatch().drop("x")
    path = made(dispatch, "x-2")
    dispatch().supervisor.kill("worker-x-2")  # its agent ended; the worktree is still its

    dispatch().drop("x")

    assert path in worktree_paths(root) and "agent/worker-x-2" in branches(root)
    assert row_of(dispatch(), path).task == "x-2"
