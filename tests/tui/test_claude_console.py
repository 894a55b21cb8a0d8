"""The console side of the Claude Code bridge: hook-fed agents live in the Agents and
Problems panes, and an AskUserQuestion call is answered in the modal from any pane."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.tasks import TaskStore
from runeconsole.demo.claude_scene import ASK_CALL, ASK_TASK, relay_call
from runeconsole.demo.scene import build_scene
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import AskRequest, Questions
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.panes.problems_pane import ProblemsPane
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from tests.support.claude import KEY, Bridge, in_thread
from tests.support.hook_runner import decision
from tests.support.paths import SNAP
from tests.support.polling import until

pytestmark = pytest.mark.timeout(120)
SNAP_ROOT = SNAP / "claude"


def cell(app: RuneConsole, key: str, column: str) -> str:
    table = app.agents_pane.table
    return str(table.get_cell(key, column)) if table.has(key) else ""


def questions_pane(app: RuneConsole) -> LocalQuestionsPane:
    return app.query_one(LocalQuestionsPane)


async def test_a_hook_fed_agent_appears_and_updates_live(hooked: Bridge) -> None:
    app = create_app(hooked.project, rescan_seconds=60)
    async with app.run_test(size=(150, 30)) as pilot:
        hooked.write_usage("msg_1", input=3000, output=200, cache_read=150_000, cache_creation=9000)
        await in_thread(lambda: hooked.send("SessionStart"))
        await until(pilot, lambda: cell(app, KEY, "status") == "idle")
        assert cell(app, KEY, "role") == "claude"
        assert cell(app, KEY, "tokens") == "162k"
        # 162,000 in use of the 1,000,000 of the model SessionStart names
        assert cell(app, KEY, "context").endswith("84%")
        assert cell(app, KEY, "cost") == "~$0.09"  # estimated at claude-opus-5-5's prices
        await in_thread(lambda: hooked.send("UserPromptSubmit"))
        await until(pilot, lambda: cell(app, KEY, "status") == "busy")
        await in_thread(lambda: hooked.send("Notification"))
        await until(pilot, lambda: cell(app, KEY, "wait") == "!")
        problems = app.query_one(ProblemsPane)
        await until(pilot, lambda: f"{KEY}/waiting" in problems.records)
        assert problems.records[f"{KEY}/waiting"].detail == "Claude needs your permission"
        await in_thread(lambda: hooked.send("SessionEnd"))
        await until(pilot, lambda: cell(app, KEY, "status") == "terminated")
        assert f"{KEY}/waiting" not in problems.records


async def test_a_two_question_call_is_answered_in_the_modal_from_any_pane(
    hooked: Bridge,
) -> None:
    app = create_app(hooked.project, rescan_seconds=60)
    async with app.run_test(size=(120, 34)) as pilot:
        await until(pilot, lambda: app.presence.held)  # the console lock: hooks relay here
        await in_thread(lambda: hooked.send("SessionStart"))
        done = hooked.send_later("PreToolUse-AskUserQuestion")
        pane = questions_pane(app)
        await until(pilot, lambda: len(pane.records) == 2)
        toasts = [n.message for n in app._notifications]
        assert any(message.endswith("press a to answer") for message in toasts), toasts
        assert app.query_one(PaneTabs).active == "agents"
        await pilot.press("a")  # from the Agents pane: the oldest blocking question
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, QuestionModal) and len(modal.call) == 2
        assert modal.question.seq == 1 and not modal.question.multi_select
        await pilot.press("B")  # single choice: answered at once, on to question 2
        await until(pilot, lambda: modal.question.seq == 2)  # once the write is done
        assert isinstance(app.screen, QuestionModal) and modal.question.seq == 2
        await pilot.press("enter")  # nothing chosen yet: a note, no answer
        await pilot.pause()
        assert "Choose at least one" in str(modal.query_one("#question-note").render())
        await pilot.press("A", "down", "down", "space", "enter")  # lint and e2e
        await until(pilot, lambda: "result" in done)
        assert not isinstance(app.screen, QuestionModal)
        result = done["result"]
        assert result.errors == [] and result.exit_code == 0
        assert decision([result]).updated_input["answers"] == {  # type: ignore[index]
            "Which hash should the auth module use?": "argon2",
            "Which checks should run?": "lint, e2e",
        }
        await until(pilot, lambda: not pane.records)


async def test_a_with_nothing_open_says_so(project: Path, clock: ManualClock) -> None:
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert not isinstance(app.screen, QuestionModal)
        assert any(
            n.message == "No open questions or permission requests." for n in app._notifications
        )


async def test_a_twin_is_shown_once_as_the_call(project: Path, clock: ManualClock) -> None:
    rune = Questions(Project(project, clock), tasks=TaskStore(project / ".no-tasks"))
    asked, _ = rune.ask(
        AskRequest(
            "task-3",
            ASK_CALL["questions"][0]["question"],  # type: ignore[index]
            ["A: Inverted index", "B: Trigram index"],
            signal_dir="rune-work-x",
        )
    )
    relay_call(rune.paths, clock.now())
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        app.goto_pane("questions")
        await pilot.pause()
        keys = questions_pane(app).table.keys()
        assert asked.id not in keys
        assert sorted(keys) == [f"claude-code/{ASK_TASK}.q1", f"claude-code/{ASK_TASK}.q2"]
        await pilot.press("a", "B", "C", "enter")
        await pilot.pause()
        twin = rune.get(asked.id).answer
        assert twin is not None and twin.answer == "B: Trigram index"


# -- snapshot ----------------------------------------------------------------------------------


async def open_scene_call(pilot: Pilot) -> None:
    """The scene's call in the answer window: question 1 answered, on 2 lint and e2e chosen."""
    pilot.app.goto_pane("questions")  # type: ignore[attr-defined]
    await pilot.pause()
    pane = questions_pane(pilot.app)  # type: ignore[arg-type]
    pane.open_modal(pane.records[f"claude-code/{ASK_TASK}.q1"])
    await until(pilot, lambda: isinstance(pilot.app.screen, QuestionModal))
    await pilot.press("A")
    await until(pilot, lambda: pilot.app.screen.question.seq == 2)  # type: ignore[attr-defined]
    await pilot.press("A", "C")
    await pilot.pause()


@pytest.fixture
def snap_scene(clock: ManualClock, snap_dir: Path) -> ManualClock:
    git.init_repo(SNAP_ROOT)
    build_scene(SNAP_ROOT, clock)
    return clock


def test_snapshot_multi_select_question_of_a_call(
    snap_scene: ManualClock, snap_compare: Callable
) -> None:
    async def open_call(pilot: Pilot) -> None:
        await open_scene_call(pilot)

    app = create_app(SNAP_ROOT, clock=snap_scene, watch=False, tick_seconds=0)
    assert snap_compare(app, terminal_size=(90, 30), run_before=open_call)
