"""Snapshots of the Pipelines pane (80x24 and wide), a pipeline's screen and a gate's
window, over the harness's own files with every file's time fixed and a manual clock
(ages read the same on every run), and one DOT that cannot be read."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.panes.pipelines_pane import LocalPipelinesPane
from runeconsole.tui.pipelines.gate_window import GateWindow
from runeconsole.tui.pipelines.screen import PipelineScreen
from tests.support.pipelines import (
    AT_GATE,
    PIPELINES,
    STEMS,
    WRITTEN,
    copy_scenario,
    make_writable,
)
from tests.support.polling import until

SIZES = [(80, 24), (150, 32)]
FILES_AT = datetime(2026, 11, 29, 1, 13, 0, tzinfo=UTC)
NOW = datetime(2026, 11, 29, 1, 20, 0, tzinfo=UTC)


def pipelines_scene(root: Path) -> None:
    """Every scenario's final files but gate-demo's, which waits at its gate; a DOT cut
    in the middle of a rewrite; every file's time fixed."""
    shutil_copy = [(WRITTEN, stem) for stem in STEMS if stem != "gate-demo"]
    for source, stem in [*shutil_copy, (AT_GATE, "gate-demo")]:
        copy_scenario(source, stem, root)
    (root / PIPELINES / "half-written.dot").write_text('digraph "PRD-HALF" {\n  start [shape=')
    make_writable(root)
    stamp = FILES_AT.timestamp()
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(Path(directory) / name, (stamp, stamp))


@pytest.fixture
def scene(snap_dir: Path) -> RuneConsole:
    root = snap_dir / "pipelines"
    root.mkdir(parents=True)
    pipelines_scene(root)
    return create_app(root, clock=ManualClock(NOW), watch=False, tick_seconds=0)


async def pane_loaded(pilot) -> None:
    pane = pilot.app.query_one(LocalPipelinesPane)
    await until(pilot, lambda: pane.loads)
    await pilot.press("8")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_pipelines_pane(snap_compare, scene: RuneConsole, size) -> None:
    assert snap_compare(scene, terminal_size=size, run_before=pane_loaded)


def test_snapshot_pipeline_screen(snap_compare, scene: RuneConsole) -> None:
    async def run_before(pilot) -> None:
        await pane_loaded(pilot)
        pilot.app.query_one(LocalPipelinesPane).select("gate-demo")
        await pilot.press("enter")
        app = pilot.app
        await until(pilot, lambda: isinstance(app.screen, PipelineScreen) and app.screen.shows)
        app.screen.table.move_cursor(row=2)
        await pilot.pause()

    assert snap_compare(scene, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_gate_window(snap_compare, scene: RuneConsole) -> None:
    async def run_before(pilot) -> None:
        await pane_loaded(pilot)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(pilot.app.screen, GateWindow))
        await pilot.pause()

    assert snap_compare(scene, terminal_size=(80, 24), run_before=run_before)
