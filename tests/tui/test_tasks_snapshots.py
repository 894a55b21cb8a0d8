"""Snapshots of the Tasks pane, the Compare view, its pick confirmation and the Worktrees
view, at 80x24 and wide, from the fixed scene of ``tasks_scene.py`` (manual clock, fixed
commit dates: the same commit ids on every run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.tasks_scene import TASK, build_tasks
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.panes.tasks_pane import TasksPane
from runeconsole.tui.tasks.compare import CompareScreen
from runeconsole.tui.tasks.confirms import LossConfirm
from runeconsole.tui.tasks.worktrees import WorktreesScreen
from tests.support.paths import SNAP
from tests.support.polling import until

SNAP_ROOT = SNAP / "tasks"
SIZES = [(80, 24), (150, 32)]
DATE = "2026-02-26T11:00:00Z"


@pytest.fixture
def scene(snap_dir: Path, monkeypatch: pytest.MonkeyPatch) -> RuneConsole:
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, DATE)
    clock = ManualClock()
    build_tasks(SNAP_ROOT, clock)
    return create_app(SNAP_ROOT, clock=clock, watch=False, tick_seconds=0)


async def open_compare(pilot, row: int) -> None:
    app = pilot.app
    await pilot.press("7")
    app.query_one(TasksPane).select(TASK)
    await pilot.press("c")
    await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.reads)
    app.screen.table.move_cursor(row=row)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_tasks_pane(snap_compare, scene: RuneConsole, size) -> None:
    assert snap_compare(scene, terminal_size=size, press=["7"])


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_compare(snap_compare, scene: RuneConsole, size) -> None:
    async def run_before(pilot) -> None:
        await open_compare(pilot, row=1)  # #2: its tests failed, their output shown

    assert snap_compare(scene, terminal_size=size, run_before=run_before)


def test_snapshot_pick_confirmation_names_what_would_be_lost(snap_compare, scene) -> None:
    async def run_before(pilot) -> None:
        await open_compare(pilot, row=0)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(pilot.app.screen, LossConfirm))
        await pilot.pause()

    assert snap_compare(scene, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_worktrees(snap_compare, scene: RuneConsole, size) -> None:
    async def run_before(pilot) -> None:
        app = pilot.app
        await pilot.press("7", "w")
        await until(pilot, lambda: isinstance(app.screen, WorktreesScreen) and app.screen.reads)
        app.screen.table.move_cursor(row=1)
        await pilot.pause()

    assert snap_compare(scene, terminal_size=size, run_before=run_before)
