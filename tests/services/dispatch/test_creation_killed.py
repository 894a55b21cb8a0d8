"""A real ``runeconsole new`` killed with SIGKILL while it makes an attempt: the next command
(``task list``, which recovers first) leaves nothing half-made (no worktree, no branch, the
task not stuck in ``creating``) and the journal still says what was cut short."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.core.crash_points import PAUSE_AT_ENV, PAUSE_DIR_ENV
from tests.services.dispatch.helpers import branches, status, task_file, worktree_paths
from tests.services.dispatch.helpers import write_talisman as talisman
from tests.support.cli import cli_env
from tests.support.polling import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def killed_at(root: Path, tmp_path: Path, point: str, *args: str) -> None:
    """``runeconsole new ARGS`` stopped at ``point`` and killed there with SIGKILL."""
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    env = {**cli_env(), PAUSE_AT_ENV: point, PAUSE_DIR_ENV: str(pauses)}
    process = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "new", *args, "--root", str(root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until((pauses / f"{point}.paused").exists, what=f"new to stop at {point}")
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@pytest.mark.parametrize("point", ["new-worktree-made", "new-before-start"])
def test_a_creation_killed_mid_way_is_undone_by_the_next_command_and_journaled(
    root: Path, stand_in: Path, tmp_path: Path, cli: Callable, point: str
) -> None:
    (root / ".env").write_text("SECRET=1\n")
    talisman(root, 'copy: [".env"]\nsetup_command: "true"')
    before = branches(root)
    killed_at(root, tmp_path, point, "--task", "Port the lexer", "--name", "lexer", "--count", "2")
    made = root / ".claude" / "worktrees" / "lexer-1"
    assert made in worktree_paths(root)  # the kill left it half-made
    assert task_file(root, "lexer")["state"] == "creating"

    listed = cli("task", "list", "--json", "--root", str(root))

    assert listed.code == 0, listed.err
    assert "a creation cut short: worker-lexer-1: interrupted while being made; undone" in (
        listed.err
    )
    [task] = listed.json()
    assert task["task_id"] == "lexer" and task["state"] == "dropped"
    assert [a["state"] for a in task["attempts"]] == ["removed", "removed"]
    assert worktree_paths(root) == {root}
    assert not made.exists()
    assert branches(root) == before
    assert status(root) == ["?? .env"]
    interrupted = cli("interrupted", "--json", "--root", str(root))
    [action] = interrupted.json()
    assert action["kind"] == "new"
    assert action["what"] == "new agent worker-lexer-1 (task lexer)"
    again = cli("task", "list", "--json", "--root", str(root))
    assert again.err == "" and again.json()[0]["state"] == "dropped"


def test_a_creation_whose_process_still_runs_is_left_alone(
    root: Path, stand_in: Path, tmp_path: Path, cli: Callable
) -> None:
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    env = {**cli_env(), PAUSE_AT_ENV: "new-worktree-made", PAUSE_DIR_ENV: str(pauses)}
    process = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "new", "--task", "Port the lexer", "--name",
         "lexer", "--background", "--root", str(root)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until((pauses / "new-worktree-made.paused").exists, what="new to pause")

        listed = cli("task", "list", "--json", "--root", str(root))

        assert listed.err == ""
        assert listed.json()[0]["state"] == "creating"
        assert root / ".claude" / "worktrees" / "lexer" in worktree_paths(root)
    finally:
        process.kill()
        process.wait(timeout=10)
    assert json.loads(cli("task", "list", "--json", "--root", str(root)).out)[0]["state"] == (
        "dropped"
    )


def test_an_attempt_refused_mid_way_leaves_the_task_settled_not_creating(
    root: Path, stand_in: Path, tmp_path: Path, tmux_socket: str
) -> None:
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    env = {**cli_env(), PAUSE_AT_ENV: "new-worktree-made", PAUSE_DIR_ENV: str(pauses)}
    process = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "new", "--task", "Port the lexer", "--name",
         "lexer", "--count", "3", "--root", str(root), "--tmux-socket", tmux_socket],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_until((pauses / "new-worktree-made.paused").exists, what="new to pause")
    (root / ".claude" / "worktrees" / "lexer-2").mkdir()  # taken while the first was made
    (pauses / "new-worktree-made.go").touch()
    _, err = process.communicate(timeout=60)

    assert process.returncode == 1
    assert "already exists" in err and "nothing of it was kept" in err
    task = task_file(root, "lexer")  # as the failed command left it, before any recovery
    assert task["state"] == "working"
    assert [a["state"] for a in task["attempts"]] == ["started", "failed", "removed"]
    assert worktree_paths(root) == {root, root / ".claude" / "worktrees" / "lexer-1"}
    assert branches(root) == {"main", "agent/worker-lexer-1"}
