"""The console over real tmux agents (private server): columns, keys, problems view."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.core.files import atomic_write_bytes
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.service import Supervisor
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.agent_detail import AgentDetail
from runeconsole.tui.modals.agent_peek import AgentPeek
from runeconsole.tui.modals.confirm import ConfirmScreen
from tests.support.cli import cli_env
from tests.support.polling import until
from tests.support.tmux import fake_agent, wait_for_monitor

TALISMAN = b"""\
runeconsole:
  supervisor:
    monitor_interval_seconds: 0.3
    handoff_timeout_seconds: 5
"""


@pytest.fixture
def fleet_root(project: Path, tmux_socket: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RUNECONSOLE_TMUX_SOCKET", tmux_socket)
    atomic_write_bytes(project / ".claude" / "talisman.yml", TALISMAN)
    return project


RUNNING = ("active", "busy", "idle", "waiting", "compacting")  # an active agent's status cell


def cell(app: RuneConsole, key: str, column: str) -> str:
    return str(app.agents_pane.table.get_cell(key, column))


def status(root: Path, key: str) -> str:
    return Registry(Project(root)).get(key).status


async def test_columns_follow_the_agents_screen_and_hook(fleet_root: Path) -> None:
    supervisor = Supervisor(Project(fleet_root))
    supervisor.spawn("worker", "a", fake_agent("worker-a", fleet_root, "--context", "40"))
    supervisor.spawn("worker", "b", fake_agent("worker-b", fleet_root, "--ask-every", "1"))
    app = create_app(fleet_root, monitor=True, rescan_seconds=60)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: "%" in cell(app, "worker-a", "context"))
        assert cell(app, "worker-a", "phase")  # from the hook the agent keeps
        await until(pilot, lambda: cell(app, "worker-b", "wait") in ("?", "!"))
        problems = app.query_one("#problems-pane")
        await until(pilot, lambda: any(k.startswith("worker-b/") for k in problems.records))


async def test_killed_session_turns_red_and_r_respawns_it(
    fleet_root: Path, tmux_socket: str
) -> None:
    supervisor = Supervisor(Project(fleet_root))
    first = supervisor.spawn("worker", "a", fake_agent("worker-a", fleet_root))
    app = create_app(fleet_root, monitor=True, rescan_seconds=60)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.has("worker-a"))
        subprocess.run(
            ["tmux", "-L", tmux_socket, "kill-session", "-t", first.tmux_session],
            check=True,
            timeout=10,
        )
        await until(pilot, lambda: cell(app, "worker-a", "status") == "crashed")
        assert app.agents_pane.records["worker-a"].liveness == "red"
        await pilot.press("2")
        problems = app.query_one("#problems-pane")
        await until(pilot, lambda: "worker-a/crashed" in problems.records)
        await pilot.press("enter")
        assert app.agents_pane.table.cursor_key() == "worker-a"
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        # Active again: the cell says what it does (busy, idle…) once the monitor reads it.
        await until(pilot, lambda: cell(app, "worker-a", "status") in RUNNING)
        predecessor = cell(app, "worker-a", "predecessor")
        assert predecessor == first.record.get("agent_id")


async def test_x_kills_after_confirmation_and_n_cancels(fleet_root: Path) -> None:
    Supervisor(Project(fleet_root)).spawn("worker", "a", fake_agent("worker-a", fleet_root))
    app = create_app(fleet_root, monitor=True, rescan_seconds=60)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.has("worker-a"))
        app.agents_pane.select("worker-a")
        await pilot.press("x", "n")
        await pilot.pause(0.5)
        assert status(fleet_root, "worker-a") == "active"
        await pilot.press("x", "y")
        await until(pilot, lambda: cell(app, "worker-a", "status") == "terminated")


async def test_h_hands_off_and_a_successor_takes_over(fleet_root: Path) -> None:
    supervisor = Supervisor(Project(fleet_root))
    first = supervisor.spawn("worker", "a", fake_agent("worker-a", fleet_root))
    app = create_app(fleet_root, monitor=True, rescan_seconds=60)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.has("worker-a"))
        app.agents_pane.select("worker-a")
        await pilot.press("h", "y")
        await until(
            pilot, lambda: cell(app, "worker-a", "predecessor") == first.record.get("agent_id")
        )
        assert cell(app, "worker-a", "status") in RUNNING


async def test_g_outside_tmux_says_how_to_attach_and_detail_shows_the_pane(
    fleet_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    Supervisor(Project(fleet_root)).spawn("worker", "a", fake_agent("worker-a", fleet_root))
    app = create_app(fleet_root, monitor=True, rescan_seconds=60)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.has("worker-a"))
        app.agents_pane.select("worker-a")
        await pilot.press("g")
        await pilot.pause()
        assert any("attach" in n.message for n in app._notifications)
        await pilot.press("enter")
        assert isinstance(app.screen, AgentDetail)
        # The monitor's worker runs until the console closes: wait for the pane, not for it.
        peek = app.screen.query_one(AgentPeek)
        await until(pilot, lambda: peek.last is not None)
        screen = peek.parts().screen
        shown = screen.plain if screen is not None else ""
        assert "fake Claude Code" in shown or "Context left" in shown


async def test_console_follows_a_monitor_already_running(
    fleet_root: Path, tmux_socket: str
) -> None:
    first = Supervisor(Project(fleet_root)).spawn(
        "worker", "a", fake_agent("worker-a", fleet_root, "--context", "40")
    )
    outside = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "monitor", "--root", str(fleet_root),
         "--interval", "0.3"],
        env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_monitor(Supervisor(Project(fleet_root)), outside.pid)
        app = create_app(fleet_root, monitor=True, rescan_seconds=60)
        async with app.run_test(size=(120, 30)) as pilot:
            # Its columns come from the other monitor's saved passes.
            await until(pilot, lambda: "%" in cell(app, "worker-a", "context"))
            assert app.fleet.monitoring is False
            subprocess.run(
                ["tmux", "-L", tmux_socket, "kill-session", "-t", first.tmux_session],
                check=True,
                timeout=10,
            )
            await until(pilot, lambda: cell(app, "worker-a", "status") == "crashed")
            assert app.fleet.monitoring is False
            outside.kill()  # the console takes over
            await until(pilot, lambda: app.fleet.monitoring)
    finally:
        outside.kill()
        outside.wait(timeout=10)
