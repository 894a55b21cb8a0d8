"""The Questions pane and the answer modal, driven by key presses (Pilot) and snapshots."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.tasks import TaskStore
from runeconsole.demo.questions import SIGNAL_DIR, scene_questions
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import (
    Answer,
    AskRequest,
    Question,
    Questions,
    RelaySettings,
)
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.panes.question_rows import WORKER_CELLS, worker_cell
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from tests.support.cli import cli_env
from tests.support.console import burst, settle
from tests.support.paths import SNAP
from tests.support.polling import until

SNAP_ROOT = SNAP


def ask(relay: Questions, task: str, question: str, *, worker: str, **kw: object) -> Question:
    request = AskRequest(
        task_id=task,
        question=question,
        options=kw.pop("options", ["A: Use bcrypt (already in deps)", "B: Use argon2"]),  # type: ignore[arg-type]
        context=str(kw.pop("context", "")),
        worker=worker,
        signal_dir=SIGNAL_DIR,
        **kw,  # type: ignore[arg-type]
    )
    return relay.ask(request)[0]


def make_scene(root: Path, clock: ManualClock) -> Questions:
    shutil.rmtree(root, ignore_errors=True)
    git.init_repo(root)
    return scene_questions(root, clock)


@pytest.fixture
def scene(tmp_path: Path, clock: ManualClock) -> Questions:
    return make_scene(tmp_path / "project", clock)


@pytest.fixture
def snap_scene(clock: ManualClock, snap_dir: Path) -> Questions:
    """The scene at a relative path, since the status bar shows the root."""
    return make_scene(SNAP_ROOT / "questions", clock)


def console(relay: Questions) -> RuneConsole:
    return create_app(relay.root, clock=relay.clock, watch=False, tick_seconds=0)  # type: ignore[arg-type]


def pane(app: RuneConsole) -> LocalQuestionsPane:
    return app.query_one(LocalQuestionsPane)


async def show_questions(pilot: Pilot) -> None:
    await pilot.press("3")
    await pilot.pause()


async def open_first(pilot: Pilot) -> QuestionModal:
    await show_questions(pilot)
    await pilot.press("a")
    await pilot.pause()
    modal = pilot.app.screen
    assert isinstance(modal, QuestionModal)
    return modal


def short_keys(app: RuneConsole) -> list[str]:
    """Row keys in display order, without the signal directory."""
    table = pane(app).table
    return [key.split("/")[1] for key in sorted(table.keys(), key=table.get_row_index)]


def answer_of(relay: Questions, name: str) -> Answer | None:
    return relay.get(f"{SIGNAL_DIR}/{name}").answer


def text_of(app: RuneConsole, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


# -- snapshots ---------------------------------------------------------------------------------


def test_snapshot_pane(snap_scene: Questions, snap_compare: Callable) -> None:
    assert snap_compare(console(snap_scene), terminal_size=(80, 24), run_before=show_questions)


def test_snapshot_pane_wide(snap_scene: Questions, snap_compare: Callable) -> None:
    assert snap_compare(console(snap_scene), terminal_size=(140, 30), run_before=show_questions)


def test_snapshot_modal(snap_scene: Questions, snap_compare: Callable) -> None:
    async def open_modal(pilot: Pilot) -> None:
        await open_first(pilot)

    assert snap_compare(console(snap_scene), terminal_size=(80, 24), run_before=open_modal)


# -- the pane ----------------------------------------------------------------------------------


async def test_pane_lists_open_questions_blocking_first(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await show_questions(pilot)
        table = pane(app).table
        assert short_keys(app) == [
            "task-3.q1",
            "task-7.q1",
            "task-9.q1",
        ]
        assert [table.get_row_at(i)[1] for i in range(3)] == ["task-3", "task-7", "task-9"]
        # ON TIMEOUT: what the timeout answers, and when (option A, for runeconsole's own).
        assert str(table.get_row_at(0)[4]) == "A in 2m13s"
        assert str(table.get_row_at(2)[4]) == "-"
        assert "unreadable: not valid JSON" in str(table.get_row_at(2)[5])
        assert " questions 3 " in app.query_one("#status", Static).render().plain + " "
        # the countdown moves with the clock, without reading files
        scene.clock.advance(60)  # type: ignore[attr-defined]
        pane(app).tick()
        assert str(table.get_row_at(0)[4]) == "A in 1m13s"
        assert str(table.get_row_at(0)[3]) == "1m47s"


async def test_new_blocking_question_rings_and_toasts(scene: Questions) -> None:
    app = console(scene)
    bells: list[None] = []
    toasts: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        app.bell = lambda: bells.append(None)  # type: ignore[method-assign]
        app.notify = lambda message, **_: toasts.append(message)  # type: ignore[method-assign]
        await show_questions(pilot)
        assert bells == []
        fresh = ask(scene, "task-11", "Which queue?", worker="rune-smith-4")
        pane(app).apply_changes({fresh.path})
        quiet = ask(scene, "task-12", "Log level?", worker="rune-smith-5", urgency="non-blocking")
        pane(app).apply_changes({quiet.path})
        await pilot.pause()
        assert len(bells) == 1
        assert toasts == ["task-11 (rune-smith-4): Which queue? — press a to answer"]
        assert " questions 5 " in app.query_one("#status", Static).render().plain + " "
        # blocking rows stay ahead of non-blocking ones
        keys = short_keys(app)
        assert keys.index("task-11.q1") < keys.index("task-7.q1")


async def test_empty_pane_says_so(project: Path, clock: ManualClock) -> None:
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await show_questions(pilot)
        note = app.query_one("#questions-empty")
        assert note.display
        relay = Questions(Project(project, clock), RelaySettings(), TaskStore(project / "no-tasks"))
        pane(app).apply_changes({ask(relay, "task-1", "Port?", worker="w").path})
        assert not note.display and short_keys(app) == ["task-1.q1"]


async def test_help_lists_the_answer_keys(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 40)) as pilot:
        await show_questions(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen) and help_screen.pane_title == "Questions"
        assert any("own words" in text for _, text in help_screen.pane_keys)


async def test_rescan_and_filter(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await show_questions(pilot)
        scene.answer(f"{SIGNAL_DIR}/task-3.q1", option="B")
        pane(app).rescan()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert short_keys(app) == ["task-7.q1", "task-9.q1"]
        pane(app).filter_text = "legacy"
        assert short_keys(app) == ["task-7.q1"]
        pane(app).filter_text = ""
        assert len(short_keys(app)) == 2


async def test_worker_text_is_shown_as_written_not_as_markup(
    tmp_path: Path, clock: ManualClock
) -> None:
    root = tmp_path / "project"
    git.init_repo(root)
    relay = Questions(Project(root, clock), RelaySettings(), TaskStore(root / "no-tasks"))
    text = "Use [bold]x[/] or [/]y?"
    ask(relay, "task-1", text, worker="w", options=["A: [red]", "B: [/]"], context="[link=x]")
    app = console(relay)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_first(pilot)
        assert str(pane(app).table.get_row_at(0)[5]) == text
        assert text in text_of(app, "#question-body") and "[link=x]" in text_of(
            app, "#question-body"
        )
        await pilot.press("B")
        await settle(pilot)  # the answer is written by a worker
        assert (answer_of(relay, "task-1.q1") or pytest.fail()).answer == "B: [/]"


# -- the modal ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "expected"), [("B", "B: Use argon2"), ("2", "B: Use argon2")])
async def test_key_answers_at_once(scene: Questions, key: str, expected: str) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_first(pilot)
        assert modal.question.task_id == "task-3"
        await pilot.press(key)
        await settle(pilot)  # the answer is written by a worker
        assert not isinstance(app.screen, QuestionModal)
        answer = answer_of(scene, "task-3.q1")
        assert answer is not None and (answer.answer, answer.decided_by) == (expected, "user")
        assert "task-3.q1" not in " ".join(pane(app).table.keys())
        assert " questions 2 " in app.query_one("#status", Static).render().plain + " "


async def test_free_text_and_escape(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_first(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, QuestionModal)
        assert answer_of(scene, "task-3.q1") is None
        await pilot.press("a", "t", *"that's it, quit", "enter")
        await settle(pilot)  # the answer is written by a worker
        answer = answer_of(scene, "task-3.q1")
        assert answer is not None and (answer.answer, answer.option) == ("that's it, quit", None)


async def test_keys_other_than_options_do_nothing(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_first(pilot)
        # `a` opened the window: pressing it again (or any lowercase letter) answers nothing.
        await pilot.press("a", "b", "c", "3", "z", "slash", "question_mark")
        await pilot.pause()
        assert isinstance(app.screen, QuestionModal)
        assert app.query_one(PaneTabs).active == "questions"
        assert answer_of(scene, "task-3.q1") is None
        await pilot.press("q")  # closes the modal, not the console
        assert not isinstance(app.screen, QuestionModal) and app.is_running


async def test_countdown_runs_in_the_modal_and_the_timeout_closes_it(scene: Questions) -> None:
    app = console(scene)
    clock: ManualClock = scene.clock  # type: ignore[assignment]
    async with app.run_test(size=(100, 30)) as pilot:
        await open_first(pilot)
        said = "runeconsole, which applies the timeout: in 2m13s it answers A (Use bcrypt"
        assert said in text_of(app, "#question-countdown")
        clock.advance(100)
        pane(app).tick()
        assert "33s" in text_of(app, "#question-countdown")
        clock.advance(34)
        pane(app).tick()  # the console writes the auto-answer
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Answered by the timeout: A: Use bcrypt" in text_of(app, "#question-note")
        assert isinstance(app.screen, QuestionModal)
        await until(pilot, lambda: not isinstance(app.screen, QuestionModal))
        answer = answer_of(scene, "task-3.q1")
        assert answer is not None and answer.decided_by == "auto-timeout"


async def test_a_question_overdue_when_first_seen_is_resurfaced_not_decided(
    scene: Questions,
) -> None:
    """Left by an orchestrator that is gone: the operator gets a fresh timeout."""
    clock: ManualClock = scene.clock  # type: ignore[assignment]
    clock.advance(3600)  # every scene question is long past its deadline
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await show_questions(pilot)
        pane(app).tick()
        await pilot.pause()
        assert answer_of(scene, "task-3.q1") is None
        assert any("re-surfaced" in n.title for n in app._notifications)
        timeout = pane(app).questions.settings.timeout_seconds  # the console's own setting
        question = pane(app).records[f"{SIGNAL_DIR}/task-3.q1"]
        assert question.seconds_left(clock.now()) == pytest.approx(timeout)
        clock.advance(timeout + 1)
        pane(app).tick()
        await app.workers.wait_for_complete()
        answer = answer_of(scene, "task-3.q1")
        assert answer is not None and answer.decided_by == "auto-timeout"


async def test_modal_closes_when_its_question_file_goes(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_first(pilot)
        modal.question.path.unlink()
        pane(app).apply_changes({modal.question.path})
        await pilot.pause()
        assert "The question file is gone" in text_of(app, "#question-note")
        await pilot.press("B")  # too late: nothing is written
        await until(pilot, lambda: not isinstance(app.screen, QuestionModal))
        assert not modal.question.answer_path.exists()


async def test_a_late_key_is_refused_with_the_answer_that_stands(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_first(pilot)
        scene.answer(f"{SIGNAL_DIR}/task-3.q1", text="decided on the CLI")
        await pilot.press("B")  # the pane has not heard of it yet (no watching here)
        await settle(pilot)  # the answer is written by a worker
        assert "Answered by user: decided on the CLI" in text_of(app, "#question-note")
        answer = answer_of(scene, "task-3.q1")
        assert answer is not None and answer.answer == "decided on the CLI"


async def test_unreadable_question_takes_a_text_answer(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await show_questions(pilot)
        pane(app).select(f"{SIGNAL_DIR}/task-9.q1")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, QuestionModal)
        await pilot.press("A")  # no options: letters do nothing
        assert isinstance(app.screen, QuestionModal)
        await pilot.press("t", *"go ahead", "enter")
        await settle(pilot)  # the answer is written by a worker
        assert answer_of(scene, "task-9.q1") is not None


# -- live: real watching, a real ``ask`` process ---------------------------------------------------


async def test_live_ask_appears_and_a_key_answers_the_process(tmp_path: Path) -> None:
    root = tmp_path / "project"
    git.init_repo(root)
    app = create_app(root, tick_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await show_questions(pilot)
        # a signal directory created after the console started is watched too
        command = [sys.executable, "-m", "runeconsole", "question", "ask", "--root", str(root)]
        command += ["--task", "task-1", "--question", "Port?", "--option", "A: 80"]
        command += ["--option", "B: 8080", "--json", "--signal-dir", "rune-work-live"]
        env = {**cli_env(), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        try:
            deadline = time.monotonic() + 20
            while not pane(app).table.keys() and time.monotonic() < deadline:
                await pilot.pause(0.02)
            assert pane(app).table.keys() == ["rune-work-live/task-1.q1"]
            await pilot.press("a", "B")
            out, err = process.communicate(timeout=20)
        finally:
            process.kill()
        assert process.returncode == 0, err
        assert json.loads(out)["answer"] == "B: 8080"
        await pilot.pause(0.2)
        assert pane(app).table.keys() == []


async def test_keys_typed_right_after_t_never_choose_an_option(scene: Questions) -> None:
    app = console(scene)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_first(pilot)
        burst(app, "tAB")
        await pilot.pause()
        assert isinstance(app.screen, QuestionModal)
        assert answer_of(scene, "task-3.q1") is None


def test_a_long_worker_name_is_cut_and_leaves_the_question_its_room() -> None:
    assert worker_cell("orchestrator-search").plain == "orchestrator-search"
    cut = worker_cell("w" * 200)
    assert cut.cell_len == WORKER_CELLS and cut.plain.endswith("…")
