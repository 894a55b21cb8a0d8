"""Regenerate screenshots/*.svg from the demo scene: ``python scripts/screenshots.py``.

The scene is built at a fixed path with a manual clock, so the pictures change
only when the console does.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

# This checkout's console (not an installed copy), and its tests' fleet scene.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.git import run_git
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.demo.claude_scene import (
    ASK_TASK,
    ELICIT_TASK,
    PERMISSION_ID,
    elicitation_request,
)
from runeconsole.demo.merge_queue import build_batches, build_queue, commit_branch
from runeconsole.demo.pipelines import write_pipelines
from runeconsole.demo.review_scene import COMMENT, READY_AGENT, fixed_repo
from runeconsole.demo.scene import build_scene
from runeconsole.demo.suspended import build_scene as build_suspended
from runeconsole.demo.tasks_scene import TASK, build_tasks
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.merge_queue.model import REMOTE_STATE
from runeconsole.services.project import Project
from runeconsole.tui.console.app import create_app
from runeconsole.tui.fleet_console.app import create_fleet_app
from runeconsole.tui.modals.agent_peek import AgentPeek
from runeconsole.tui.modals.new_task import NewTaskForm
from runeconsole.tui.panes.changes_watch import ChangesWatch
from runeconsole.tui.panes.merge_queue_pane import MergeQueuePane
from runeconsole.tui.panes.pane import Pane
from runeconsole.tui.panes.permissions_pane import LocalPermissionsPane
from runeconsole.tui.panes.pipelines_pane import LocalPipelinesPane
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from runeconsole.tui.panes.suspended_pane import LocalSuspendedPane
from runeconsole.tui.panes.tasks_pane import TasksPane
from runeconsole.tui.pipelines.gate_window import GateWindow
from runeconsole.tui.pipelines.screen import PipelineScreen
from runeconsole.tui.review.diff_view import DiffView
from runeconsole.tui.review.screen import ReviewScreen
from runeconsole.tui.tasks.compare import CompareScreen
from runeconsole.tui.tasks.confirms import LossConfirm
from runeconsole.tui.tasks.worktrees import WorktreesScreen
from tests.support.fleet_scene import build_fleet_scene

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


async def _show_scanned(pilot: Pilot, pane_id: str, pane_type: type[Pane[Any]]) -> Pane[Any]:
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


async def _merge_queue_batches(pilot: Pilot) -> None:
    """A run in flight: a red batch's halves testing side by side, priorities, figures."""
    build_batches(SCENE_ROOT, pilot.app.clock)  # type: ignore[attr-defined]
    pane = await _show_scanned(pilot, "merge-queue", MergeQueuePane)
    pane.table.move_cursor(row=5)  # type: ignore[attr-defined] # a low entry raised by waiting


async def _show_pipelines(pilot: Pilot) -> Pane[Any]:
    """The demo's plan (``demo/pipelines.py``): shop-v2 worked by the cast's nodes and
    waiting at its human gate, docs-refresh not started; its files five minutes old."""
    now = pilot.app.clock.now()  # type: ignore[attr-defined]
    stamp = (now - timedelta(minutes=5)).timestamp()
    signals = SCENE_ROOT / ".pipelines" / "pipelines" / "signals"
    written = write_pipelines(SCENE_ROOT, now - timedelta(minutes=5))
    for path in [*written, signals / "shop-v2", signals / "shop-v2" / "review.gate-wait"]:
        os.utime(path, (stamp, stamp))
    return await _show_scanned(pilot, "pipelines", LocalPipelinesPane)


async def _pipelines(pilot: Pilot) -> None:
    await _show_pipelines(pilot)


