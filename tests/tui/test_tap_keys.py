"""Every decision window can be driven by taps alone (a browser, a phone): a button per
key, ``esc`` included, each doing what its key does; in a terminal the buttons stay out
of sight."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot

from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.project import Project
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.permission_modal import PermissionModal
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.panes.permissions_pane import LocalPermissionsPane
from runeconsole.tui.widgets.tap_keys import TapButton, TapKeys
from tests.support.claude import Bridge
from tests.support.polling import until
from tests.support.questions import QUESTION_DIR, ask

pytestmark = pytest.mark.timeout(120)


def tapped_app(root: Path) -> RuneConsole:
    app = create_app(root, rescan_seconds=60)
    app.force_tap_keys = True  # as in a browser
    return app


async def tap(pilot: Pilot, label: str) -> None:
    buttons = pilot.app.screen.query(TapButton)
    [button] = [b for b in buttons if str(b.label) == label]
    assert await pilot.click(button)


async def test_a_question_is_answered_by_a_tap_on_its_option(project: Path) -> None:
    ask(project, text="Which parser?")
    app = tapped_app(project)
    async with app.run_test(size=(100, 34)) as pilot:
        await until(pilot, lambda: app.presence.held)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        await until(pilot, lambda: app.screen.query(TapButton))
        labels = [str(b.label) for b in app.screen.query(TapButton)]
        assert labels == ["A", "B", "Type an answer", "Close"]
        assert not app.screen.query_one(TapButton).has_focus  # the keys stay the window's
        await tap(pilot, "B")
        await until(pilot, lambda: not isinstance(app.screen, QuestionModal))
    answer = json.loads((project / QUESTION_DIR / "task-1.q1.answer").read_text())
    assert answer["answer"].startswith("B")


async def test_close_is_esc_and_in_a_terminal_no_button_shows(project: Path) -> None:
    ask(project, text="Which parser?")
    app = tapped_app(project)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        await until(pilot, lambda: app.screen.query(TapButton))
        await tap(pilot, "Close")
        await until(pilot, lambda: not isinstance(app.screen, QuestionModal))
    assert not (project / QUESTION_DIR / "task-1.q1.answer").exists()
    app = create_app(project, rescan_seconds=60)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        await until(pilot, lambda: app.screen.query(TapKeys))
        assert not app.screen.query_one(TapKeys).display


async def test_a_permission_is_always_allowed_for_every_agent_by_taps(hooked: Bridge) -> None:
    hooked.send("SessionStart")
    app = tapped_app(hooked.project)
    async with app.run_test(size=(100, 34)) as pilot:
        await until(pilot, lambda: app.presence.held)
        done = hooked.send_later("PermissionRequest-Bash")
        # the operator taps once the console shows the request waiting
        await until(pilot, lambda: app.query_one(LocalPermissionsPane).oldest())
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PermissionModal))
        await until(pilot, lambda: app.screen.query(TapButton))
        await tap(pilot, "Rules: all agents")
        await until(
            pilot,
            lambda: "Rules: this agent" in [str(b.label) for b in app.screen.query(TapButton)],
        )
        await tap(pilot, "Always allow")
        await until(pilot, lambda: "result" in done)
    [rule] = Permissions(Project(hooked.project)).rules()
    assert (rule.behavior, rule.agent) == ("allow", None)


async def test_a_detail_window_closes_with_a_tap(project: Path) -> None:
    app = tapped_app(project)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.press("question_mark")
        await until(pilot, lambda: app.screen.query(TapButton))
        await tap(pilot, "Close")
        await until(pilot, lambda: not app.screen.query(TapButton))
