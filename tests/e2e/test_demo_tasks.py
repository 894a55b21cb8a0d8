"""The demo's task, as a newcomer meets it: the demo fleet starts one task with three attempts
through ``runeconsole new``'s path, each a scripted agent in tmux that works, commits in its
own worktree and goes idle; attempt 1's work passes the demo's tests, attempt 2's fails them,
attempt 3 changes the most. Compare, test, pick and the merge queue, run as the CLI: attempt 1
lands and the worktrees of all three are gone, as are those of the fleet's own merges. And
the demo's test command and its scripted Claude Code, each on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runeconsole.adapters import agent_worktrees
from runeconsole.adapters.git import run_git
from runeconsole.demo.attempt_work import TASK_NAME, deliver, message, module_name
from runeconsole.demo.fake_claude import PROGRAM
from runeconsole.demo.fleet import TASK_ATTEMPTS
from runeconsole.demo.project import make_project
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from tests.support.cli import cli_env
from tests.support.polling import wait_until

MODULE = module_name(TASK_NAME)
TEXT: dict[str, Any] = {"capture_output": True, "text": True, "timeout": 60, "check": False}


@pytest.fixture
def demo(tmp_path: Path, tmux_socket: str) -> Iterator[Path]:
    """The demo's project with its fleet running (as ``runeconsole demo --fleet-only`` runs
    it, on the test's private tmux server); the fleet is stopped at the end."""
    root = make_project(tmp_path / "demo", tmux_socket)
    (root / "tmp").mkdir(exist_ok=True)
    command = [sys.executable, "-m", "runeconsole.demo.fleet", "--root", str(root)]
    command += ["--duration", "600", "--parent", str(os.getpid())]
    with open(root / "tmp" / "demo-fleet.log", "ab") as log:
        fleet = subprocess.Popen(
            command,
            env=cli_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    try:
        yield root
    finally:
        fleet.terminate()
        try:
            fleet.wait(timeout=20)
        except subprocess.TimeoutExpired:
            fleet.kill()
            fleet.wait(timeout=5)


def cli_json(run_cli: Any, root: Path, *args: str, expect: int | None = 0) -> Any:
    """``runeconsole ARGS --json`` on the demo; exit ``expect`` (``None``: any)."""
    done = run_cli(*args, "--json", "--root", str(root), timeout=120)
    assert expect is None or done.returncode == expect, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def subject(root: Path, branch: str) -> str:
    return run_git(["log", "-1", "--format=%s", branch], root).stdout.strip()


def settled(root: Path) -> bool:
    """Every attempt started, its work committed on its branch, its agent idle."""
    dispatch = Dispatch(Project(root, strict=False))
    if not dispatch.store.exists(TASK_NAME):
        return False
    attempts = dispatch.task(TASK_NAME).attempts
    registry = dispatch.supervisor.registry
    return len(attempts) == TASK_ATTEMPTS and all(
        attempt.state == "started"
        and subject(root, attempt.branch) == message(attempt.number, MODULE)
        and registry.get(attempt.agent).get("activity") == "idle"
        for attempt in attempts
    )


def test_the_demo_task_ends_three_ways_and_its_pick_lands(demo: Path, run_cli: Any) -> None:
    root = demo
    wait_until(lambda: settled(root), 120, 0.5, what="three attempts committed and idle")
    worktrees = root / ".claude" / "worktrees"

    task = cli_json(run_cli, root, "task", "show", TASK_NAME)
    attempts = task["attempts"]
    assert [a["n"] for a in attempts] == [1, 2, 3]
    assert [a["worktree"] for a in attempts] == [
        str(worktrees / f"{TASK_NAME}-{n}") for n in (1, 2, 3)
    ]
    listed = {row["path"]: row for row in cli_json(run_cli, root, "worktrees")}
    for attempt in attempts:
        row = listed[attempt["worktree"]]
        assert (row["branch"], row["agent"], row["task"]) == (
            f"agent/worker-{TASK_NAME}-{attempt['n']}",
            attempt["agent"],
            TASK_NAME,
        )
        assert row["dirty"] == [], row  # everything committed: removable once it ends
        assert subject(root, attempt["branch"]) == message(attempt["n"], MODULE)

    compared = {v["n"]: v for v in cli_json(run_cli, root, "task", "compare", TASK_NAME)}
    assert [compared[n]["commits"] for n in (1, 2, 3)] == [1, 1, 1]
    assert len(compared[3]["files"]) > len(compared[1]["files"]) == len(compared[2]["files"])
    assert compared[3]["added"] > max(compared[1]["added"], compared[2]["added"])

    tested = cli_json(run_cli, root, "task", "test", TASK_NAME, expect=1)
    assert [a["test"]["ok"] for a in tested] == [True, False, True]
    output = Path(tested[1]["test"]["output"]).read_text()
    assert "1 failed" in output and "test_a_wait_between_each_two_tries" in output

    picked = cli_json(run_cli, root, "task", "pick", TASK_NAME, "1", "--discard-commits")
    removed = {r["path"] for r in picked["removals"] if r["removed"]}
    assert removed == {attempts[1]["worktree"], attempts[2]["worktree"]}
    entry = picked["approval"]["entry"]["entry_id"]

    # Whatever else the fleet queued meanwhile lands or fails beside it.
    processed = cli_json(run_cli, root, "merge-queue", "process", "--all", expect=None)
    merged = {
        o["entry_id"]: o["branch"] for o in processed["outcomes"] if o["status"] == "completed"
    }
    assert entry in merged, processed
    assert f"src/{MODULE}.py" in run_git(["ls-tree", "-r", "--name-only", "main"], root).stdout
    gone = {r["path"] for r in processed["worktrees"] if r["removed"]}
    assert attempts[0]["worktree"] in gone, processed["worktrees"]

    left = {row["path"] for row in cli_json(run_cli, root, "worktrees")}
    assert not left & {a["worktree"] for a in attempts}
    assert not [p for p in worktrees.iterdir() if p.name.startswith(TASK_NAME)]
    branches = run_git(["branch", "--list", f"agent/worker-{TASK_NAME}-*"], root).stdout
    assert branches.strip() == ""
    assert cli_json(run_cli, root, "task", "show", TASK_NAME)["state"] == "landed"
    # The fleet's own agents' merges that landed went the same way: worktree and branch.
    for branch in merged.values():
        name = branch.removeprefix("agent/").split("-", 1)[1]
        assert not (worktrees / name).exists(), processed
        assert branch not in run_git(["branch", "--list", branch], root).stdout, processed


def test_the_demo_test_command_passes_attempts_1_and_3_and_fails_2(tmp_path: Path) -> None:
    root = make_project(tmp_path / "demo", "rc-unused")
    command = MergeQueue(Project(root)).settings.test_command
    assert command is not None
    env = {k: v for k, v in cli_env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    results = []
    for number in (1, 2, 3):
        worktree = root / ".claude" / "worktrees" / f"try-{number}"
        agent_worktrees.add_worktree(root, worktree, f"agent/worker-try-{number}", "main")
        deliver(worktree, number, MODULE)
        run = subprocess.run(command, cwd=worktree, env=env, **TEXT)
        results.append((run.returncode, run.stdout.splitlines()[-1]))
        # Nothing left behind by the run (no __pycache__): the worktree stays removable.
        assert agent_worktrees.dirty_files(worktree) == [], number
    assert [code for code, _ in results] == [0, 1, 0]
    assert results[1][1].startswith("1 failed, 2 passed")
    assert results[2][1].startswith("6 passed")


def test_the_demo_claude_answers_the_console_and_refuses_background(tmp_path: Path) -> None:
    root = make_project(tmp_path / "demo", "rc-unused")
    program = str(root / PROGRAM)
    listed = subprocess.run([program, "agents", "--json", "--all"], env=cli_env(), **TEXT)
    assert (listed.returncode, listed.stdout.strip()) == (0, "[]")
    background = subprocess.run([program, "--bg", "a task"], env=cli_env(), **TEXT)
    assert background.returncode == 1 and "tmux only" in background.stderr
