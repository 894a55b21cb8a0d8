"""Permission requests in the console: a row the moment the hook writes one, decided in
the modal from any pane (allow, deny, deny with a reason, always), rules shown and taken
out, decisions elsewhere followed, bad files shown as unreadable, and the record kept
across a restart."""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widget import Widget

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.claude_scene import PERMISSION_ID
from runeconsole.demo.scene import build_scene
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.project import Project
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.agent_detail import AgentDetail
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.permission_modal import PermissionModal
from runeconsole.tui.panes.permissions_pane import LocalPermissionsPane
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from tests.support.claude import KEY, Bridge, bridge, in_thread
from tests.support.hook_runner import HookResult
from tests.support.polling import until

pytestmark = pytest.mark.timeout(120)
SNAP_ROOT = Path("/tmp/runeconsole-snap/permissions")
COMMAND = "touch made-by-bash"


@pytest.fixture
def hooked(project: Path) -> Iterator[Bridge]:
    with bridge(project) as made:
        made.send("SessionStart")
        yield made


def shown(widget: Widget) -> str:
    """What a ``Static`` shows, as plain text (tables included)."""
    console = Console(width=120, file=io.StringIO(), record=True)
    console.print(widget.content)  # type: ignore[attr-defined]
    return console.export_text()


def pane(app: RuneConsole) -> LocalPermissionsPane:
    return app.query_one(LocalPermissionsPane)


def printed(done: dict[str, HookResult]) -> dict | None:
    result = done["result"]
    assert result.exit_code == 0 and result.errors == [], result
    if not result.stdout.strip():
        return None
    return result.output["hookSpecificOutput"]["decision"]  # type: ignore[index]


@contextlib.asynccontextmanager
async def console(made: Bridge) -> AsyncIterator[tuple[RuneConsole, Pilot]]:
    """A console on the project, once it holds the console lock (hooks then wait for it)."""
    app = create_app(made.project, rescan_seconds=60)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.presence.held)
        yield app, pilot


async def at_window(pilot: Pilot, app: RuneConsole, made: Bridge, name: str) -> dict:
    """A request through the hook, then ``a`` (from whatever pane) opens its window."""
    done = await requested(pilot, app, made, name)
    await pilot.press("a")
    await until(pilot, lambda: isinstance(app.screen, PermissionModal))
    return done


async def requested(pilot: Pilot, app: RuneConsole, made: Bridge, name: str) -> dict:
    """A request through the installed hook, once its row is in the pane."""
    before = len([r for r in pane(app).records.values() if r.open])
    done = made.send_later(name)
    await until(pilot, lambda: len([r for r in pane(app).records.values() if r.open]) > before)
    return done


async def test_a_request_is_denied_from_the_agents_pane_and_the_hook_prints_it(
    hooked: Bridge,
) -> None:
    async with console(hooked) as (app, pilot):
        done = await requested(pilot, app, hooked, "PermissionRequest-Bash")
        toasts = [n.message for n in app._notifications]
        assert any(m.endswith("press a to decide") and COMMAND in m for m in toasts), toasts
        (request,) = pane(app).records.values()
        assert pane(app).table.has(request.id)
        assert app.query_one(PaneTabs).active == "agents"
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PermissionModal))
        body = shown(app.screen.query_one("#permission-body"))
        assert COMMAND in body and "Make a file" in body
        await pilot.press("n")
        await until(pilot, lambda: "result" in done)
        assert printed(done) == {"behavior": "deny", "message": files.DENIED}
        assert not isinstance(app.screen, PermissionModal)
        await until(
            pilot, lambda: "denied by operator" in str(pane(app).table.get_cell(request.id, "what"))
        )


async def test_t_denies_with_the_reason_typed_and_y_allows(hooked: Bridge) -> None:
    async with console(hooked) as (app, pilot):
        done = await at_window(pilot, app, hooked, "PermissionRequest-Bash")
        await pilot.press("t", *"use make", "enter")
        await until(pilot, lambda: "result" in done)
        assert printed(done) == {"behavior": "deny", "message": "use make"}
        done = await at_window(pilot, app, hooked, "PermissionRequest-Edit")
        assert "-1 +2 lines" in shown(app.screen.query_one("#permission-body"))
        await pilot.press("y")
        await until(pilot, lambda: "result" in done)
        assert printed(done) == {"behavior": "allow"}


async def test_esc_closes_without_deciding_and_the_agent_keeps_waiting(hooked: Bridge) -> None:
    async with console(hooked) as (app, pilot):
        done = await at_window(pilot, app, hooked, "PermissionRequest-Bash")
        await pilot.press("escape")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, PermissionModal) and "result" not in done
        (request,) = Permissions(Project(hooked.project)).pending()
        Permissions(Project(hooked.project)).decide(request.id, "allow", via="cli")
        await until(pilot, lambda: "result" in done)


