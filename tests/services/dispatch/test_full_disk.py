"""``new`` on a full disk (a small tmpfs of its own, ``tests/support/disk.py``): wherever the
disk runs out (the task file, the journal, git's refs, the worktree's files) the message
says so, nothing half-made is left (no branch, no worktree, no directory, no temp file, the
task not ``creating``), and once space returns a new task is made."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runeconsole.adapters import git
from tests.services.dispatch.helpers import (
    branches,
    project_excluding_state,
    task_file,
    worktree_paths,
)
from tests.support.cli import CliResult
from tests.support.disk import SmallDisk, small_disk

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(tmp_path / "disk") as mounted:
        yield mounted


# Pages left free: none (the task file), one (the journal's record), then git's refs, its
# worktree's admin files, and the checkout itself.
@pytest.mark.parametrize("pages", [0, 1, 3, 6, 11])
def test_new_on_a_full_disk_says_so_and_leaves_nothing_half_made(
    disk: SmallDisk, stand_in: Path, tmux_socket: str, cli: Callable[..., CliResult], pages: int
) -> None:
    root = disk.mountpoint / "project"
    git.init_repo(root)
    project_excluding_state(root)
    args = ("--root", str(root), "--tmux-socket", tmux_socket)
    disk.fill(leave_pages=pages)

    refused = cli("new", "--task", "Port the lexer", "--name", "lexer", *args)

    assert refused.code == 1
    assert "the disk is full" in refused.err or "No space left on device" in refused.err, (
        refused.err
    )
    assert branches(root) == {"main"}
    assert worktree_paths(root) == {root}
    assert not (root / ".claude" / "worktrees" / "lexer").exists()
    assert not (root / ".git" / "worktrees" / "lexer").exists()
    assert disk.temp_files() == []

    disk.free()
    made = cli("new", "--task", "Port the lexer", *args)

    assert made.code == 0, made.err
    if (root / ".claude" / "state" / "tasks" / "lexer.json").exists():  # cut short: settled
        assert task_file(root, "lexer")["state"] == "dropped"
    assert len(worktree_paths(root)) == 2