async def _pipeline_screen(pilot: Pilot) -> None:
    pane = await _show_pipelines(pilot)
    pane.table.move_cursor(
        row=next(i for i, k in enumerate(pane.table.keys()) if pane.records[k].gates)
    )
    await pilot.press("enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, PipelineScreen)
    gate = next(i for i, k in enumerate(screen.table.keys()) if screen._gate(k) is not None)
    screen.table.move_cursor(row=gate)


async def _gate_window(pilot: Pilot) -> None:
    pane = await _show_pipelines(pilot)
    pane.select("shop-v2")
    await pilot.press("g")
    await settle(pilot)
    assert isinstance(pilot.app.screen, GateWindow)


async def _problems(pilot: Pilot) -> None:
    pilot.app.goto_pane("problems")  # type: ignore[attr-defined]
    await settle(pilot)


async def _suspended(pilot: Pilot) -> None:
    build_suspended(SCENE_ROOT, pilot.app.clock)  # type: ignore[attr-defined]
    await _show_scanned(pilot, "suspended", LocalSuspendedPane)


async def _changes_looked(pilot: Pilot) -> None:
    """Until the agents' changes are looked at (a worker's, after the first frame)."""
    watches = list(pilot.app.query(ChangesWatch))
    while not all(watch.idle for watch in watches):
        await pilot.pause(0.05)
    await pilot.pause()


async def _review(pilot: Pilot) -> None:
    """The ready agent's review, the cursor on the line its waiting comment is on."""
    pilot.app.agents_pane.select(READY_AGENT)  # type: ignore[attr-defined]
    await pilot.press("d")
    while not (isinstance(pilot.app.screen, ReviewScreen) and pilot.app.screen.loads):
        await pilot.pause(0.05)
    screen = pilot.app.screen
    line = COMMENT[1]
    rows = screen.document.rows  # type: ignore[union-attr]
    row = next(n for n, r in enumerate(rows) if r[3] == line and r[0] in "+ ")
    screen.query_one(DiffView).move_to(row, center=True)
    await pilot.pause()


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
    pane = pilot.app.query_one(LocalQuestionsPane)
    pane.open_modal(pane.records[f"claude-code/{ASK_TASK}.q1"])
    await pilot.pause()
    await pilot.press("A")
    await pilot.pause()
    await pilot.press("A", "C")


async def _permissions(pilot: Pilot) -> None:
    pilot.app.goto_pane("permissions")  # type: ignore[attr-defined]
    await pilot.pause()


async def _permission_modal(pilot: Pilot) -> None:
    """The scene's waiting Bash call in the permission window."""
    pane = pilot.app.query_one(LocalPermissionsPane)
    pane.open_modal(pane.records[PERMISSION_ID])
    await pilot.pause()


async def _elicitation(pilot: Pilot) -> None:
    """An MCP server's form, asked by the hand-started session, partly filled in."""
    from textual.widgets import Input, Select

    elicitation_request(ProjectPaths(SCENE_ROOT), pilot.app.clock.now())  # type: ignore[attr-defined]
    pane = pilot.app.query_one(LocalQuestionsPane)
    pane.rescan()
    while f"claude-code/{ELICIT_TASK}.q1" not in pane.records:
        await pilot.pause(0.05)
    pane.open_modal(pane.records[f"claude-code/{ELICIT_TASK}.q1"])
    while not pilot.app.screen.query("#field-0"):
        await pilot.pause(0.05)
    pilot.app.screen.query_one("#field-0", Input).value = "main"
    pilot.app.screen.query_one("#field-3", Select).value = "eu"
    pilot.app.screen.query_one("#form-accept").focus()
    await pilot.pause()


PEEK_AGENT = "worker-parser"
PEEK_TRANSCRIPT = [
    "> The lexer tests fail on CRLF input; fix them and keep the error positions.",
    "",
    "● I'll run the lexer tests first.",
    "",
    "● Bash(pytest tests/lexer -q)",
    "     2 failed, 41 passed in 1.84s",
    "",
    "● Update(src/lexer.py)",
    "     Updated src/lexer.py with 6 additions and 2 removals",
    "",
    "● Both fixed: a CRLF now ends a line as one newline, and columns count from it.",
]
PEEK_MESSAGE = (
    "Both fixed: a CRLF now ends a line as one newline, and columns count from it. "
    "All 43 lexer tests pass; ready for review."
)
PEEK_PERMISSION = (
    "Bash command",
    "rm -rf build/ && python -m build",
    "Do you want to proceed?",
    ["Yes", "Yes, and don't ask again for rm commands", "No, and tell Claude what to do (esc)"],
)


def live_pane(
    key: str, clock: ManualClock, prompt: tuple[str, str, str, list[str]] | None = None
) -> None:
    """The scene's ``key`` running in a tmux pane of the screenshots' own server: a fixed
    Claude-like screen (``demo/fake_terminal.py``), and its last message as its Stop hook
    would have recorded it."""
    from runeconsole.adapters.tmux import Tmux
    from runeconsole.core.timeutil import iso_z
    from runeconsole.demo.fake_terminal import screen
    from runeconsole.services.project import Project
    from runeconsole.services.registry import Registry

    socket = os.environ["RUNECONSOLE_TMUX_SOCKET"]
    shown = screen(key, PEEK_TRANSCRIPT, prompt, 41)
    draw = "import sys, time; sys.stdout.write(sys.argv[1]); sys.stdout.flush(); time.sleep(600)"
    tmux = Tmux(socket, config_file="/dev/null")
    session = f"rune-{key}"
    pane = tmux.new_session(session, [sys.executable, "-c", draw, shown], cwd=SCENE_ROOT)
    registry = Registry(Project(SCENE_ROOT))
    record = registry.get(key)
    said_at = iso_z(clock.now() - timedelta(seconds=40))
    claude = {"last_assistant_message": PEEK_MESSAGE, "last_assistant_message_at": said_at}
    metadata = {**record.metadata, "tmux_socket": socket}
    registry.update(
        key, {"tmux_session": session, "pid": pane.pid, "metadata": metadata, "claude": claude}
    )


def end_live_panes() -> None:
    from runeconsole.adapters.tmux import Tmux

    Tmux(os.environ["RUNECONSOLE_TMUX_SOCKET"]).kill_server()


async def _open_live(pilot: Pilot, prompt: tuple[str, str, str, list[str]] | None) -> None:
    live_pane(PEEK_AGENT, pilot.app.clock, prompt)  # type: ignore[attr-defined]
    pilot.app.rescan_fleet()  # type: ignore[attr-defined]
    await settle(pilot)
    pilot.app.agents_pane.select(PEEK_AGENT)  # type: ignore[attr-defined]
    await pilot.press("enter")
    for _ in range(100):  # the pane is read in a worker: until its screen is drawn
        await pilot.pause(0.05)
        screen = pilot.app.screen.query_one(AgentPeek).parts().screen
        if screen is not None and "fake Claude Code" in screen.plain:
            break


async def _agent_peek(pilot: Pilot) -> None:
    """A live agent's detail: its screen, read from its pane, and its last message."""
    await _open_live(pilot, None)


async def _message_refused(pilot: Pilot) -> None:
    """``m`` on an agent whose screen shows a permission dialog: refused, said why."""
    await _open_live(pilot, PEEK_PERMISSION)
    await pilot.press("m", *"run the release build", "enter")
    for _ in range(100):
        await pilot.pause(0.05)
        if "not sent" in str(pilot.app.screen.query_one("#message-status").render()):
            break


async def _permission_modal_served(pilot: Pilot) -> None:
    """The same window as ``runeconsole serve`` shows it on a phone: a button per key."""
    pilot.app.force_tap_keys = True  # type: ignore[attr-defined]
    await _permission_modal(pilot)


async def _new_task(pilot: Pilot) -> None:
    await pilot.press("n")
    while not isinstance(pilot.app.screen, NewTaskForm):
        await pilot.pause(0.05)
    names = {" ": "space", "\n": "enter", "/": "slash", "-": "minus", ".": "full_stop"}
    text = "Fix the login timeout\nsrc/login.py gives up after 5 s"
    await pilot.press(*(names.get(char, char) for char in text))
    await pilot.press("tab")
    await settle(pilot)


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
    ("elicitation-form", (80, 24), _elicitation),
    ("permission-modal-phone", (64, 40), _permission_modal_served),
    ("suspended", (120, 32), _suspended),
    ("merge-queue-80x24", (80, 24), _merge_queue),
    ("merge-queue-wide", (150, 32), _merge_queue),
    ("merge-queue-batches-80x24", (80, 24), _merge_queue_batches),
    ("merge-queue-batches-wide", (150, 32), _merge_queue_batches),
    ("review-80x24", (80, 24), _review),
    ("review-wide", (150, 40), _review),
    ("agent-peek", (100, 34), _agent_peek),
    ("message-refused", (80, 24), _message_refused),
    ("new-task-form", (80, 24), _new_task),
    ("pipelines-80x24", (80, 24), _pipelines),
    ("pipelines-wide", (150, 32), _pipelines),
    ("pipeline-screen", (80, 24), _pipeline_screen),
    ("gate-window", (80, 24), _gate_window),
]


