"""The Merge queue pane with batches: the queue's figures, the batches at work (a
bisection's halves testing side by side), priorities, processing the whole queue from the
console; snapshots at 80x24 and wide."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.message import Message

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.merge_queue import build_batches
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.priority_modal import PriorityScreen
from runeconsole.tui.panes.merge_queue_processing import QueueProcessing
from tests.support.console import settle
from tests.support.merge_batches import make_branches
from tests.support.merge_queue import make_queue, queue_file, write_talisman
from tests.support.paths import SNAP
from tests.support.suspended import dead_pid
from tests.tui.test_merge_queue_pane import console, open_queue

BATCHED = {"batch_max": 4, "parallel_runs": 2}


def build_project(root: Path) -> ManualClock:
    """A queue mid-run: landed, failed, a red batch's halves testing, three waiting."""
    git.init_repo(root)
    write_talisman(root, "true", **BATCHED)
    clock = ManualClock()
    build_batches(root, clock)
    return clock


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Path, ManualClock]:
    root = tmp_path / "project"
    return root, build_project(root)


async def test_the_header_and_the_batches_show_the_run_as_the_file_records_it(scene) -> None:
    root, clock = scene
    async with console(root, clock).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        header = str(pane.query_one("#mq-header").render())
        batches = str(pane.query_one("#mq-batches").render())
        assert "depth 7" in header and "wait p50" in header and "landed/h" in header
        assert "20% failed" in header
        assert "b4 half 1 of b1 · 2 entries · test 1m12s · slot 1 · on main" in batches
        assert "b5 half 2 of b1 · 2 entries · test 40s · slot 2 · on b4" in batches
        clock.advance(10)
        pane.tick()
        await pilot.pause()
        assert "test 1m22s" in str(pane.query_one("#mq-batches").render())
        pending = [e.branch for e in pane.state.pending()]
        assert pending == ["feat/hotfix-login", "feat/docs-typos", "feat/metrics"]


async def test_batches_a_dead_processor_left_are_said_to_be_so(scene) -> None:
    root, clock = scene
    path = root / ".claude" / "state" / "merge-queue.json"
    data = json.loads(path.read_text())
    for batch in data["batches"]:
        batch["pid"] = dead_pid()
    path.write_text(json.dumps(data))
    async with console(root, clock).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        shown = str(pane.query_one("#mq-batches").render())
        assert "left by a processor that is gone" in shown


async def test_the_priority_key_puts_the_selected_entry_in_another_lane(scene) -> None:
    root, clock = scene
    app = console(root, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        metrics = next(e for e in pane.state.pending() if e.branch == "feat/metrics")
        pane.table.move_to(metrics.entry_id)
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, PriorityScreen)
        await pilot.press("h")
        await settle(pilot)
        stored = next(e for e in queue_file(root)["entries"] if e["branch"] == "feat/metrics")
        assert stored["priority"] == "high"
        assert [e.branch for e in pane.state.pending()][1] == "feat/metrics"
        assert pane.table.cursor_key() == metrics.entry_id
        pane.table.move_to(pane.state.entries[0].entry_id)  # a landed entry: no lane to change
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert not isinstance(app.screen, PriorityScreen)


async def test_shift_p_processes_the_whole_queue_in_batches_watching_each(
    repo: Path, clock
) -> None:
    make_branches(repo, {f"w{n}": "good" for n in range(5)})
    write_talisman(repo, "echo checked", **BATCHED)
    queue = make_queue(repo, clock, ["echo", "checked"], **BATCHED)
    for n in range(5):
        queue.add(f"feat/w{n}")
    app = console(repo, clock)
    seen: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        pane = await open_queue(pilot)
        await pilot.press("P")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await app.workers.wait_for_complete()  # the rescan that follows
        await pilot.pause()
        log = "\n".join(line.plain for line in pane.log_lines())
        assert pane.processing is None
        steps = {
            (m.event.batch, m.event.message.split(" (")[0])
            for m in seen
            if isinstance(m, QueueProcessing.Stepped)
        }
        assert {("b1", "test: passed"), ("b2", "test: passed")} <= steps
        assert "merged feat/w4" in log and "merge: ok" in log
        assert [e.status for e in pane.state.entries] == ["completed"] * 5
        assert not pane.query_one("#mq-batches").display  # nothing at work any more


# -- snapshots --------------------------------------------------------------------------------

SNAP_ROOT = SNAP / "merge-queue-batches"


@pytest.fixture
def snap_scene(snap_dir: Path) -> tuple[Path, ManualClock]:
    return SNAP_ROOT, build_project(SNAP_ROOT)


@pytest.mark.parametrize("size", [(80, 24), (140, 32)])
def test_snapshot_merge_queue_with_batches(snap_compare, snap_scene, size) -> None:
    root, clock = snap_scene

    async def run_before(pilot) -> None:
        pane = await open_queue(pilot)
        pane.table.move_cursor(row=5)  # a low entry raised by waiting
        await pilot.pause()

    assert snap_compare(console(root, clock), terminal_size=size, run_before=run_before)


def test_snapshot_priority_window(snap_compare, snap_scene) -> None:
    root, clock = snap_scene

    async def run_before(pilot) -> None:
        pane = await open_queue(pilot)
        pane.table.move_cursor(row=6)
        await pilot.press("exclamation_mark")
        await pilot.pause()

    assert snap_compare(console(root, clock), terminal_size=(80, 24), run_before=run_before)
