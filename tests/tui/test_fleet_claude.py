"""Claude Code's own questions through the fleet console: while it is open, each source's
stream stands for an open console there (``events --present``), so a session's
AskUserQuestion call waits for an answer given in the fleet console."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.claude.bridge.presence import console_open
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.project import Project
from runeconsole.tui.fleet_console.app import FleetConsole, SourcesBar, create_fleet_app
from runeconsole.tui.modals.permission_modal import PermissionModal
from runeconsole.tui.modals.question_modal import QuestionModal
from tests.support.claude import Bridge, in_thread
from tests.support.fleet import project_root
from tests.support.hook_runner import HookResult, decision
from tests.support.polling import until

pytestmark = pytest.mark.timeout(120)


@asynccontextmanager
async def console(specs: list[SourceSpec]) -> AsyncIterator[tuple[FleetConsole, Pilot]]:
    app = create_fleet_app(specs, heartbeat=0.5, tick_seconds=0)
    async with app.run_test(size=(140, 30)) as pilot:
        yield app, pilot


def open_questions(app: FleetConsole) -> list[str]:
    return [k for k, q in app.model.questions.records.items() if q.state == "pending"]


async def test_a_claude_code_call_on_a_source_is_answered_whole_in_the_fleet_console(
    hooked: Bridge, tmp_path: Path
) -> None:
    """Both questions of the call in one window, as the project console answers them: the
    single choice at once, then the multi-select one by toggling options; each answer is
    sent to the source the call was made on."""
    specs = [
        SourceSpec("claude", str(hooked.project)),
        SourceSpec("other", str(project_root(tmp_path, "other", "a"))),
    ]
    assert not console_open(hooked.paths)
    async with console(specs) as (app, pilot):
        await until(pilot, lambda: console_open(hooked.paths))  # the feed stands for a console
        await in_thread(lambda: hooked.send("SessionStart"))
        done = hooked.send_later("PreToolUse-AskUserQuestion")
        await until(pilot, lambda: len(open_questions(app)) == 2)
        assert all(key.startswith("claude/claude-code/") for key in open_questions(app))
        await pilot.press("4")  # the Questions pane
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        modal = app.screen
        assert isinstance(modal, QuestionModal) and modal.source == "claude"
        assert len(modal.call) == 2 and modal.question.seq == 1
        await pilot.press("B")  # argon2: answered on the source, on to question 2
        await until(pilot, lambda: modal.question.seq == 2, 30)
        assert modal.question.multi_select
        await pilot.press("A", "down", "down", "space", "enter")  # lint and e2e
        await until(pilot, lambda: "result" in done, 30)
        assert not isinstance(app.screen, QuestionModal)
        result = done["result"]
        assert result.errors == [] and result.exit_code == 0
        assert decision([result]).updated_input["answers"] == {  # type: ignore[index]
            "Which hash should the auth module use?": "argon2",
            "Which checks should run?": "lint, e2e",
        }
        await until(pilot, lambda: not open_questions(app))
    assert not console_open(hooked.paths)  # closed with the console


def hook_decision(done: dict[str, HookResult]) -> dict[str, Any] | None:
    result = done["result"]
    assert result.exit_code == 0 and result.errors == [], result
    return result.output["hookSpecificOutput"]["decision"] if result.stdout.strip() else None  # type: ignore[index]


async def test_permission_requests_of_a_source_are_allowed_and_denied_in_the_fleet_console(
    hooked: Bridge, tmp_path: Path
) -> None:
    specs = [
        SourceSpec("claude", str(hooked.project)),
        SourceSpec("other", str(project_root(tmp_path, "other", "a"))),
    ]
    async with console(specs) as (app, pilot):
        await until(pilot, lambda: console_open(hooked.paths))
        await in_thread(lambda: hooked.send("SessionStart"))
        pane = app.panes[6]
        await pilot.press("7")  # the Permissions pane
        for keys, verdict in (
            (["y"], {"behavior": "allow"}),
            (["t", *"use make", "enter"], {"behavior": "deny", "message": "use make"}),
            (["s", "Y"], {"behavior": "allow"}),  # and always, for every agent
        ):
            done = hooked.send_later("PermissionRequest-Bash")
            await until(pilot, lambda: open_requests(app))
            assert "claude ●" in str(app.query_one(SourcesBar).render())
            assert "⚑1" in str(app.query_one(SourcesBar).render())
            pane.table.move_to(open_requests(app)[0])
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, PermissionModal))
            await pilot.press(*keys)
            await until(pilot, lambda done=done: "result" in done)
            assert hook_decision(done) == verdict
            await until(pilot, lambda: not open_requests(app))
        (rule,) = Permissions(Project(hooked.project)).rules()
        assert (rule.behavior, rule.tool, rule.scope) == ("allow", "Bash", "all agents")
        shown = [str(pane.table.get_row(k)[-1]) for k in app.model.permissions.records]
        assert any("allowed by" in line for line in shown) and any(
            "use make" in line for line in shown
        )


def open_requests(app: FleetConsole) -> list[str]:
    return [key for key, request in app.model.permissions.records.items() if request.open]