def fresh_scene(root: Path = SCENE_ROOT) -> ManualClock:
    if root.exists():
        shutil.rmtree(root)
    fixed_repo(root)  # its commit ids the same on every run
    clock = ManualClock()
    build_scene(root, clock)
    return clock


async def take(name: str, size: tuple[int, int], before: Callable | None) -> Path:
    clock = fresh_scene()
    app = create_app(SCENE_ROOT, clock=clock, watch=False, tick_seconds=0)
    app.animation_level = "none"  # the tab underline would be caught mid-slide
    try:
        async with app.run_test(size=size) as pilot:
            await _changes_looked(pilot)
            if before is not None:
                await before(pilot)
            await pilot.pause()
            return Path(app.save_screenshot(f"{name}.svg", str(OUT)))
    finally:
        end_live_panes()


async def take_fleet(
    name: str, size: tuple[int, int], pane: str, keys: tuple[str, ...] = ()
) -> Path:
    """The fleet console over ``tests/support/fleet_scene.py``'s three sources; ``keys`` pressed
    on the pane's first row (a window opened)."""
    specs, clock = build_fleet_scene(SCENE_ROOT.parent)
    app = create_fleet_app(specs, clock=clock, tick_seconds=0)
    app.animation_level = "none"
    async with app.run_test(size=size) as pilot:
        while not all(s.state in ("up", "down") for s in app.model.states.values()):
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        await pilot.press(pane)
        app.panes[int(pane) - 1].table.move_cursor(row=0)  # rows arrive by source, any order
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
            await pilot.pause(0.2)
        return Path(app.save_screenshot(f"{name}.svg", str(OUT)))


