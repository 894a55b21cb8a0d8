"""Tasks from the console, driven with Pilot over real git worktrees made by
``runeconsole new`` (Claude Code stood in for by ``/bin/true``, tmux on a private server):
the Tasks pane, the Compare view (tests run in a worktree, one attempt diffed against
another, a pick into the merge queue), a drop, the Worktrees view and its clean, and the
attempts of a task side by side in the Agents pane."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.command import CommandList
from textual.widgets import Static

from runeconsole.adapters.clock import ManualClock
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.panes.tasks_pane import TasksPane
from runeconsole.tui.review.file_list import FileList
from runeconsole.tui.review.screen import ReviewScreen
from runeconsole.tui.tasks.attempt_diff import AttemptDiff
from runeconsole.tui.tasks.compare import CompareScreen
from runeconsole.tui.tasks.confirms import LossConfirm
from runeconsole.tui.tasks.worktrees import WorktreesScreen
from tests.support.console import settle
from tests.support.merge_queue import git, queue_file, write_talisman
from tests.support.polling import until
from tests.support.review import commit, write

TASK = "fix-login-timeout"
AGENT = "worker-fix-login-timeout-{}"


def worktree(root: Path, n: int) -> Path:
    return root / ".claude" / "worktrees" / f"{TASK}-{n}"


def branches(root: Path) -> list[str]:
    return git(root, "branch", "--format=%(refname:short)").split()


def task_file(root: Path) -> dict:
    return json.loads((root / ".claude" / "state" / "tasks" / f"{TASK}.json").read_text())


@pytest.fixture
def started(repo: Path, tmux_socket: str, monkeypatch: pytest.MonkeyPatch, cli) -> Path:
    """``new --count 3`` on a real repository, then three different outcomes: #1 commits
    work that passes the tests, #2 commits work that fails them, #3 leaves a file of its
    own uncommitted and commits nothing."""
    monkeypatch.setenv("RUNECONSOLE_CLAUDE", "/bin/true")
    monkeypatch.setenv("RUNECONSOLE_TMUX_SOCKET", tmux_socket)
    write_talisman(repo, "test -f good.txt")
    made = cli("new", "--task", "Fix the login timeout", "--count", "3", "--root", str(repo))
    assert made.code == 0, made.err
    commit(worktree(repo, 1), {"good.txt": "ok\n", "a.txt": "a, fixed\n"}, "fix: longer timeout")
    commit(worktree(repo, 2), {"b.txt": "b, tried\n"}, "try: retry the login")
    write(worktree(repo, 3), {"notes.txt": "half an idea\n"})
    return repo


def console(root: Path) -> RuneConsole:
    return create_app(root, clock=ManualClock(), watch=False, tick_seconds=0)


async def open_compare(pilot) -> CompareScreen:
    app = pilot.app
    await pilot.press("7")
    app.query_one(TasksPane).select(TASK)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.reads)
    await pilot.pause()
    return app.screen


def palette_hits(app: RuneConsole) -> str:
    found = app.screen.query(CommandList)
    return " ".join(str(option.prompt) for option in found.first().options) if found else ""


def cell(screen: CompareScreen, n: int, column: str) -> str:
    return str(screen.table.get_cell(str(n), column))


def detail(screen: CompareScreen) -> str:
    return str(screen.query_one("#compare-detail-text", Static).render())


async def test_the_tasks_pane_lists_a_task_with_its_attempts_and_an_unreadable_one_with_why(
    started: Path,
) -> None:
    (started / ".claude" / "state" / "tasks" / "broken.json").write_text('{"text": ')
    app = console(started)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("7")
        pane = app.query_one(TasksPane)
        row = [str(value) for value in pane.table.get_row(TASK)]
        assert row[:4] == [TASK, "working", "3", "-"]
        assert row[5] == "Fix the login timeout"
        broken = [str(value) for value in pane.table.get_row("broken")]
        assert broken[1] == "unreadable" and broken[5].startswith("unreadable: ")


async def test_the_agents_pane_shows_each_attempt_of_a_task_by_its_number(
    started: Path,
) -> None:
    app = console(started)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.agents_pane.table
        names = [str(table.get_cell(AGENT.format(n), "name")) for n in (1, 2, 3)]
        assert names == ["fix-login…-1", "fix-login…-2", "fix-login…-3"]
        keys = table.keys()
        places = [keys.index(AGENT.format(n)) for n in (1, 2, 3)]
        assert places == list(range(places[0], places[0] + 3))  # side by side


async def test_t_runs_the_tests_in_the_selected_attempt_and_shows_the_result_and_its_output(
    started: Path,
) -> None:
    app = console(started)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_compare(pilot)
        assert [cell(screen, n, "test") for n in (1, 2, 3)] == ["-", "-", "-"]
        assert cell(screen, 1, "changes") == "+2 −1 2f"
        screen.table.move_cursor(row=1)
        reads = screen.reads
        await pilot.press("t")
        await settle(pilot)
        await until(pilot, lambda: screen.reads > reads and not screen.testing)
        assert cell(screen, 2, "test") == "✗ fail"
        assert "`test -f good.txt` failed with exit 1" in detail(screen)
        kept = task_file(started)["attempts"][1]["test"]
        assert kept["ok"] is False and Path(kept["output"]).exists()
        screen.table.move_cursor(row=0)
        await pilot.press("t")
        await settle(pilot)
        await until(pilot, lambda: cell(screen, 1, "test") == "✓ pass")
        assert "passed in" in detail(screen)


async def test_D_diffs_one_attempt_against_another_attempts_branch_in_the_review_screen(
    started: Path,
) -> None:
    app = console(started)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_compare(pilot)
        screen.table.move_cursor(row=1)  # #2, against #1 (the first other one)
        await pilot.pause()
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loads)
        review = app.screen
        assert isinstance(review.target, AttemptDiff)
        assert review.target.against == f"agent/{AGENT.format(1)}"
        assert review.loaded is not None
        # What #2 has that #1 has not, and what #1 has that #2 has not.
        files = {f.path: f.change.status for f in review.loaded.diff.files}
        assert files == {"a.txt": "modified", "b.txt": "modified", "good.txt": "deleted"}
        assert review.query_one(FileList).count == 3
        await pilot.press("A")  # comparing is read only: nothing joins the queue
        await pilot.pause()
        assert not (started / ".claude" / "state" / "merge-queue.json").exists()


async def test_a_pick_queues_the_attempt_removes_the_others_and_keeps_a_dirty_one_naming_its_files(
    started: Path,
) -> None:
    app = console(started)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_compare(pilot)
        screen.table.move_cursor(row=0)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, LossConfirm))
        window = app.screen
        said = str(window.body)
        assert f"#3 {AGENT.format(3)}: kept, 1 uncommitted file" in said
        assert "notes.txt" in said
        assert f"#2 {AGENT.format(2)}: 1 commit on no other branch LOST" in said
        assert "try: retry the login" in said
        assert window.yes == "Pick, lose 1 commit"
        await pilot.press("y")
        await settle(pilot)
        await until(pilot, lambda: screen.busy is None and screen.record.pick == 1)
        entries = queue_file(started)["entries"]
        assert [e["branch"] for e in entries] == [f"agent/{AGENT.format(1)}"]
        assert not worktree(started, 2).exists()
        assert f"agent/{AGENT.format(2)}" not in branches(started)
        assert (worktree(started, 3) / "notes.txt").read_text() == "half an idea\n"
        assert f"agent/{AGENT.format(3)}" in branches(started)
        saved = task_file(started)
        assert saved["state"] == "picked" and saved["pick"] == 1
        assert [a["state"] for a in saved["attempts"]] == ["picked", "removed", "kept"]
        assert cell(screen, 3, "state") == "kept"


async def test_saying_no_to_a_pick_changes_nothing(started: Path) -> None:
    app = console(started)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_compare(pilot)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, LossConfirm))
        await pilot.press("n")
        await settle(pilot)
        assert task_file(started)["pick"] is None
        assert all(worktree(started, n).exists() for n in (1, 2, 3))
        assert not (started / ".claude" / "state" / "merge-queue.json").exists()


async def test_dropping_a_task_from_its_row_asks_then_removes_all_but_the_dirty_worktree(
    started: Path,
) -> None:
    app = console(started)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("7")
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, LossConfirm))
        said = str(app.screen.body)
        assert "fix: longer timeout" in said and "try: retry the login" in said
        assert "notes.txt" in said
        assert app.screen.yes == "Drop, lose 2 commits"
        await pilot.press("y")
        await settle(pilot)
        await until(pilot, lambda: task_file(started)["state"] == "dropped")
        assert not worktree(started, 1).exists() and not worktree(started, 2).exists()
        assert worktree(started, 3).exists()
        await until(
            pilot, lambda: str(app.query_one(TasksPane).table.get_cell(TASK, "state")) == "dropped"
        )


async def test_the_worktrees_view_lists_every_worktree_and_cleans_after_saying_what_goes(
    started: Path,
) -> None:
    app = console(started)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.press("7")
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, LossConfirm))
        await pilot.press("y")
        await settle(pilot)
        await until(pilot, lambda: task_file(started)["state"] == "dropped")
        (worktree(started, 3) / "notes.txt").unlink()  # the operator took the file away
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, WorktreesScreen) and app.screen.reads)
        view = app.screen
        rows = {Path(key).name: row for key, row in view.rows.items()}
        assert set(rows) == {started.name, f"{TASK}-3"}
        assert rows[f"{TASK}-3"].state == "dropped"
        assert str(view.table.get_cell(str(worktree(started, 3)), "task")) == f"{TASK} #3"
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, LossConfirm))
        said = str(app.screen.body)
        assert "Removed, with their branches:" in said and f"{TASK}-3" in said
        await pilot.press("y")
        await settle(pilot)
        await until(pilot, lambda: not worktree(started, 3).exists())
        await until(pilot, lambda: len(view.rows) == 1)
        assert f"agent/{AGENT.format(3)}" not in branches(started)


async def test_a_task_file_written_while_the_console_is_open_is_its_row_at_once(
    repo: Path,
) -> None:
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("7")
        pane = app.query_one(TasksPane)
        assert pane.table.row_count == 0
        store = app.dispatch.store
        made = store.create("tidy-up", {"text": "Tidy up\nthe rest", "attempts": []})
        pane.apply_changes({made.path})  # as the file watcher hands it over
        await pilot.pause()
        assert [str(v) for v in pane.table.get_row("tidy-up")][5] == "Tidy up"
        made.path.unlink()
        pane.apply_changes({made.path})
        await pilot.pause()
        assert not pane.table.has("tidy-up")


async def test_the_palette_opens_the_worktrees_view(repo: Path) -> None:
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p", *"worktrees")
        await until(pilot, lambda: "Worktrees: every worktree" in palette_hits(app))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, WorktreesScreen) and app.screen.reads)
        assert [row.state for row in app.screen.rows.values()] == ["main"]
