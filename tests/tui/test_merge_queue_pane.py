"""The Merge queue pane driven with Pilot, and deterministic snapshots."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.merge_queue import build_queue
from runeconsole.services.merge_queue import ConflictPredictor
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.panes.merge_queue_pane import MergeQueuePane
from tests.support.console import settle
from tests.support.merge_queue import queue_file, write_talisman
from tests.support.paths import SNAP


def build_project(root: Path) -> ManualClock:
    """The demo queue: four pending (the last predicted to conflict), one failed."""
    git.init_repo(root)
    write_talisman(root, "true")
    clock = ManualClock()
    build_queue(root, clock)
    return clock


def console(root: Path, clock: ManualClock) -> RuneConsole:
    return create_app(root, clock=clock, watch=False, tick_seconds=0)


async def open_queue(pilot) -> MergeQueuePane:
    await pilot.press("5")
    await pilot.app.workers.wait_for_complete()  # the first scan: predictions
    await pilot.pause()
    return pilot.app.query_one(MergeQueuePane)


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Path, ManualClock]:
    root = tmp_path / "project"
    return root, build_project(root)


async def test_rows_follow_queue_order_and_moves(fleet) -> None:
    root, clock = fleet
    app = console(root, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_queue(pilot)
        order = pane.table.keys()
        pending = [e.entry_id for e in pane.state.pending()]
        assert order[:4] == pending and len(order) == 5
        assert pane.predictions[pending[3]].with_entries == {pending[2]: ["src/api.py"]}
        pane.table.move_cursor(row=3)
        await pilot.press("plus")  # written by a worker, under the queue's lock
        await settle(pilot)
        assert [e["branch"] for e in queue_file(root)["entries"][:4]] == [
            "feat/auth-tokens",
            "feat/search-index",
            "feat/api-v2",
            "feat/billing-api",
        ]
        assert pane.table.keys()[2] == pending[3]
        assert pane.table.cursor_key() == pending[3]
        await pilot.press("minus")
        await settle(pilot)
        assert pane.table.keys()[:4] == pending


class ThreadNoting(ConflictPredictor):
    """The real predictor, noting whether each call ran on the UI (main) thread."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, "main")
        self.on_ui_thread: list[bool] = []

    def predict(self, state):
        self.on_ui_thread.append(threading.current_thread() is threading.main_thread())
        return super().predict(state)


async def test_actions_leave_predictions_to_a_worker(fleet) -> None:
    root, clock = fleet
    async with console(root, clock).run_test(size=(120, 30)) as pilot:
        pane = await open_queue(pilot)
        pane.queue.predictor = noting = ThreadNoting(root)
        pane.table.move_cursor(row=3)
        await pilot.press("plus")
        await pilot.press("space")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert noting.on_ui_thread and not any(noting.on_ui_thread)
        moved = pane.state.pending()[2].entry_id
        assert pane.predictions[moved].with_entries == {}  # recomputed in the new order


async def test_space_pauses_and_resumes(fleet) -> None:
    root, clock = fleet
    async with console(root, clock).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        await pilot.press("space")
        await settle(pilot)
        assert queue_file(root)["paused"] is True
        assert "PAUSED" in str(pane.query_one("#mq-header").render())
        await pilot.press("space")
        await settle(pilot)
        assert queue_file(root)["paused"] is False


async def test_failed_entry_shows_reason_and_files_then_retry(fleet) -> None:
    root, clock = fleet
    async with console(root, clock).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        pane.table.move_cursor(row=4)
        await pilot.pause()
        detail = str(pane.query_one("#mq-detail").render())
        assert "reason: conflict" in detail
        assert "migrations/0002.sql, src/db.py" in detail
        await pilot.press("r")
        await settle(pilot)
        assert [e["status"] for e in queue_file(root)["entries"]].count("failed") == 0


async def test_remove_asks_first(fleet) -> None:
    root, clock = fleet
    async with console(root, clock).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        first = pane.table.cursor_key()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert len(queue_file(root)["entries"]) == 5
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert first not in {e["entry_id"] for e in queue_file(root)["entries"]}
        assert not pane.table.has(first)


async def test_p_processes_the_head_after_confirmation_showing_steps(fleet) -> None:
    root, clock = fleet
    app = console(root, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        head = pane.state.pending()[0].entry_id
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.processing is None
        await app.workers.wait_for_complete()  # the rescan that follows
        await pilot.pause()
        log = "\n".join(line.plain for line in pane.log_lines())
        assert "rebase: ok" in log and "merge: ok" in log and "merged feat/auth-tokens" in log
        assert pane.state.find(head).status == "completed"
        assert (root / "src" / "auth.py").read_text() == "TOKENS = 1\n"


# -- snapshots --------------------------------------------------------------------------------

SNAP_ROOT = SNAP / "merge-queue"


@pytest.fixture
def snap_project(snap_dir: Path) -> tuple[Path, ManualClock]:
    return SNAP_ROOT, build_project(SNAP_ROOT)


@pytest.mark.parametrize("size", [(80, 24), (140, 32)])
def test_snapshot_merge_queue(snap_compare, snap_project, size) -> None:
    root, clock = snap_project

    async def run_before(pilot) -> None:
        pane = await open_queue(pilot)
        pane.table.move_cursor(row=4)
        await pilot.pause()

    assert snap_compare(console(root, clock), terminal_size=size, run_before=run_before)


def test_snapshot_confirm_process(snap_compare, snap_project) -> None:
    root, clock = snap_project

    async def run_before(pilot) -> None:
        await open_queue(pilot)
        await pilot.press("p")
        await pilot.app.workers.wait_for_complete()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(console(root, clock), terminal_size=(80, 24), run_before=run_before)


async def test_a_filter_typed_on_the_queue_narrows_it_and_escape_brings_every_entry_back(
    fleet,
) -> None:
    root, clock = fleet
    app = console(root, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_queue(pilot)
        await pilot.press("slash", *"billing")
        await settle(pilot)
        shown = pane.table.keys()
        assert [pane.state.find(k).branch for k in shown] == ["feat/billing-api"]
        await pilot.press("escape")
        await settle(pilot)
        assert len(pane.table.keys()) == 5 and pane.filter_text == ""
