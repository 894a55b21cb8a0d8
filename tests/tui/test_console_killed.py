"""The console killed with -9 in the middle of an operator's action, at the named pause
points (``core/crash_points.py``): the real console in a private tmux server, driven by its keys.
After the kill the files are consistent (each written whole or not at all), and the next
console says what did not complete and what of it stands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.crash_points import PAUSE_AT_ENV, PAUSE_DIR_ENV
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.pids import pid_alive
from runeconsole.services.claude.permissions import files
from runeconsole.services.journal import Journal
from runeconsole.services.merge_queue.edits import QueueEdits
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import AskRequest, Questions
from runeconsole.tui.console.app import create_app
from tests.support.cli import cli_env
from tests.support.old_records import decided_requests
from tests.support.polling import until, wait_until
from tests.support.suspended import task_file, write_context

pytestmark = pytest.mark.timeout(240)
TEAM = "team-a"


Key = tuple[str, str]  # a key, and what the screen shows before it is pressed


@pytest.fixture
def waiting_hook() -> Iterator[int]:
    """A live process standing for the hook that waits for a permission decision."""
    process = subprocess.Popen(["sleep", "600"])
    yield process.pid
    process.kill()
    process.wait(timeout=10)


def open_request(root: Path, hook_pid: int) -> str:
    [request] = decided_requests(root, 1, newest=datetime.now(UTC), days=0.001)
    path = files.request_path(ProjectPaths(root), request)
    files.decision_path(path).unlink()
    body = json.loads(path.read_text())
    body["hook_pid"] = hook_pid
    path.write_text(json.dumps(body))
    return request


def screen(tmux: Tmux) -> str:
    return tmux.capture("console")


def kill_at(root: Path, socket: str, tmp_path: Path, point: str, keys: list[Key]) -> None:
    """Start the console in tmux, press ``keys`` once it is painted (each once the screen
    shows what it waits for), wait for it to stop at ``point`` and kill it with -9."""
    tmux = Tmux(socket)
    pause_dir = tmp_path / "pause"
    pause_dir.mkdir()
    environ = {
        "PYTHONPATH": cli_env()["PYTHONPATH"],
        "TERM": "xterm-256color",
        PAUSE_AT_ENV: point,
        PAUSE_DIR_ENV: str(pause_dir),
        "CLAUDE_CONFIG_DIR": os.environ["CLAUDE_CONFIG_DIR"],
    }
    command = [sys.executable, "-m", "runeconsole", "--root", str(root), "--no-monitor"]
    pane = tmux.new_session("console", command, cwd=root, env=environ)
    wait_until(lambda: "Quit" in screen(tmux), timeout=60, what="the console's first paint")
    for key, shows in keys:
        wait_until(lambda shows=shows: shows in screen(tmux), timeout=30, what=repr(shows))
        tmux.press("console", key)
    paused = pause_dir / f"{point}.paused"
    wait_until(paused.exists, timeout=60, what=f"the console to stop at {point}")
    assert pane.pid is not None and int(paused.read_text()) == pane.pid
    os.kill(pane.pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(pane.pid), what="the console to die")


def consistent(root: Path) -> None:
    """Every JSON file of the project reads whole, and no writer's temp file is left."""
    for path in root.rglob("*"):
        if ".git" in path.parts or not path.is_file():
            continue
        assert not path.name.endswith(".tmp"), path
        if path.suffix in (".json", ".question", ".answer", ".permission", ".decision"):
            json.loads(path.read_text())


async def restarted(root: Path) -> list[str]:
    """What a new console says did not complete (its journal is then empty)."""
    app = create_app(root, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 32)) as pilot:
        await until(pilot, lambda: app.upkeep.interrupted is not None)
        await pilot.pause()
        said = [str(n.message) for n in app._notifications if n.title == "Did not complete"]
    assert Journal(ProjectPaths(root)).interrupted() == []
    return said


