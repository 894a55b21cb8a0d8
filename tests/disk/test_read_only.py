"""A read-only root: the console opens, says so, and offers no action that writes; the CLI
refuses each write saying why; the hook stays out of the agent's way."""

from __future__ import annotations

import subprocess
import sys

import pytest

from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.console.status_bar import StatusBar
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.panes.pane import MERGE_QUEUE, PERMISSIONS, QUESTIONS, SUSPENDED
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from tests.disk.conftest import Scene
from tests.support.claude import bridge
from tests.support.cli import cli_env
from tests.support.polling import until

pytestmark = pytest.mark.timeout(180)
READ_ONLY = "is on a read-only file system"
WRITING = {"answer", "answer_oldest", "decide", "remove_rule", "resume", "process", "retry"}
WRITING |= {"remove", "priority", "move", "toggle_pause", "handoff", "respawn", "kill"}


def offered(app: RuneConsole) -> set[str]:
    """The actions the footer offers now (those ``check_action`` allows)."""
    return {active.binding.action.split("(")[0] for active in app.screen.active_bindings.values()}


async def test_a_read_only_root_opens_a_console_that_says_so_and_offers_no_writing_action(
    scene: Scene,
) -> None:
    scene.disk.read_only()
    app = create_app(scene.root, watch=True, tick_seconds=0)
    async with app.run_test(size=(120, 32)) as pilot:
        await until(pilot, lambda: any(READ_ONLY in str(n.message) for n in app._notifications))
        assert "read-only" in str(app.query_one(StatusBar).render())
        assert not app.presence.held and not app.monitor
        for pane in (QUESTIONS, PERMISSIONS, MERGE_QUEUE, SUSPENDED, "agents"):
            app.goto_pane(pane)
            await pilot.pause()
            assert offered(app) & WRITING == set(), pane
        app.goto_pane(QUESTIONS)
        await until(pilot, lambda: scene.question in app.query_one(LocalQuestionsPane).records)
        await pilot.press("a")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, QuestionModal)
        assert any("Read-only:" in str(n.message) for n in app._notifications)


def test_the_cli_refuses_each_write_on_a_read_only_root_saying_why(scene: Scene) -> None:
    scene.disk.read_only()
    for command in (
        ["question", "answer", scene.question, "--option", "A"],
        ["permissions", "decide", scene.request, "--allow"],
        ["permissions", "allow", "Bash", "make"],
        ["merge-queue", "pause"],
        ["suspended", "resume", "7"],
        ["prune"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "runeconsole", *command, "--root", str(scene.root)],
            capture_output=True, text=True, timeout=60, env=cli_env(), check=False,
        )  # fmt: skip
        assert done.returncode == 1, (command, done)
        assert "was not written: the file system is read-only" in done.stderr, (command, done)
    listed = subprocess.run(
        [sys.executable, "-m", "runeconsole", "prune", "--dry-run", "--root", str(scene.root)],
        capture_output=True, text=True, timeout=60, env=cli_env(), check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr


def test_the_hook_on_a_read_only_root_exits_0_and_prints_nothing(scene: Scene) -> None:
    with bridge(scene.root) as made:
        made.send("SessionStart")
        scene.disk.read_only()
        for event in ("UserPromptSubmit", "PermissionRequest-Bash", "Stop", "SessionEnd"):
            result = made.send(event)
            assert (result.exit_code, result.stdout, result.errors) == (0, "", []), event
