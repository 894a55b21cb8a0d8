"""Regenerate screenshots/*.svg from the demo scene: ``python scripts/screenshots.py``.

The scene is built at a fixed path with a manual clock, so the pictures change
only when the console does.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.claude_scene import ASK_TASK, PERMISSION_ID
from runeconsole.demo.fleet_scene import build_fleet_scene
from runeconsole.demo.merge_queue import build_queue
from runeconsole.demo.scene import build_scene
from runeconsole.demo.suspended import build_scene as build_suspended
from runeconsole.tui.app import create_app
from runeconsole.tui.fleet_console.app import create_fleet_app
from runeconsole.tui.merge_queue_pane import MergeQueuePane
from runeconsole.tui.pane import LivePane
from runeconsole.tui.permissions_pane import PermissionsPane
from runeconsole.tui.questions_pane import QuestionsPane
from runeconsole.tui.suspended_pane import SuspendedPane

os.environ.setdefault("RUNECONSOLE_TMUX_SOCKET", "runeconsole-screenshots")  # never the user's
OUT = Path(__file__).resolve().parents[1] / "screenshots"
SCENE_ROOT = Path("/tmp/runeconsole-demo/shop")


async def settle(pilot: Pilot) -> None:
    """Wait for the panes' workers; a rescan replaces (cancels) the one it supersedes."""
    while True:
        try:
            await pilot.app.workers.wait_for_complete()
            return
        except WorkerCancelled:
            continue


async def _agent_detail(pilot: Pilot) -> None:
    pilot.app.agents_pane.select("orchestrator-billing")
    await pilot.press("enter")
    await settle(pilot)


async def _filter(pilot: Pilot) -> None:
    await pilot.press("slash", *"worker")


async def _show_scanned(pilot: Pilot, pane_id: str, pane_type: type[LivePane]) -> LivePane:
    """Show a pane once it has read what was just built (its scan runs in a worker)."""
    pilot.app.goto_pane(pane_id)  # type: ignore[attr-defined]
    pane = pilot.app.query_one(pane_type)
    pane.rescan()
    await settle(pilot)
    return pane


async def _merge_queue(pilot: Pilot) -> None:
    build_queue(SCENE_ROOT, pilot.app.clock)  # type: ignore[attr-defined]
    pane = await _show_scanned(pilot, "merge-queue", MergeQueuePane)
    pane.table.move_cursor(row=4)  # type: ignore[attr-defined] # the failed entry: reason, files


async def _problems(pilot: Pilot) -> None:
    pilot.app.goto_pane("problems")  # type: ignore[attr-defined]
    await settle(pilot)


async def _suspended(pilot: Pilot) -> None:
    build_suspended(SCENE_ROOT, pilot.app.clock)  # type: ignore[attr-defined]
    await _show_scanned(pilot, "suspended", SuspendedPane)


async def _questions(pilot: Pilot) -> None:
    pilot.app.goto_pane("questions")  # type: ignore[attr-defined]


async def _question_modal(pilot: Pilot) -> None:
    await _questions(pilot)
    await pilot.press("a")


async def _question_call(pilot: Pilot) -> None:
    """A Claude Code AskUserQuestion call: its first question answered, the multi-select
    second one with two options chosen."""
    await _questions(pilot)
    await pilot.pause()
    pane = pilot.app.query_one(QuestionsPane)
    pane.open_modal(pane.open[f"claude-code/{ASK_TASK}.q1"])
    await pilot.pause()
    await pilot.press("A")
    await pilot.pause()
    await pilot.press("A", "C")


async def _permissions(pilot: Pilot) -> None:
    pilot.app.goto_pane("permissions")  # type: ignore[attr-defined]
    await pilot.pause()


async def _permission_modal(pilot: Pilot) -> None:
    """The scene's waiting Bash call in the permission window."""
    pane = pilot.app.query_one(PermissionsPane)
    pane.open_modal(pane.requests[PERMISSION_ID])
    await pilot.pause()


async def _permission_modal_served(pilot: Pilot) -> None:
    """The same window as ``runeconsole serve`` shows it on a phone: a button per key."""
    pilot.app.force_tap_keys = True  # type: ignore[attr-defined]
    await _permission_modal(pilot)


Shot = tuple[str, tuple[int, int], Callable[[Pilot], Awaitable[None]] | None]
SHOTS: list[Shot] = [
    ("agents-80x24", (80, 24), None),
    ("agents-wide", (150, 32), None),
    ("agent-detail", (100, 34), _agent_detail),
    ("agents-filter", (80, 24), _filter),
    ("problems-80x24", (80, 24), _problems),
    ("questions-80x24", (80, 24), _questions),
    ("question-modal", (80, 24), _question_modal),
    ("question-call", (90, 30), _question_call),
    ("permissions", (100, 24), _permissions),
    ("permission-modal", (80, 24), _permission_modal),
    ("permission-modal-phone", (64, 40), _permission_modal_served),
    ("suspended", (120, 32), _suspended),
    ("merge-queue-80x24", (80, 24), _merge_queue),
    ("merge-queue-wide", (150, 32), _merge_queue),
]


def fresh_scene(root: Path = SCENE_ROOT) -> ManualClock:
    if root.exists():
        shutil.rmtree(root)
    from runeconsole.adapters import git

    git.init_repo(root)
    clock = ManualClock()
    build_scene(root, clock)
    return clock


async def take(name: str, size: tuple[int, int], before: Callable | None) -> Path:
    clock = fresh_scene()
    app = create_app(SCENE_ROOT, clock=clock, watch=False, tick_seconds=0)
    app.animation_level = "none"  # the tab underline would be caught mid-slide
    async with app.run_test(size=size) as pilot:
        if before is not None:
            await before(pilot)
        await pilot.pause()
        return Path(app.save_screenshot(f"{name}.svg", str(OUT)))


async def take_fleet(
    name: str, size: tuple[int, int], pane: str, keys: tuple[str, ...] = ()
) -> Path:
    """The fleet console over ``demo/fleet_scene.py``'s three sources; ``keys`` pressed
    on the pane's first row (a window opened)."""
    specs, clock = build_fleet_scene(SCENE_ROOT.parent)
    app = create_fleet_app(specs, clock=clock, tick_seconds=0)
    app.animation_level = "none"
    async with app.run_test(size=size) as pilot:
        while not all(s.get("state") in ("up", "down") for s in app.store.states.values()):
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        await pilot.press(pane)
        app.panes[int(pane) - 1].table.move_cursor(row=0)  # rows arrive by source, any order
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
            await pilot.pause(0.2)
        return Path(app.save_screenshot(f"{name}.svg", str(OUT)))


FLEET_SHOTS: list[tuple[str, tuple[int, int], str, tuple[str, ...]]] = [
    ("fleet-agents", (120, 30), "1", ()),
    ("fleet-sources", (100, 24), "2", ()),
    ("fleet-permissions", (120, 24), "7", ()),
    ("fleet-permission-window", (80, 24), "7", ("enter",)),
]


def main(names: list[str]) -> int:
    OUT.mkdir(exist_ok=True)
    for name, size, before in SHOTS:
        if not names or name in names:
            print(asyncio.run(take(name, size, before)))
    for name, size, pane, keys in FLEET_SHOTS:
        if not names or name in names:
            print(asyncio.run(take_fleet(name, size, pane, keys)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
