"""Blocking work runs in workers (``tui/support/workers.py``): the console keeps answering keys and
ticking while a write waits, the outcome comes back as a message, and a failure is shown
to the operator instead of ending the console."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.merge_queue import build_queue
from runeconsole.demo.questions import SIGNAL_DIR, scene_questions
from runeconsole.demo.suspended import build_scene as build_suspended
from runeconsole.services.claude.questions import answers
from runeconsole.services.suspension import Suspension
from runeconsole.services.worker_questions import Questions
from runeconsole.tui.console.app import create_app
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.panes.merge_queue_pane import MergeQueuePane
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from runeconsole.tui.panes.suspended_pane import LocalSuspendedPane
from runeconsole.tui.support.workers import WorkFailed
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from tests.support.console import settle
from tests.support.merge_queue import write_talisman
from tests.support.polling import until

WAIT = 30.0  # the longest a blocked worker is held (the test fails well before)


class Messages(list[Message]):
    """Every message the console handles (``run_test(message_hook=...)``)."""

    def of(self, kind: type[Message]) -> list[Any]:
        """Each message of ``kind`` once (a bubbling one is handled at every level)."""
        return list({id(m): m for m in self if isinstance(m, kind)}.values())


def held(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> threading.Event:
    """Make ``owner.name`` wait until the returned event is set (and note its thread)."""
    release = threading.Event()
    real: Callable[..., Any] = getattr(owner, name)

    def waiting(*args: Any, **kwargs: Any) -> Any:
        assert threading.current_thread() is not threading.main_thread(), "on the UI thread"
        release.wait(WAIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, waiting)
    return release


@pytest.fixture
def asked(tmp_path: Path, clock: ManualClock) -> Questions:
    root = tmp_path / "project"
    git.init_repo(root)
    return scene_questions(root, clock)


async def test_an_answer_is_written_in_a_worker_while_the_window_keeps_counting_down(
    asked: Questions, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = held(monkeypatch, answers, "answer")
    seen = Messages()
    app = create_app(asked.root, clock=asked.clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        await pilot.press("3", "a")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        modal = app.screen
        assert isinstance(modal, QuestionModal)
        await pilot.press("B")
        await until(pilot, lambda: modal.sending)
        countdown = str(modal.query_one("#question-countdown").render())
        asked.clock.advance(30)  # type: ignore[attr-defined]
        app.query_one(LocalQuestionsPane).tick()
        await until(
            pilot, lambda: str(modal.query_one("#question-countdown").render()) != countdown
        )
        await pilot.press("A")  # a second answer while the first is written: ignored
        assert modal.sending and not seen.of(QuestionModal.AnswerWritten)
        release.set()
        await until(pilot, lambda: not isinstance(app.screen, QuestionModal))
        [written] = seen.of(QuestionModal.AnswerWritten)
        assert written.error is None and written.given.answer == "B: Use argon2"
        assert asked.get(f"{SIGNAL_DIR}/task-3.q1").answer.answer == "B: Use argon2"


async def test_a_write_that_fails_is_shown_and_the_window_takes_another_answer(
    asked: Questions, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = answers.answer
    calls: list[int] = []

    def failing_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(answers, "answer", failing_once)
    app = create_app(asked.root, clock=asked.clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("3", "a")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        modal = app.screen
        await pilot.press("B")
        await settle(pilot)
        assert "No space left on device" in str(modal.query_one("#question-note").render())
        assert app.screen is modal and app.is_running
        await pilot.press("B")
        await until(pilot, lambda: not isinstance(app.screen, QuestionModal))
        assert asked.get(f"{SIGNAL_DIR}/task-3.q1").answer.answer == "B: Use argon2"


async def test_merge_queue_actions_run_in_key_order_and_a_failure_is_a_notification(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, clock = tmp_path / "project", ManualClock()
    git.init_repo(root)
    write_talisman(root, "true")
    build_queue(root, clock)
    seen = Messages()
    app = create_app(root, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 30), message_hook=seen.append) as pilot:
        await pilot.press("5")
        await settle(pilot)
        pane = app.query_one(MergeQueuePane)
        real = pane.queue.set_paused

        def broken(paused: bool) -> None:
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(pane.queue, "set_paused", broken)
        pane.table.move_cursor(row=3)
        await pilot.press("plus", "space", "minus")  # move, a failing pause, move back
        await settle(pilot)
        assert [m.action for m in seen.of(MergeQueuePane.Acted)] == ["Move", "Move"]
        [failed] = seen.of(WorkFailed)
        assert failed.what == "merge-queue-action" and "Input/output error" in failed.reason
        assert any("Input/output error" in n.message for n in app._notifications)
        assert app.is_running and pane.processing is None
        monkeypatch.setattr(pane.queue, "set_paused", real)
        await pilot.press("space")
        await settle(pilot)
        assert pane.state.paused


async def test_the_suspended_pane_reads_git_in_a_worker_and_the_console_stays_responsive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    build_suspended(root, ManualClock())
    release = held(monkeypatch, Suspension, "git_view")
    seen = Messages()
    app = create_app(root, clock=ManualClock(), watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await pilot.press("4")  # the pane shows while its first read still waits for git
        await pilot.press("3")
        assert app.query_one(PaneTabs).active == "questions"
        pane = app.query_one(LocalSuspendedPane)
        assert pane.table.row_count == 0 and not seen.of(LocalSuspendedPane.Loaded)
        release.set()
        await until(pilot, lambda: pane.table.row_count == 6)
        assert len(seen.of(LocalSuspendedPane.Loaded)) >= 1