TASKS_ROOT = SCENE_ROOT.parent / "tasks"
TASKS_DATE = "2026-02-26T11:00:00Z"  # the tasks scene's commits: the same ids every run


async def _compare(pilot: Pilot, row: int = 1) -> None:
    app = pilot.app
    await pilot.press("7")
    app.query_one(TasksPane).select(TASK)
    await pilot.press("c")
    while not (isinstance(app.screen, CompareScreen) and app.screen.reads):
        await pilot.pause(0.05)
    app.screen.table.move_cursor(row=row)
    await pilot.pause()


async def _pick(pilot: Pilot) -> None:
    await _compare(pilot, row=0)
    await pilot.press("A")
    while not isinstance(pilot.app.screen, LossConfirm):
        await pilot.pause(0.05)


async def _worktrees(pilot: Pilot) -> None:
    app = pilot.app
    await pilot.press("7", "w")
    while not (isinstance(app.screen, WorktreesScreen) and app.screen.reads):
        await pilot.pause(0.05)
    app.screen.table.move_cursor(row=1)


async def _tasks(pilot: Pilot) -> None:
    await pilot.press("7")


async def take_tasks(name: str, size: tuple[int, int], before: Callable | None) -> Path:
    """The console over ``demo/tasks_scene.py``: three tasks, their attempts, worktrees."""
    if TASKS_ROOT.exists():
        shutil.rmtree(TASKS_ROOT)
    dates = {k: os.environ.get(k) for k in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")}
    os.environ.update(dict.fromkeys(dates, TASKS_DATE))
    try:
        clock = ManualClock()
        build_tasks(TASKS_ROOT, clock)
        app = create_app(TASKS_ROOT, clock=clock, watch=False, tick_seconds=0)
        app.animation_level = "none"
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            if before is not None:
                await before(pilot)
            await pilot.pause()
            return Path(app.save_screenshot(f"{name}.svg", str(OUT)))
    finally:
        for key, value in dates.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


TASK_SHOTS: list[Shot] = [
    ("tasks-80x24", (80, 24), _tasks),
    ("compare-80x24", (80, 24), _compare),
    ("compare-wide", (150, 32), _compare),
    ("pick-confirmation", (80, 24), _pick),
    ("worktrees-wide", (150, 32), _worktrees),
]


FLEET_SHOTS: list[tuple[str, tuple[int, int], str, tuple[str, ...]]] = [
    ("fleet-agents", (120, 30), "1", ()),
    ("fleet-sources", (100, 24), "2", ()),
    ("fleet-permissions", (120, 24), "7", ()),
    ("fleet-permission-window", (80, 24), "7", ("enter",)),
    ("fleet-question-window", (100, 30), "4", ("down", "enter")),
    ("fleet-agent-detail", (100, 34), "1", ("enter",)),
]


ORIGIN = SCENE_ROOT.parent / "shop-origin.git"  # the remote of the merge queue's scene
TIMED_OUT = "ssh: connect to host git.example.com port 22: Connection timed out"


def build_remote_queue(root: Path, clock: ManualClock) -> None:
    """The demo queue on a project whose queue lands on ``origin`` (a bare repository
    beside it), which does not answer now: a teammate's branch (PR #42) waits for it at
    the head, try 3; the last fetch, 13 minutes ago, saw a teammate's push (local main
    one behind); one push lost a race. (Its talisman says ``remote: origin``.)"""
    build_queue(root, clock)
    if ORIGIN.exists():
        shutil.rmtree(ORIGIN)
    run_git(["init", "--quiet", "--bare", "-b", "main", str(ORIGIN)], root)
    run_git(["remote", "add", "origin", str(ORIGIN)], root)
    run_git(["push", "--quiet", "origin", "main"], root)
    for branch, files, target in (
        ("feat/search-ui", {"src/search_ui.py": "UI = 1\n"}, "feat/search-ui"),
        ("mate-main", {"README.md": "# shop\n"}, "main"),  # a teammate's push to main
    ):
        commit_branch(root, branch, files, f"teammate: {', '.join(files)}")
        run_git(["push", "--quiet", "origin", f"{branch}:refs/heads/{target}"], root)
        run_git(["branch", "--quiet", "-D", branch], root)  # theirs: on origin only
    queue = MergeQueue(Project(root, clock))
    head, _ = queue.add("origin/feat/search-ui", identity="mate-search", pr_number=42)
    clock.advance(150)
    queue.claim_batch([head], "b1")
    now = clock.now()
    wait = {"reason": TIMED_OUT, "tries": 3, "next_try_in_seconds": 8.0}
    wait["since"] = iso_z(now - timedelta(seconds=80))
    queue.update_entry(head.entry_id, {"current_step": "waiting for origin", "remote_wait": wait})
    kept = {"name": "origin", "branch": "main", "races": 1, "last_error": TIMED_OUT}
    kept.update(last_fetch_at=iso_z(now - timedelta(minutes=13)))
    kept.update(error_at=iso_z(now - timedelta(seconds=40)))
    queue.write_later({REMOTE_STATE: kept})
    queue.flush()


async def take_remote(name: str, size: tuple[int, int]) -> Path:
    """The Merge queue pane of ``build_remote_queue`` (built once the console is up, as
    the other queue shots), the waiting entry selected; its commits the same ids every
    run."""
    dates = {k: os.environ.get(k) for k in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")}
    os.environ.update(dict.fromkeys(dates, TASKS_DATE))
    try:
        clock = fresh_scene()
        talisman = "runeconsole:\n  merge_queue:\n    test_command: make test\n    remote: origin\n"
        (SCENE_ROOT / ".claude" / "talisman.yml").write_text(talisman)
        app = create_app(SCENE_ROOT, clock=clock, watch=False, tick_seconds=0)
        app.animation_level = "none"
        async with app.run_test(size=size) as pilot:
            await _changes_looked(pilot)
            build_remote_queue(SCENE_ROOT, clock)
            pane = await _show_scanned(pilot, "merge-queue", MergeQueuePane)
            pane.table.move_cursor(row=0)  # type: ignore[attr-defined]
            await pilot.pause()
            return Path(app.save_screenshot(f"{name}.svg", str(OUT)))
    finally:
        for key, value in dates.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


REMOTE_SHOTS: list[tuple[str, tuple[int, int]]] = [("merge-queue-remote-80x24", (80, 24))]


CONVERSATION = Path(__file__).resolve().parents[1] / "tests/fixtures/claude_transcripts"
CONVERSATION_KEY = "worker-migrate"


def conversation_agent(root: Path) -> None:
    """An agent of the scene whose conversation is the transcript the real Claude Code
    wrote (``tests/fixtures/claude_transcripts``), in a Claude config dir of the shots'
    own (never the user's); its first prompt said from the console."""
    import json

    from runeconsole.services.conversations.locate import projects_dir, record_sent
    from runeconsole.services.project import Project

    config = root.parent / "claude-config"
    if config.exists():
        shutil.rmtree(config)
    os.environ["CLAUDE_CONFIG_DIR"] = str(config)
    folder = projects_dir() / "-tmp-tx-project"
    shutil.copytree(CONVERSATION / folder.name, folder)
    transcript = next(folder.glob("*.jsonl"))
    session = transcript.stem
    body = {
        "agent_id": f"{CONVERSATION_KEY}-20261129T052549Z",
        "role": "worker",
        "name": "migrate",
        "status": "active",
        "session_id": session,
        "claude": {"session_id": session, "transcript_path": str(transcript)},
    }
    (ProjectPaths(root).identities / f"{CONVERSATION_KEY}.json").write_text(json.dumps(body))
    record_sent(Project(root), CONVERSATION_KEY, "Please do the migration", "say")


async def take_conversation(name: str, size: tuple[int, int], keys: tuple[str, ...]) -> Path:
    """``t`` on the scene's agent whose conversation is the real transcript; or (``S`` in
    ``keys``) the search screen. Times in UTC."""
    from runeconsole.tui.conversations.screen import ConversationScreen
    from runeconsole.tui.conversations.search import SearchScreen

    os.environ["TZ"] = "UTC"
    time.tzset()
    clock = fresh_scene()
    conversation_agent(SCENE_ROOT)
    app = create_app(SCENE_ROOT, clock=clock, watch=False, tick_seconds=0)
    app.animation_level = "none"
    async with app.run_test(size=size) as pilot:
        await _changes_looked(pilot)
        if keys[:1] == ("S",):
            await pilot.press(*keys)
            while not (isinstance(app.screen, SearchScreen) and app.screen.searches):
                await pilot.pause(0.05)
        else:
            app.agents_pane.select(CONVERSATION_KEY)
            await pilot.press("t")
            while not (isinstance(app.screen, ConversationScreen) and app.screen.whole):
                await pilot.pause(0.05)
            await pilot.press(*keys)
        await pilot.pause(0.2)
        return Path(app.save_screenshot(f"{name}.svg", str(OUT)))


CONVERSATION_SHOTS: list[tuple[str, tuple[int, int], tuple[str, ...]]] = [
    ("conversation-80x24", (80, 24), ()),
    ("conversation-wide", (150, 40), ("g", "j", "enter")),
    ("search", (120, 24), ("S", *"hello OR migration", "enter")),
]


def main(names: list[str]) -> int:
    OUT.mkdir(exist_ok=True)
    for name, size, before in SHOTS:
        if not names or name in names:
            print(asyncio.run(take(name, size, before)))
    for name, size, before in TASK_SHOTS:
        if not names or name in names:
            print(asyncio.run(take_tasks(name, size, before)))
    for name, size in REMOTE_SHOTS:
        if not names or name in names:
            print(asyncio.run(take_remote(name, size)))
    for name, size, pane, keys in FLEET_SHOTS:
        if not names or name in names:
            print(asyncio.run(take_fleet(name, size, pane, keys)))
    for name, size, keys in CONVERSATION_SHOTS:
        if not names or name in names:
            print(asyncio.run(take_conversation(name, size, keys)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
