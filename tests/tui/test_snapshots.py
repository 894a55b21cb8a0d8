"""Snapshot tests of the console (deterministic: relative root, manual clock, no watcher)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.scene import build_scene
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.agent_peek import AgentPeek
from tests.support.paths import SNAP
from tests.support.polling import until
from tests.tui.test_toasts import tell

SNAP_ROOT = SNAP / "agents"


@pytest.fixture
def scene_app(snap_dir: Path) -> RuneConsole:
    git.init_repo(SNAP_ROOT)
    clock = ManualClock()
    build_scene(SNAP_ROOT, clock)
    return create_app(SNAP_ROOT, clock=clock, watch=False, tick_seconds=0)


def test_agents_80x24(snap_compare, scene_app: RuneConsole) -> None:
    assert snap_compare(scene_app, terminal_size=(80, 24))


def test_agents_wide(snap_compare, scene_app: RuneConsole) -> None:
    assert snap_compare(scene_app, terminal_size=(150, 32))


def test_agent_detail(snap_compare, scene_app: RuneConsole) -> None:
    async def open_detail(pilot) -> None:
        pilot.app.agents_pane.select("orchestrator-billing")
        await pilot.press("enter")
        await until(pilot, lambda: bool(pilot.app.screen.query(AgentPeek)))
        peek = pilot.app.screen.query_one(AgentPeek)
        await until(pilot, lambda: peek.last is not None)  # read once the window is drawn
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(scene_app, terminal_size=(100, 34), run_before=open_detail)


def test_the_filter_line_opens_over_the_last_row_and_the_footer_keeps_the_panes_keys(
    snap_compare, scene_app: RuneConsole
) -> None:
    async def type_filter(pilot: Pilot) -> None:
        await pilot.press("slash", "a", "u")
        await pilot.pause()

    assert snap_compare(scene_app, terminal_size=(80, 24), run_before=type_filter)


def test_help(snap_compare, scene_app: RuneConsole) -> None:
    assert snap_compare(scene_app, terminal_size=(80, 24), press=["question_mark"])


def test_toasts_at_80x24(snap_compare, scene_app: RuneConsole) -> None:
    """Six at once: three shown, the oldest four folded into one, a third of the width."""

    async def news(pilot: Pilot) -> None:
        await tell(pilot, scene_app)

    assert snap_compare(scene_app, terminal_size=(80, 24), run_before=news)