async def test_always_allow_keeps_a_rule_that_decides_the_next_request_and_x_removes_it(
    hooked: Bridge,
) -> None:
    async with console(hooked) as (app, pilot):
        done = await at_window(pilot, app, hooked, "PermissionRequest-Bash")
        await pilot.press("s", "Y")  # all agents, then always allow
        await until(pilot, lambda: "result" in done)
        assert printed(done) == {"behavior": "allow"}
        rules = pane(app).rules
        assert [(r.behavior, r.tool, r.subject, r.agent) for r in rules] == [
            ("allow", "Bash", COMMAND, None)
        ]
        assert pane(app).rules_table.has(rules[0].id)
        again = await in_thread(lambda: hooked.send("PermissionRequest-Bash"))
        assert again.output["hookSpecificOutput"]["decision"] == {"behavior": "allow"}  # type: ignore[index]
        app.goto_pane("permissions")
        pane(app).rules_table.focus()
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: not pane(app).rules)
        assert Permissions(Project(hooked.project)).rules() == []


async def test_a_decision_made_elsewhere_closes_the_modal_saying_so(hooked: Bridge) -> None:
    async with console(hooked) as (app, pilot):
        done = await at_window(pilot, app, hooked, "PermissionRequest-Bash")
        modal = app.screen
        (request,) = pane(app).records.values()
        Permissions(Project(hooked.project)).decide(request.id, "deny", message="cli", via="cli")
        await until(pilot, lambda: modal.closing)
        assert "Decided elsewhere: denied by operator: cli" in shown(
            modal.query_one("#permission-note")
        )
        await pilot.press("y")  # too late: nothing more is written
        await until(pilot, lambda: "result" in done)
        assert printed(done) == {"behavior": "deny", "message": "cli"}


async def test_a_opens_the_older_of_a_request_and_a_blocking_question(
    hooked: Bridge,
) -> None:
    async with console(hooked) as (app, pilot):
        done = await requested(pilot, app, hooked, "PermissionRequest-Bash")
        asked = hooked.send_later("PreToolUse-AskUserQuestion")
        from tests.tui.test_claude_console import questions_pane

        await until(pilot, lambda: len(questions_pane(app).records) == 2)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("y")
        await until(pilot, lambda: "result" in done)
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "QuestionModal")
        await pilot.press("A", "A", "enter")
        await until(pilot, lambda: "result" in asked)


async def test_unreadable_files_are_rows_saying_why_and_a_restart_keeps_the_record(
    hooked: Bridge,
) -> None:
    (hooked.project / ".claude" / "state" / "permission-rules.json").write_text("{nope")
    hooked.send("PermissionRequest-Bash")  # no console: recorded as fallen through
    directory = hooked.paths.claude_questions
    (directory / "perm-broken.permission").write_text("[]")
    app = create_app(hooked.project, rescan_seconds=60)
    async with app.run_test(size=(100, 30)) as pilot:
        app.goto_pane("permissions")
        await pilot.pause()
        view = pane(app)
        assert "unreadable: expected a JSON object" in str(
            view.table.get_cell("perm-broken", "what")
        )
        title = shown(view.query_one("#permission-rules-title"))
        assert "permission-rules.json:" in title and "unreadable: not valid JSON" in title
        (fell,) = [r for r in view.records.values() if r.id != "perm-broken"]
        assert "fell through to Claude Code: no console was open" in fell.outcome
        app.agents_pane.select(KEY)
        app.goto_agent(KEY)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, AgentDetail))
        await until(pilot, lambda: bool(app.screen.query("#detail-permissions")))  # read after
        detail = shown(app.screen.query_one("#detail-permissions"))  # the window's first frame
        assert f"Bash {COMMAND}" in detail and "fell through" in detail


# -- snapshot ----------------------------------------------------------------------------------


@pytest.fixture
def snap_scene(clock: ManualClock) -> ManualClock:
    shutil.rmtree(SNAP_ROOT, ignore_errors=True)
    git.init_repo(SNAP_ROOT)
    build_scene(SNAP_ROOT, clock)
    return clock


async def open_scene_request(pilot: Pilot) -> None:
    """The scene's waiting Bash call in the permission window."""
    view = pane(pilot.app)  # type: ignore[arg-type]
    view.open_modal(view.records[PERMISSION_ID])
    await until(pilot, lambda: isinstance(pilot.app.screen, PermissionModal))
    await pilot.pause()


def test_snapshot_permission_modal_80x24(snap_scene: ManualClock, snap_compare: Callable) -> None:
    app = create_app(SNAP_ROOT, clock=snap_scene, watch=False, tick_seconds=0)
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_scene_request)


def test_snapshot_permissions_pane(snap_scene: ManualClock, snap_compare: Callable) -> None:
    async def show(pilot: Pilot) -> None:
        pilot.app.goto_pane("permissions")  # type: ignore[attr-defined]
        await pilot.pause()

    app = create_app(SNAP_ROOT, clock=snap_scene, watch=False, tick_seconds=0)
    assert snap_compare(app, terminal_size=(100, 24), run_before=show)
