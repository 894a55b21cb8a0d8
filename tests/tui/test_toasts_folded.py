"""Where the operator reads (the review, a conversation, the merge queue) the toasts fold
to one line: the newest's first line after how many more are up, as severe as the worst;
elsewhere they are shown whole again, each for the time it has left (the look:
``test_toasts_folded_snapshots.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from textual.app import ComposeResult
from textual.pilot import Pilot
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.scene import build_scene
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.panes.pane import AGENTS, MERGE_QUEUE
from runeconsole.tui.support.toast_shelf import TOASTS_FOLDED, Note, ToastShelf, one_line
from tests.tui.test_toasts import NEWS, tell, toasts

NEWEST = "orchestrator-auth: 12% context left, time to checkpoint"


class Reading(Screen[None]):
    """A screen the operator reads, as the review and the conversation are."""

    DEFAULT_CLASSES = TOASTS_FOLDED

    def compose(self) -> ComposeResult:
        yield Static("text")


class Window(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static("a window")


def scene(project: Path, clock: ManualClock) -> RuneConsole:
    build_scene(project, clock)
    return create_app(project, clock=clock, watch=False, tick_seconds=0)


async def settled(pilot: Pilot[None]) -> None:
    for _ in range(3):
        await pilot.pause()


def test_one_line_is_the_newest_after_how_many_more_as_severe_as_the_worst() -> None:
    now = [0.0]
    shelf = ToastShelf(limit=3, clock=lambda: now[0])
    shelf.add(Note("Agents", "worker-schema crashed", "error"), 30)
    shelf.add(Note("Merge queue", "feat/api-v2 landed\nin 2m"), 5)
    line, left = one_line(shelf.shown, now[0])
    assert (line.title, line.message, line.severity) == (
        "",
        "+1 · Merge queue: feat/api-v2 landed",  # its first line, whole (the screen cuts it)
        "error",
    )
    assert left == 30 and not line.markup  # up as long as the longest it stands for


def test_refolding_takes_the_toasts_down_and_puts_up_what_the_screen_shows() -> None:
    now = [0.0]
    shelf = ToastShelf(limit=3, clock=lambda: now[0])
    assert shelf.refold(True) == (False, [])  # nothing up: nothing to do
    shelf.add(Note("t", "m0"), 10)
    clear, shown = shelf.add(Note("t", "m1"), 20)
    assert clear and [(n.message, left) for n, left in shown] == [("+1 · t: m1", 20)]
    assert shelf.refold(True) == (False, [])  # already so
    now[0] = 5
    clear, shown = shelf.refold(False)
    assert clear and [(n.message, left) for n, left in shown] == [("m0", 5), ("m1", 15)]
    now[0] = 12  # m0 is gone: the line stands for m1 alone
    clear, shown = shelf.refold(True)
    assert clear and [(n.message, left) for n, left in shown] == [("t: m1", 8)]


async def test_the_merge_queue_pane_folds_the_toasts_and_the_agents_pane_shows_them_whole(
    project: Path, clock: ManualClock
) -> None:
    app = scene(project, clock)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await tell(pilot, app)
        assert len(toasts(app)) == 3
        app.goto_pane(MERGE_QUEUE)
        await settled(pilot)
        assert app.screen.has_class(TOASTS_FOLDED)
        assert toasts(app) == [f"+5 · Agents: {NEWEST}"]
        assert app.screen.query("Toast").first().has_class("-error")  # the worst of them
        assert app.screen.query("Toast").first().region.height == 1
        app.notify("feat/schema landed", title="Merge queue", timeout=60)
        await settled(pilot)
        assert toasts(app) == ["+6 · Merge queue: feat/schema landed"]
        app.goto_pane(AGENTS)
        await settled(pilot)
        assert not app.screen.has_class(TOASTS_FOLDED)
        shown = toasts(app)
        assert len(shown) == 3 and shown[0].startswith("+5 earlier\n")
        assert shown[1:] == [f"Agents\n{NEWEST}", "Merge queue\nfeat/schema landed"]


@asynccontextmanager
async def reading(
    project: Path, clock: ManualClock
) -> AsyncIterator[tuple[RuneConsole, Pilot[None]]]:
    """The console at 80x24, a screen the operator reads shown over it."""
    app = scene(project, clock)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        app.push_screen(Reading())
        await settled(pilot)
        yield app, pilot


async def test_a_reading_screen_folds_them_a_window_over_it_shows_them_whole(
    project: Path, clock: ManualClock
) -> None:
    async with reading(project, clock) as (app, pilot):
        await tell(pilot, app)
        assert toasts(app) == [f"+5 · Agents: {NEWEST}"]
        app.push_screen(Window())
        await settled(pilot)
        assert len(toasts(app)) == 3
        app.pop_screen()
        await settled(pilot)
        assert toasts(app) == [f"+5 · Agents: {NEWEST}"]
        app.pop_screen()
        await settled(pilot)
        assert len(toasts(app)) == 3


async def test_toasts_coming_one_by_one_on_a_reading_screen_leave_no_holder_behind(
    project: Path, clock: ManualClock
) -> None:
    async with reading(project, clock) as (app, pilot):
        for round_ in range(4):
            for title, message, _ in NEWS:
                app.notify(f"{message} ({round_})", title=title, timeout=60)
                await pilot.pause()
        await settled(pilot)
        assert toasts(app) == [f"+23 · Agents: {NEWEST} (3)"]
        # The line up, and at most the last one taken down, swept at the next.
        assert len(app.screen.query("ToastHolder")) <= 2