async def test_killed_before_the_answer_is_written(project: Path, tmux_socket, tmp_path) -> None:
    question, _ = Questions(Project(project)).ask(
        AskRequest(task_id="task-1", question="Which db?", options=["A: postgres", "B: sqlite"])
    )
    kill_at(project, tmux_socket, tmp_path, "action-answer", [("a", "Quit"), ("A", "Which db?")])

    consistent(project)
    assert Questions(Project(project)).get(question.id).open
    [said] = await restarted(project)
    assert said.startswith(f"answering {question.id} with A (console, pid ")
    assert said.endswith("did not complete: nothing was written: do it again")


async def test_killed_once_the_answer_is_written(project: Path, tmux_socket, tmp_path) -> None:
    question, _ = Questions(Project(project)).ask(
        AskRequest(task_id="task-1", question="Which db?", options=["A: postgres", "B: sqlite"])
    )
    kill_at(
        project, tmux_socket, tmp_path, "action-answer-written", [("a", "Quit"), ("B", "Which db?")]
    )

    consistent(project)
    assert Questions(Project(project)).get(question.id).answer.answer == "B: sqlite"
    [said] = await restarted(project)
    assert said.endswith(f"{question.id}.answer written: it had finished")


async def test_killed_deciding_a_permission(
    project: Path, tmux_socket, tmp_path, waiting_hook: int
) -> None:
    request = open_request(project, waiting_hook)
    kill_at(project, tmux_socket, tmp_path, "action-decide", [("a", "Quit"), ("y", "--n 0")])

    consistent(project)
    assert not files.decision_path(files.request_path(ProjectPaths(project), request)).exists()
    [said] = await restarted(project)
    assert said.startswith(f"allowing {request} (claude-web-0000: Bash npm test --n 0)")
    assert said.endswith("nothing was written: do it again")


async def test_killed_between_the_decision_and_its_rule(
    project: Path, tmux_socket, tmp_path, waiting_hook: int
) -> None:
    request = open_request(project, waiting_hook)
    kill_at(project, tmux_socket, tmp_path, "decide-before-rule", [("a", "Quit"), ("Y", "--n 0")])

    consistent(project)
    decision = files.decision_path(files.request_path(ProjectPaths(project), request))
    assert json.loads(decision.read_text())["behavior"] == "allow"
    assert not (ProjectPaths(project).state / "permission-rules.json").exists()
    [said] = await restarted(project)
    assert "always, with a rule for claude-web-0000" in said
    assert said.endswith(
        f"{decision.relative_to(project)} written; .claude/state/permission-rules.json not"
    )


@pytest.mark.parametrize(
    ("point", "paused", "outcome"),
    [
        ("action-queue", False, "nothing was written: do it again"),
        ("action-queue-written", True, "merge-queue.json written: it had finished"),
    ],
)
async def test_killed_in_a_queue_action(
    project: Path, tmux_socket, tmp_path, point: str, paused: bool, outcome: str
) -> None:
    QueueEdits(Project(project)).add("feat/parser")
    kill_at(project, tmux_socket, tmp_path, point, [("5", "Quit"), ("Space", "feat/parser")])

    consistent(project)
    assert QueueEdits(Project(project)).read().paused is paused
    [said] = await restarted(project)
    assert said.startswith("pausing the merge queue (console, pid ")
    assert said.endswith(outcome)


async def test_killed_between_the_resume_count_and_the_task_file(
    project: Path, tmux_socket, tmp_path, chome: Path
) -> None:
    context = write_context(project, team=TEAM)
    task = task_file(chome, TEAM)
    before = task.read_text()
    keys = [("4", "Quit"), ("s", "arc-1700000000000"), ("y", "Resume task #7")]
    kill_at(project, tmux_socket, tmp_path, "resume-before-task", keys)

    consistent(project)
    assert "resume_count: 1" in context.read_text() and task.read_text() == before
    [said] = await restarted(project)
    assert said.startswith("resuming task #7 (")
    assert said.endswith(f"{context.relative_to(project)} written; {task} not")
