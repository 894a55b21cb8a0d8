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
from runeconsole.services.claude.permissions import Permissions
from runeconsole.services.claude.presence import console_open
from runeconsole.services.project import Project
from runeconsole.tui.fleet_console.answer_modal import FleetAnswerModal
from runeconsole.tui.fleet_console.app import FleetConsole, SourcesBar, create_fleet_app
from runeconsole.tui.fleet_console.permission_modal import FleetPermissionModal
from runeconsole.tui.fleet_console.rows import permission_open, question_open
from runeconsole.tui.fleet_console.store import PERMISSION, QUESTION
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
    return [k for k in app.store.keys(QUESTION) if question_open(app.store.get(QUESTION, k) or {})]


async def test_a_claude_code_question_on_a_source_waits_for_and_gets_the_fleet_console_s_answer(
    hooked: Bridge, tmp_path: Path
) -> None:
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
        letters = {"Which hash should the auth module use?": "B", "Which checks should run?": "A"}
        table = app.panes[3].table
        for sent in (1, 2):  # argon2; one of the checks (multiSelect: lint)
            unanswered = next(
                key
                for key in app.store.keys(QUESTION)
                if (app.store.get(QUESTION, key) or {}).get("question") in letters
            )
            table.move_to(unanswered)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, FleetAnswerModal))
            modal = app.screen
            assert isinstance(modal, FleetAnswerModal)
            await pilot.press(letters.pop(str(modal.row["question"])))
            await until(pilot, lambda sent=sent: len(app._notifications) == sent)
        assert not letters
        assert all("sent to claude" in n.message for n in app._notifications)
        await until(pilot, lambda: "result" in done)
        result = done["result"]
        assert result.errors == [] and result.exit_code == 0
        assert decision([result]).updated_input["answers"] == {  # type: ignore[index]
            "Which hash should the auth module use?": "argon2",
            "Which checks should run?": "lint",
        }
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
            await until(pilot, lambda: isinstance(app.screen, FleetPermissionModal))
            await pilot.press(*keys)
            await until(pilot, lambda done=done: "result" in done)
            assert hook_decision(done) == verdict
            await until(pilot, lambda: not open_requests(app))
        (rule,) = Permissions(Project(hooked.project)).rules()
        assert (rule.behavior, rule.tool, rule.scope) == ("allow", "Bash", "all agents")
        shown = [str(pane.table.get_row(k)[-1]) for k in app.store.keys(PERMISSION)]
        assert any("allowed by" in line for line in shown) and any(
            "use make" in line for line in shown
        )


def open_requests(app: FleetConsole) -> list[str]:
    keys = app.store.keys(PERMISSION)
    return [key for key in keys if permission_open(app.store.get(PERMISSION, key) or {})]
