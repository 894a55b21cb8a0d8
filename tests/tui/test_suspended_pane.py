"""The Suspended pane: keyed rows, verdict colours, details, resume with confirmation, arcs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from textual.widgets import Static

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.services.suspension.git_view import GitView
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.arc_detail import ArcDetail
from runeconsole.tui.modals.resume_confirm import ResumeConfirm
from runeconsole.tui.modals.suspended_detail import ContextDetail, InjectionScreen
from runeconsole.tui.panes.suspended_pane import LocalSuspendedPane
from tests.support.paths import SNAP
from tests.support.polling import until
from tests.support.suspended import build_scene, task_file, write_context

CONTEXTS = "tmp/work/20260226-014400/context"
SNAP_ROOT = SNAP / "suspended"


def app_clock() -> ManualClock:
    clock = ManualClock()
    clock.advance(5000)
    return clock


@pytest.fixture
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    root = tmp_path / "project"
    build_scene(root, ManualClock())
    return root


def console(root: Path) -> RuneConsole:
    return create_app(root, clock=app_clock(), watch=False, tick_seconds=0)


def pane(app: RuneConsole) -> LocalSuspendedPane:
    return app.query_one(LocalSuspendedPane)


def rendered(screen: object) -> str:
    """The plain text a modal's body shows."""
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(screen.query_one("#detail-body", Static).content)  # type: ignore[attr-defined]
    return console.export_text()


def cell(p: LocalSuspendedPane, key: str, column: str) -> object:
    return p.table.get_cell(key, column)


async def loaded(pilot) -> None:  # type: ignore[no-untyped-def]
    """Show the pane and wait for its background load."""
    await pilot.press("4")
    suspended = pilot.app.query_one(LocalSuspendedPane)
    await until(pilot, lambda: suspended.view is not None)  # its ``Loaded`` has arrived
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_one_keyed_row_per_file_with_coloured_verdicts(scene: Path) -> None:
    app = console(scene)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        p = pane(app)
        assert sorted(p.table.keys()) == sorted(
            f"{CONTEXTS}/{arc}/{task}.md"
            for arc, task in [
                ("arc-1707849600000", 7),
                ("arc-1707849600000", 8),
                ("arc-1707849600000", 9),
                ("arc-1710000000019", 12),
                ("arc-1710000000019", 13),
                ("arc-1710000000019", 14),
            ]
        )
        verdicts = {}
        for key in list(p.table.keys()):
            value = cell(p, key, "verdict")
            assert isinstance(value, Text)
            verdicts[key.rsplit("/", 1)[1]] = (value.plain, str(value.style))
        assert verdicts == {
            "7.md": ("ok", "bold green"),
            "8.md": ("ok", "bold green"),
            "9.md": ("stale", "bold yellow"),
            "12.md": ("exhausted", "dim"),
            "13.md": ("corrupt", "bold red"),
            "14.md": ("unreadable", "bold red"),
        }
        assert cell(p, f"{CONTEXTS}/arc-1707849600000/7.md", "age") == "1h23m"
        assert app.query_one("#status").figures["suspended"] == {"suspended": 6, "corrupt": 2}


async def test_changes_update_rows_by_key(scene: Path) -> None:
    app = console(scene)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        p = pane(app)
        key = f"{CONTEXTS}/arc-1707849600000/8.md"
        order = list(p.table.keys())
        path = scene / key
        path.write_text(path.read_text().replace("Lexer", "LEXER"))
        p.apply_changes({path})
        await pilot.pause()
        assert list(p.table.keys()) == order
        assert cell(p, key, "verdict").plain == "corrupt"
        new = write_context(scene, "20", "arc-1707849600000")
        p.apply_changes({new})
        await pilot.pause()
        assert p.table.has(f"{CONTEXTS}/arc-1707849600000/20.md")
        path.unlink()
        p.apply_changes({path})
        await pilot.pause()
        assert not p.table.has(key)
        assert p.table.row_count == 6


async def test_rescan_finds_new_dirs(scene: Path) -> None:
    app = console(scene)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        write_context(scene, "30", "arc-new")
        pane(app).rescan()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert pane(app).table.has(f"{CONTEXTS}/arc-new/30.md")


