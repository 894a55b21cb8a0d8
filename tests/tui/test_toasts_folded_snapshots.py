"""Where the operator reads, toasts fold to one line at the bottom right, over the footer's
end: the review's diff, a conversation and the merge queue's log stay whole, at 80x24 and
wide, with a burst of six toasts up (``tui/support/toast_shelf.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.review_scene import fixed_repo
from runeconsole.demo.scene import build_scene
from runeconsole.tui.console.app import RuneConsole, create_app
from tests.support.paths import SNAP
from tests.tui.conversation_fixtures import KEY, conversation_agent, sent
from tests.tui.test_conversation_snapshots import (
    open_conversation,
    utc,  # noqa: F401  (autouse: times in UTC)
)
from tests.tui.test_merge_queue_pane import build_project, open_queue
from tests.tui.test_review_console import on_the_comment
from tests.tui.test_toasts import tell

SIZES = [(80, 24), (150, 40)]


def console(root: Path, clock: ManualClock) -> RuneConsole:
    return create_app(root, clock=clock, watch=False, tick_seconds=0)


async def told(pilot: Pilot[None]) -> None:
    """Six toasts, as a busy moment brings them (the newest: a warning)."""
    app = pilot.app
    assert isinstance(app, RuneConsole)
    await tell(pilot, app)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_the_review_with_toasts_up(
    snap_compare: Callable[..., bool], snap_dir: Path, size: tuple[int, int]
) -> None:
    root = SNAP / "review"
    fixed_repo(root)
    clock = ManualClock()
    build_scene(root, clock)

    async def before(pilot: Pilot[None]) -> None:
        await on_the_comment(pilot)
        await told(pilot)

    assert snap_compare(console(root, clock), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES)
def test_a_conversation_with_toasts_up(
    snap_compare: Callable[..., bool], snap_dir: Path, size: tuple[int, int]
) -> None:
    root = SNAP / "conversation"
    git.init_repo(root)
    conversation_agent(root)
    sent(root, KEY, "Please do the migration")

    async def before(pilot: Pilot[None]) -> None:
        await told(pilot)  # up before the conversation opens: it folds them as it shows
        await open_conversation(pilot)

    assert snap_compare(console(root, ManualClock()), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES)
def test_the_merge_queue_with_toasts_up(
    snap_compare: Callable[..., bool], snap_dir: Path, size: tuple[int, int]
) -> None:
    root = SNAP / "merge-queue"
    clock = build_project(root)

    async def before(pilot: Pilot[None]) -> None:
        pane = await open_queue(pilot)
        pane.table.move_cursor(row=4)  # the failed entry: its reason in the detail below
        await told(pilot)

    assert snap_compare(console(root, clock), terminal_size=size, run_before=before)
