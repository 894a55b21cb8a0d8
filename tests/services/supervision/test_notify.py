"""``runeconsole.notify.command``: an argument list, no shell, at most once per agent a
minute, for a permission prompt (the hook), a new blocking question (the console) and a
crash (the monitor)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.notify import Notifier, arguments
from runeconsole.services.project import Project
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings
from runeconsole.services.worker_questions import AskRequest, Questions
from runeconsole.tui.console.app import create_app
from tests.support.claude import Bridge
from tests.support.polling import wait_until
from tests.support.tmux import sleeper

pytestmark = pytest.mark.timeout(120)


def recorder(log: Path) -> list[str]:
    """A command that appends its arguments (as JSON) to ``log``."""
    script = "import json, sys; open(sys.argv[1], 'a').write(json.dumps(sys.argv[2:]) + '\\n')"
    return [sys.executable, "-c", script, str(log), "{title}", "{body}"]


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def set_command(root: Path, command: list[str]) -> None:
    talisman = root / ".claude" / "talisman.yml"
    talisman.parent.mkdir(parents=True, exist_ok=True)
    talisman.write_text("runeconsole:\n  notify:\n    command: " + json.dumps(command) + "\n")


def test_title_and_body_stay_one_argument_each_whatever_they_hold() -> None:
    command = ["notify-send", "--app=rc", "{title}", "[{body}]"]
    assert arguments(command, "a {body} b", "x; rm -rf / $(y)") == [
        "notify-send",
        "--app=rc",
        "a {body} b",
        "[x; rm -rf / $(y)]",
    ]


def test_at_most_once_per_agent_per_minute(project: Path, tmp_path: Path) -> None:
    now = [1000.0]
    log = tmp_path / "calls.jsonl"
    notifier = Notifier(ProjectPaths(project), recorder(log), 60, clock=lambda: now[0])
    assert notifier.notify("worker-a", "worker-a crashed", "exit 3")
    assert not notifier.notify("worker-a", "worker-a asks", "again, too soon")
    assert notifier.notify("worker-b", "worker-b asks", "another agent")
    now[0] += 61
    # Another process (a hook) shares the limit through the file.
    other = Notifier(ProjectPaths(project), recorder(log), 60, clock=lambda: now[0])
    assert other.notify("worker-a", "worker-a asks", "a minute later")
    wait_until(lambda: len(calls(log)) == 3)
    assert sorted(calls(log)) == sorted(
        [
            ["worker-a crashed", "exit 3"],
            ["worker-b asks", "another agent"],
            ["worker-a asks", "a minute later"],
        ]
    )


def test_without_a_command_nothing_runs(project: Path) -> None:
    assert not Notifier(ProjectPaths(project), None).notify("worker-a", "t", "b")
    assert not (project / ".claude" / "state" / "notify.json").exists()


@pytest.mark.e2e
def test_a_permission_prompt_notifies_through_the_hook(hooked: Bridge, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    set_command(hooked.project, recorder(log))
    hooked.send("SessionStart")
    result = hooked.send("Notification")
    assert (result.exit_code, result.stdout) == (0, "")
    wait_until(lambda: calls(log))
    assert calls(log) == [
        ["claude-project-3decb0de needs your permission", "Claude needs your permission"]
    ]


def test_a_crash_notifies_through_the_monitor(
    project: Path, tmux_socket: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    set_command(project, recorder(log))
    supervisor = Supervisor(
        Project(project),
        settings=SupervisorSettings(socket_name=tmux_socket),
        tmux=Tmux(tmux_socket, config_file="/dev/null"),
    )
    spawned = supervisor.spawn("worker", "a", sleeper())
    supervisor.monitor_step()
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", spawned.tmux_session])
    wait_until(lambda: "worker-a" in supervisor.monitor_step().crashed or calls(log), 30)
    wait_until(lambda: calls(log))
    assert calls(log)[0] == ["worker-a crashed", "tmux session rune-worker-a is gone"]


@pytest.mark.e2e
async def test_a_new_blocking_question_notifies_from_the_console(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    set_command(project, recorder(log))
    app = create_app(project, rescan_seconds=60, tick_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        questions = app.query_one("LocalQuestionsPane")
        relay = Questions(Project(project))
        asked, _ = relay.ask(AskRequest("task-1", "Port?", ["A: 80", "B: 8080"], worker="w-1"))
        questions.apply_changes({asked.path})  # type: ignore[attr-defined]
        await pilot.pause()  # the pane's OperatorWanted reaches the app, which starts the call
        await app.workers.wait_for_complete()
        wait_until(lambda: calls(log))
    assert calls(log) == [["task-1 (w-1) asks", "Port?"]]