async def test_enter_shows_frontmatter_git_and_injection(scene: Path) -> None:
    app = console(scene)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        p = pane(app)
        p.table.move_cursor(row=p.table.get_row_index(f"{CONTEXTS}/arc-1707849600000/9.md"))
        await pilot.press("enter")
        assert isinstance(app.screen, ContextDetail)
        body = rendered(app.screen)
        assert "timeout_reason: turn_limit" in body
        assert "src/gone.py  no longer changed (diverged)" in body
        assert "src/parser.py  changed in the work tree" in body
        assert "RE-ANCHOR -- Resume from where the prior worker left off." in body
        await pilot.press("escape")
        assert not isinstance(app.screen, ContextDetail)


async def test_resume_asks_first_and_cancel_changes_nothing(scene: Path) -> None:
    app = console(scene)
    path = scene / CONTEXTS / "arc-1707849600000/7.md"
    before = path.read_bytes()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        p = pane(app)
        p.table.move_cursor(row=p.table.get_row_index(f"{CONTEXTS}/arc-1707849600000/7.md"))
        await pilot.press("s")
        assert isinstance(app.screen, ResumeConfirm)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, ResumeConfirm)
    assert path.read_bytes() == before


async def resume_confirmed(pilot, key: str) -> LocalSuspendedPane:  # type: ignore[no-untyped-def]
    """Select the row ``key``, press ``s``, confirm, and wait for the resume."""
    await loaded(pilot)
    p = pane(pilot.app)
    p.table.move_cursor(row=p.table.get_row_index(key))
    await pilot.press("s")
    await pilot.press("y")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return p


async def test_resume_confirmed_counts_and_shows_the_injection(scene: Path) -> None:
    app = console(scene)
    key = f"{CONTEXTS}/arc-1707849600000/7.md"
    async with app.run_test(size=(120, 36)) as pilot:
        p = await resume_confirmed(pilot, key)
        assert isinstance(app.screen, InjectionScreen)
        assert app.clipboard.startswith("ANCHOR -- TRUTHBINDING PROTOCOL")
        assert "resume_count: 1/2" in app.clipboard
        assert cell(p, key, "resumes") == "1/2"
    assert "resume_count: 1" in (scene / key).read_text()


async def test_resume_from_the_console_updates_the_task_file(scene: Path, tmp_path: Path) -> None:
    task = task_file(tmp_path / "claude-config", "arc-work-1", "21")
    path = write_context(scene, "21", "arc-1707849600000", team="arc-work-1")
    key = str(path.relative_to(scene))
    app = console(scene)
    async with app.run_test(size=(120, 36)) as pilot:
        await resume_confirmed(pilot, key)
        assert any("task arc-work-1/21: set" in n.message for n in app._notifications)
    body = json.loads(task.read_text())
    assert body["status"] == "pending" and body["metadata"]["suspended"] is False


async def test_resume_of_a_corrupt_row_is_refused_without_asking(scene: Path) -> None:
    app = console(scene)
    key = f"{CONTEXTS}/arc-1710000000019/13.md"
    before = (scene / key).read_bytes()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        p = pane(app)
        p.table.move_cursor(row=p.table.get_row_index(key))
        await pilot.press("s")
        await pilot.pause()
        assert not isinstance(app.screen, ResumeConfirm)
    assert (scene / key).read_bytes() == before


async def test_arc_view_lists_phases_in_order_with_demotions(scene: Path) -> None:
    app = console(scene)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        p = pane(app)
        rows = {p.arcs.get_cell(k, "id"): k for k in list(p.arcs.keys())}
        assert set(rows) == {"arc-1707849600000", "arc-1710000000019", "arc-1999"}
        strip = p.arcs.get_cell(rows["arc-1707849600000"], "phases")
        assert strip.plain.startswith("!!·!") and len(strip.plain) == 26
        assert "fresh start" in p.arcs.get_cell(rows["arc-1999"], "state").plain
        p.arcs.focus()
        p.arcs.move_cursor(row=p.arcs.get_row_index(rows["arc-1707849600000"]))
        await pilot.press("enter")
        assert isinstance(app.screen, ArcDetail)
        body = rendered(app.screen)
        assert body.index("forge") < body.index("plan_review") < body.index("merge")
        assert "demoted: artifact changed or missing" in body
        assert "Hash expected: sha256:abc123" in body


