"""The console on a full disk: it opens (its own state refused, never fatal), every action
that writes says the disk is full and changes nothing, and the same key works once space
returns."""

from __future__ import annotations

import pytest

from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.project import Project
from runeconsole.services.worker_questions import Questions
from runeconsole.tui.console.app import PRESENCE_RETRY_SECONDS, RuneConsole, create_app
from runeconsole.tui.modals.permission_modal import PermissionModal
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.panes.merge_queue_pane import MergeQueuePane
from runeconsole.tui.panes.permissions_pane import LocalPermissionsPane
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from runeconsole.tui.panes.suspended_pane import LocalSuspendedPane
from tests.disk.conftest import Scene
from tests.support.polling import until

FULL = "was not written: the disk is full"
pytestmark = pytest.mark.timeout(180)


def told(app: RuneConsole, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


def screen_text(app: RuneConsole) -> str:
    return " ".join(str(w.render()) for w in app.screen.query("Static"))


async def test_the_console_opens_on_a_full_disk_and_takes_its_locks_once_space_returns(
    scene: Scene,
) -> None:
    scene.disk.fill()
    app = create_app(scene.root, watch=True, monitor=True, tick_seconds=0)
    async with app.run_test(size=(120, 32)) as pilot:
        await until(pilot, lambda: told(app, FULL))  # the monitor's pid file, said
        assert not app.presence.held  # its pid file could not be written either
        assert app.query_one(LocalQuestionsPane).records  # and it shows what is there
        scene.disk.free()
        await until(pilot, lambda: app.presence.held, timeout=PRESENCE_RETRY_SECONDS * 5)
        observations = scene.paths.supervisor / "observations.json"
        await until(pilot, observations.exists)  # the monitor took its lock and watches


async def test_an_answer_on_a_full_disk_is_refused_in_the_window_then_given(scene: Scene) -> None:
    app = create_app(scene.root, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 32)) as pilot:
        pane = app.query_one(LocalQuestionsPane)
        scene.disk.fill()
        pane.open_modal(pane.records[scene.question])
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        await pilot.press("A")
        await until(pilot, lambda: FULL in screen_text(app))
        assert Questions(Project(scene.root)).get(scene.question).open
        assert scene.disk.temp_files() == []
        scene.disk.free()
        await pilot.press("A")
        await until(pilot, lambda: not isinstance(app.screen, QuestionModal))
        assert Questions(Project(scene.root)).get(scene.question).answer.answer == "A: postgres"


async def test_a_decision_on_a_full_disk_is_refused_in_the_window_then_made(scene: Scene) -> None:
    app = create_app(scene.root, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 32)) as pilot:
        pane = app.query_one(LocalPermissionsPane)
        scene.disk.fill()
        pane.open_modal(pane.records[scene.request])
        await until(pilot, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("y")
        await until(pilot, lambda: f"Not decided: {scene.paths.root}" in screen_text(app))
        assert FULL in screen_text(app)
        await until(pilot, lambda: not isinstance(app.screen, PermissionModal))
        assert Permissions(Project(scene.root)).get(scene.request).open
        scene.disk.free()
        pane.open_modal(pane.records[scene.request])
        await until(pilot, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("y")
        await until(pilot, lambda: not Permissions(Project(scene.root)).get(scene.request).open)


async def test_a_queue_action_and_a_resume_on_a_full_disk_are_refused_then_done(
    scene: Scene,
) -> None:
    app = create_app(scene.root, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 32)) as pilot:
        queue, suspended = app.query_one(MergeQueuePane), app.query_one(LocalSuspendedPane)
        await until(pilot, lambda: suspended.records)
        scene.disk.fill()
        queue.action_toggle_pause()
        suspended.resume(next(iter(suspended.records.values())))
        await until(pilot, lambda: told(app, f"merge-queue.json {FULL}"))
        await until(pilot, lambda: told(app, f"7.md {FULL}"))
        assert not queue.queue.read().paused
        assert "resume_count: 0" in scene.context.read_text()
        assert scene.disk.temp_files() == []
        scene.disk.free()
        queue.action_toggle_pause()
        suspended.resume(next(iter(suspended.records.values())))
        await until(pilot, lambda: queue.queue.read().paused)
        await until(pilot, lambda: "resume_count: 1" in scene.context.read_text())
