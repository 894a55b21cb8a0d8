"""Toasts at 80x24: never more than three at once, the oldest folded into one that says
how many and lists them (the look: ``test_snapshots.py``)."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widget import Widget

from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.scene import build_scene
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.support.toast_shelf import Note, ToastShelf

NEWS = [
    ("Agents", "worker-schema crashed", "error"),
    ("Budget", "worker-tokens: 82% of per_day_usd", "warning"),
    ("Questions", "task-11 (rune-smith-4) asks: Which queue?", "information"),
    ("Merge queue", "feat/api-v2 landed", "information"),
    ("Message", "sent to worker-parser: “run the tests”", "information"),
    ("Agents", "orchestrator-auth: 12% context left, time to checkpoint", "warning"),
]


def toasts(app: RuneConsole) -> list[str]:
    """The toasts on screen, as they read."""
    found: list[Widget] = list(app.screen.query("Toast"))
    return [str(toast.render()) for toast in found]


async def tell(pilot: Pilot, app: RuneConsole) -> None:
    for title, message, severity in NEWS:
        app.notify(message, title=title, severity=severity, timeout=60)  # type: ignore[arg-type]
    await pilot.pause()
    await pilot.pause()


async def test_a_burst_of_news_shows_three_toasts_the_oldest_folded(
    project: Path, clock: ManualClock
) -> None:
    build_scene(project, clock)
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await tell(pilot, app)
        shown = toasts(app)
        assert len(shown) == 3
        assert shown[0] == (
            "+4 earlier\n"
            "Agents: worker-schema crashed\n"  # one line each, cut to fit a narrow toast
            "Budget: worker-tokens: 82% of…\n"
            "…and 2 more"
        )
        assert shown[1:] == [
            "Message\nsent to worker-parser: “run the tests”",
            "Agents\norchestrator-auth: 12% context left, time to checkpoint",
        ]
        # The fold is as severe as the worst it stands for.
        assert app.screen.query("Toast").first().has_class("-error")


def test_a_fold_is_up_as_long_as_the_longest_it_holds_and_folds_again() -> None:
    now = [0.0]
    shelf = ToastShelf(limit=3, clock=lambda: now[0])
    for n, seconds in enumerate((30, 5, 5)):
        up = Note("t", f"m{n}", expires=seconds)
        assert shelf.add(Note("t", f"m{n}"), seconds) == (False, [(up, seconds)])
    clear, shown = shelf.add(Note("t", "m3"), 5)
    assert clear and [n.title for n, _ in shown] == ["+2 earlier", "t", "t"]
    assert shown[0][1] == 30  # the longest of the two folded
    now[0] = 10  # the newest two are gone: room again
    assert shelf.add(Note("t", "m4"), 5)[0] is False
    assert shelf.add(Note("t", "m5"), 5)[0] is False
    clear, shown = shelf.add(Note("t", "m6"), 5)
    assert clear and shown[0][0].title == "+3 earlier"  # the fold folded again
    assert shown[0][0].message.splitlines() == ["t: m0", "t: m1", "t: m4"]
    assert [n.message for n, _ in shown[1:]] == ["m5", "m6"]
    for n in range(7, 10):
        shelf.add(Note("t", f"m{n}"), 5)
    fold = shelf.shown[0]
    assert fold.title == "+6 earlier"  # three lines at most: the rest counted
    assert fold.message.splitlines() == ["t: m0", "t: m1", "…and 4 more"]


async def test_folding_again_and_again_leaves_no_empty_toast_holder_behind(
    project: Path, clock: ManualClock
) -> None:
    """Textual takes a cleared toast down but leaves the holder it was mounted in; a
    console that folds all day would keep every one of them mounted."""
    build_scene(project, clock)
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        for round_ in range(5):
            for title, message, _ in NEWS:  # one at a time, as news comes
                app.notify(f"{message} ({round_})", title=title, timeout=60)
                await pilot.pause()
        await pilot.pause()
        holders = list(app.screen.query("ToastHolder"))
        assert len(toasts(app)) == 3
        # The three up, and at most the last fold's three, swept at the next fold.
        assert len(holders) <= 3 + 3, f"{len(holders)} holders for 3 toasts"