async def test_filter_hides_rows_by_key(scene: Path) -> None:
    app = console(scene)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        p = pane(app)
        p.filter_text = "corrupt"
        await pilot.pause()
        assert [k.rsplit("/", 1)[1] for k in list(p.table.keys())] == ["13.md"]
        p.filter_text = ""
        assert p.table.row_count == 6


# -- snapshots (deterministic: relative root, manual clock, no watching, no ticks) -----------------


@pytest.fixture
def snap_app(snap_dir: Path) -> RuneConsole:
    build_scene(SNAP_ROOT, ManualClock())
    return console(SNAP_ROOT)


def test_snapshot_pane_80x24(snap_compare, snap_app: RuneConsole) -> None:
    assert snap_compare(snap_app, run_before=loaded, terminal_size=(80, 24))


def test_snapshot_pane_wide(snap_compare, snap_app: RuneConsole) -> None:
    assert snap_compare(snap_app, run_before=loaded, terminal_size=(140, 36))


def test_snapshot_detail_80x24(snap_compare, snap_app: RuneConsole) -> None:
    async def open_detail(pilot) -> None:  # type: ignore[no-untyped-def]
        await loaded(pilot)
        await pilot.press("down", "down", "enter")

    assert snap_compare(snap_app, run_before=open_detail, terminal_size=(80, 24))


def test_snapshot_arc_detail(snap_compare, snap_app: RuneConsole) -> None:
    async def open_arc(pilot) -> None:  # type: ignore[no-untyped-def]
        await loaded(pilot)
        p = pane(pilot.app)
        p.arcs.focus()
        await pilot.press("enter")

    assert snap_compare(snap_app, run_before=open_arc, terminal_size=(100, 40))


async def test_file_events_update_the_row_while_watching(scene: Path) -> None:
    """Real inotify events: a context file corrupted on disk turns its row red by itself."""
    app = create_app(scene, clock=app_clock(), watch=True, rescan_seconds=3600, tick_seconds=0)
    key = f"{CONTEXTS}/arc-1707849600000/7.md"
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        p = pane(app)
        assert cell(p, key, "verdict").plain == "ok"
        path = scene / key
        path.write_text(path.read_text().replace("Parser", "PARSER"))
        for _ in range(100):
            await pilot.pause(0.05)
            if cell(p, key, "verdict").plain == "corrupt":
                break
        assert cell(p, key, "verdict").plain == "corrupt"


async def test_help_lists_the_pane_keys(scene: Path) -> None:
    from runeconsole.tui.modals.help_screen import HelpScreen

    app = console(scene)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.pane_title == "Suspended"
        assert any(key == "s" for key, _ in app.screen.pane_keys)


async def test_a_new_arc_dir_is_picked_up_from_its_event(scene: Path) -> None:
    app = create_app(scene, clock=app_clock(), watch=True, rescan_seconds=3600, tick_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        write_context(scene, "40", "arc-brand-new")
        key = f"{CONTEXTS}/arc-brand-new/40.md"
        for _ in range(100):
            await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            if pane(app).table.has(key):
                break
        assert pane(app).table.has(key)


async def test_a_root_with_nothing_suspended_asks_git_nothing_and_the_first_context_still_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "empty"
    git.init_repo(root)
    asked: list[Path] = []
    read = GitView.read

    def counted(root: Path) -> GitView:
        asked.append(root)
        return read(root)

    monkeypatch.setattr(GitView, "read", counted)
    app = console(root)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("4")
        p = pane(app)
        p.rescan()  # every few seconds in a console
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert asked == [] and p.view is None and p.table.row_count == 0
        new = write_context(root, "20", "arc-1707849600000")
        p.apply_changes({new})  # its event: read with git, as a listing is
        await until(pilot, lambda: p.table.row_count == 1)
        assert asked and p.view is not None
