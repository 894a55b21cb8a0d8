"""Reviewing from the console, driven with Pilot over real git worktrees: the CHANGES
column and the ready count, the review screen (files, hunks, search, wrap, a huge file
drawn lazily), comments and approval, and opening a review from the merge queue."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.review_scene import COMMENT, READY_AGENT, fixed_repo
from runeconsole.demo.scene import build_scene
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.records import ReviewRecords
from runeconsole.services.review.service import Reviews
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.console.status_bar import StatusBar
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.panes.merge_queue_pane import MergeQueuePane
from runeconsole.tui.review.diff_view import DiffView
from runeconsole.tui.review.file_list import FileList
from runeconsole.tui.review.screen import ReviewScreen
from runeconsole.tui.widgets.footer import ConsoleFooter
from tests.support.console import changes_looked, settle
from tests.support.merge_queue import commit_in_checkout
from tests.support.paths import SNAP
from tests.support.polling import until
from tests.support.review import agent_with_worktree, commit, write


def console(root: Path) -> RuneConsole:
    return create_app(root, clock=ManualClock(), watch=False, tick_seconds=0)


def idle(root: Path, key: str) -> None:
    Registry(Project(root)).update(key, {"activity": "idle"})


def cell(app: RuneConsole, key: str, column: str = "changes") -> str:
    table = app.agents_pane.table
    return str(table.get_cell(key, column)) if table.has(key) else ""


async def open_review(pilot, key: str) -> ReviewScreen:
    app = pilot.app
    await changes_looked(pilot)
    app.agents_pane.select(key)
    await pilot.press("d")
    await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loads)
    await pilot.pause()
    return app.screen


def status_text(app: RuneConsole) -> str:
    return str(app.query_one(StatusBar).render())


def title(screen: object) -> str:
    return str(screen.query_one("#review-title", Static).render())  # type: ignore[attr-defined]


def toasts(app: RuneConsole) -> str:
    return "\n".join(n.message for n in app._notifications)


async def test_the_changes_column_the_ready_count_and_the_ready_filter(repo: Path) -> None:
    ready, wt = agent_with_worktree(repo, "a")
    commit(wt, {"a.txt": "a\nmore\n", "new.py": "x = 1\n"}, "work")
    idle(repo, ready)
    busy, other = agent_with_worktree(repo, "b")
    write(other, {"b.txt": "b changed\n"})
    Registry(Project(repo)).register("worker", "plain")
    app = console(repo)
    async with app.run_test(size=(160, 30)) as pilot:
        await changes_looked(pilot)
        assert cell(app, ready) == "● +2 −0 2f"
        assert cell(app, busy) == "  +1 −1 1f"
        assert cell(app, "worker-plain") == ""
        assert "ready 1" in status_text(app)
        assert app.agents_pane.review_state(ready) == "ready"
        await pilot.press("slash", *"ready", "enter")
        assert app.agents_pane.table.keys() == [ready]


async def test_a_worktree_deleted_under_the_console_says_gone(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "c")
    write(wt, {"c.txt": "c2\n"})
    app = console(repo)
    async with app.run_test(size=(160, 30)) as pilot:
        await changes_looked(pilot)
        assert cell(app, key) == "  +1 −1 1f"
        shutil.rmtree(wt)
        app.agents_pane.changes_watch.note([app.fleet.get(key)], force=True)
        await until(pilot, lambda: cell(app, key) == "gone")
        screen = await open_review(pilot, key)
        assert f"worktree {wt} is gone" in title(screen)


async def test_the_review_moves_by_file_and_hunk_and_finds_text(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "d")
    body = "".join(f"line {n}\n" for n in range(1, 200))
    commit(wt, {"long.txt": body}, "a long file")
    write(wt, {"long.txt": body.replace("line 20\n", "LINE 20\n").replace("line 150\n", "x\n")})
    write(wt, {"zeta.md": "the needle is here\n"})
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(pilot, key)
        view = screen.query_one(DiffView)
        document = screen.document
        assert screen.query_one(FileList).has_class("-hidden")  # folded at 80 columns
        assert [f.path for f in document.diff.files] == ["long.txt", "zeta.md"]
        await pilot.press("n")
        assert view.cursor == document.files[0]
        await pilot.press("n")
        assert view.cursor == document.files[1]
        await pilot.press("p", "right_square_bracket")
        assert view.cursor == document.hunks[0]
        await pilot.press("slash", *"needle", "enter")
        assert document.rows[view.cursor][1] == "the needle is here"
        assert view.search == "needle"
        await pilot.press("home", "pagedown")
        assert view.cursor >= 20 and view.scroll_offset.y > 0
        # tab: the folded list is shown while it has the focus; enter on a file, or tab,
        # goes back to the diff and folds it again.
        files = screen.query_one(FileList)
        await pilot.press("tab")
        assert files.has_focus and not files.has_class("-hidden")
        await pilot.press("tab")
        assert view.has_focus and files.has_class("-hidden")
        await pilot.press("tab", "down", "enter")
        assert view.has_focus and files.has_class("-hidden")
        assert view.cursor == document.files[1]
        await pilot.press("question_mark")  # the review's own keys, not the panes'
        assert [key for key, _ in app.screen.pane_keys if key == "tab"] == ["tab"]
        assert not app.screen.common
        await pilot.press("escape")
        await pilot.press("f")
        assert not screen.query_one(FileList).has_class("-hidden")
        await pilot.press("escape")
        assert not isinstance(app.screen, ReviewScreen)


async def test_wrapping_gives_a_long_line_the_screen_lines_it_needs(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "e")
    write(wt, {"wide.txt": "w" * 500 + "\n"})
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(pilot, key)
        view = screen.query_one(DiffView)
        rows = len(screen.document)
        assert view.virtual_size.height == rows
        await pilot.press("w")
        assert view.virtual_size.height > rows + 5
        assert "w" * 20 in "".join(s.text for s in [view.render_line(y) for y in range(10)])


async def test_a_20000_line_file_is_drawn_line_by_line(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "f")
    write(wt, {"huge.py": "".join(f"value_{n} = {n}\n" for n in range(20_000))})
    app = console(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_review(pilot, key)
        view = screen.query_one(DiffView)
        assert len(screen.document) > 20_000
        assert len(list(view.query("*"))) == 0  # no widget per line: lines are drawn
        assert len(list(screen.query("*"))) < 40
        await pilot.press("end")
        assert view.cursor == len(screen.document) - 1
        assert "value_19999 = 19999" in view.render_line(view.size.height - 1).text


async def test_comments_go_on_the_line_under_the_cursor_or_the_whole_change(
    repo: Path,
) -> None:
    key, wt = agent_with_worktree(repo, "g")
    commit(wt, {"app.py": "def handler(request):\n    return request\n"}, "handler")
    app = console(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_review(pilot, key)
        view = screen.query_one(DiffView)
        document = screen.document
        view.move_to(next(n for n, r in enumerate(document.rows) if r[1] == "    return request"))
        await pilot.press("c")
        box = screen.query_one("#review-input", Input)
        assert box.display and "app.py:2" in box.placeholder
        await pilot.press(*"Return a response.", "enter")
        await until(pilot, lambda: len(screen.comments) == 1)
        await pilot.press("C", *"Add tests.", "enter")
        await until(pilot, lambda: len(screen.comments) == 2)
        assert any(r[1] == "Return a response." for r in screen.document.rows)
    [record] = ReviewRecords(Project(repo)).history(key)
    assert [(c.file, c.line, c.quoted, c.text) for c in record.comments] == [
        ("app.py", 2, "    return request", "Return a response."),
        (None, None, None, "Add tests."),
    ]


async def test_approving_queues_the_branch_and_shows_its_conflicts_at_once(
    repo: Path,
) -> None:
    key, wt = agent_with_worktree(repo, "h")
    commit(wt, {"a.txt": "agent a\n"}, "edit a")
    idle(repo, key)
    commit_in_checkout(repo, {"a.txt": "operator a\n"}, "operator edits a")
    app = console(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_review(pilot, key)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: "predicted conflicts: with a.txt" in toasts(app))
        await until(pilot, lambda: "approved" in title(app.screen))
    [entry] = MergeQueue(Project(repo)).read().entries
    assert (entry.branch, entry.identity) == ("feat-h", key)


async def test_enter_on_a_queue_entry_opens_its_agents_review(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "i")
    commit(wt, {"i.txt": "i\n"}, "i")
    queue = MergeQueue(Project(repo))
    queue.add("feat-i", identity=key)
    _, other = agent_with_worktree(repo, "j", register=False)
    commit(other, {"j.txt": "j\n"}, "j")
    queue.add("feat-j", identity="worker-gone")
    app = console(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("5")
        pane = app.query_one(MergeQueuePane)
        await settle(pilot)
        pane.table.move_cursor(row=0)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loads)
        assert app.screen.target.label == key
        await pilot.press("escape")
        pane.table.move_cursor(row=1)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loads)
        screen = app.screen
        assert screen.target.label == "feat-j" and not screen.target.decides
        assert [f.path for f in screen.document.diff.files] == ["j.txt"]
        await pilot.press("c")
        assert not screen.query_one("#review-input", Input).display


# -- snapshots --------------------------------------------------------------------------------

SNAP_ROOT = SNAP / "review"


@pytest.fixture
def review_scene(snap_dir: Path) -> RuneConsole:
    """The demo scene on a repository made the same way each time (its commit ids too)."""
    fixed_repo(SNAP_ROOT)
    clock = ManualClock()
    build_scene(SNAP_ROOT, clock)
    return create_app(SNAP_ROOT, clock=clock, watch=False, tick_seconds=0)


async def on_the_comment(pilot) -> None:
    screen = await open_review(pilot, READY_AGENT)
    view = screen.query_one(DiffView)
    _, line, _ = COMMENT
    index = next(n for n, r in enumerate(screen.document.rows) if r[3] == line and r[0] in "+ ")
    view.move_to(index, center=True)
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (150, 40)])
def test_snapshot_review(snap_compare, review_scene: RuneConsole, size) -> None:
    assert snap_compare(review_scene, terminal_size=size, run_before=on_the_comment)


async def test_the_agents_detail_lists_its_reviews(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "k")
    commit(wt, {"k.txt": "k2\n"}, "k")
    reviews = Reviews(Project(repo))
    reviews.comment(key, "first round")
    reviews.approve(key)
    reviews.comment(key, "second round")
    app = console(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        app.agents_pane.select(key)
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.screen.query("#detail-reviews")))  # read after the
        shown = str(app.screen.query_one("#detail-reviews", Static).render())  # first frame
    lines = shown.strip().splitlines()
    assert lines[0] == "Reviews"
    assert lines[1].startswith("0002-") and "open" in lines[1] and "1 comment" in lines[1]
    assert lines[2].startswith("0001-") and "approved" in lines[2] and "mq-feat-k-" in lines[2]


async def test_the_screen_kept_between_reviews_shows_each_agents_own(repo: Path) -> None:
    first, one = agent_with_worktree(repo, "l")
    second, two = agent_with_worktree(repo, "n")
    write(one, {"one.txt": "1\n"})
    write(two, {"two.txt": "2\n"})
    app = console(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        for key, path in ((first, "one.txt"), (second, "two.txt"), (first, "one.txt")):
            screen = await open_review(pilot, key)
            assert [f.path for f in screen.document.diff.files] == [path]
            assert screen.query_one(DiffView).has_focus
            await pilot.press("escape")
            await pilot.pause()
        write(one, {"one.txt": "1 again\n"})  # changed meanwhile: read again
        screen = await open_review(pilot, first)
        assert "+1 again" in screen.document.diff.file("one.txt").lines


async def test_a_review_opened_again_comes_up_with_its_diff_and_leaves_the_footer_be(
    repo: Path,
) -> None:
    key, worktree = agent_with_worktree(repo, "o")
    write(worktree, {"o.txt": "o\n"})
    app = console(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_review(pilot, key)  # the first review builds the screen
        await pilot.press("escape")
        await pilot.pause()
        loads_when_shown: list[int] = []
        app.screen_change_signal.subscribe(
            app, lambda screen: loads_when_shown.append(getattr(screen, "loads", -1))
        )
        builds_before = app.query_one(ConsoleFooter).builds
        write(worktree, {"o.txt": "o changed\n"})
        screen = await open_review(pilot, key)
        assert loads_when_shown == [1]  # pushed with the diff read: one paint, not two
        assert "+o changed" in screen.document.diff.file("o.txt").lines
        assert app.query_one(ConsoleFooter).builds == builds_before  # its keys not redrawn
        await pilot.press("escape")
        await pilot.pause()


async def test_the_next_page_is_drawn_ahead_so_page_down_draws_only_the_cursor(
    repo: Path,
) -> None:
    key, wt = agent_with_worktree(repo, "g")
    write(wt, {"long.py": "".join(f"value_{n} = {n}\n" for n in range(300))})
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(pilot, key)
        view = screen.query_one(DiffView)
        await pilot.pause(0.5)  # the screen drawn, then the pages ahead of it
        assert not view._ahead
        drawn: list[int] = []
        drawing = view._strip

        def counted(row: int, part: int, width: int, cursor: bool) -> object:
            drawn.append(row)
            return drawing(row, part, width, cursor)

        view._strip = counted  # type: ignore[method-assign]
        await pilot.press("pagedown")
        await pilot.pause()
        top, height = int(view.scroll_offset.y), view.scrollable_content_region.height
        assert top > 0
        on_screen = [row for row in drawn if top <= row < top + height]
        assert on_screen == [view.cursor]  # every other line on screen was drawn ahead
