"""Reviewing from the fleet console: ``d`` on an agent (or enter on its queue entry) opens
its review, read with ``review AGENT --json`` on the agent's source, and comments and
approvals go back there as the same CLI commands, over a real private sshd for a host."""

from __future__ import annotations

from pathlib import Path

from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.records import ReviewRecords
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.review.diff_view import DiffView
from runeconsole.tui.review.screen import ReviewScreen
from tests.support.fleet import project_root
from tests.support.polling import until
from tests.support.review import agent_with_worktree, commit, write
from tests.support.sshd import Sshd
from tests.tui.test_fleet_console import console, remote, shown


async def reviewing(pilot, app) -> ReviewScreen:
    await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loads, 60)
    await pilot.pause()
    return app.screen


async def test_an_agent_on_a_host_is_reviewed_commented_and_approved_over_ssh(
    sshd: Sshd, tmp_path: Path
) -> None:
    far = project_root(tmp_path, "far")
    key, worktree = agent_with_worktree(far, "r")
    commit(worktree, {"api.py": "def handler():\n    return 200\n"}, "api handler")
    write(worktree, {"notes.md": "- handler\n"})
    Registry(Project(far)).update(key, {"activity": "idle"})  # its session stopped: ready
    here = project_root(tmp_path, "here", "a")
    specs = [SourceSpec("here", str(here)), remote(sshd, "far", far)]
    async with console(specs, sockets=sshd.sockets) as (app, pilot):
        await until(pilot, lambda: "far/worker-r" in shown(app, 0))
        app.panes[0].table.move_to("far/worker-r")
        await pilot.press("d")
        screen = await reviewing(pilot, app)
        assert screen.target.label == "far/worker-r" and screen.loaded.state == "ready"
        assert [f.path for f in screen.document.diff.files] == ["api.py", "notes.md"]
        view = screen.query_one(DiffView)
        view.move_to(
            next(n for n, r in enumerate(screen.document.rows) if r[1] == "    return 200")
        )
        await pilot.press("c", *"-1 would be clearer", "enter")  # a text that looks like an option
        records = ReviewRecords(Project(far))
        await until(pilot, lambda: (r := records.open_review(key)) is not None and r.comments, 60)
        [said] = records.open_review(key).comments
        assert (said.file, said.line, said.quoted, said.text) == (
            "api.py",
            2,
            "    return 200",
            "-1 would be clearer",
        )
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        queue = MergeQueue(Project(far))
        await until(pilot, lambda: queue.read().entries, 60)
        await until(pilot, lambda: screen.loaded.state == "approved", 60)
    [entry] = queue.read().entries
    assert (entry.branch, entry.identity, entry.get("worktree_path")) == (
        "feat-r",
        key,
        str(worktree),
    )


async def test_enter_on_a_queue_entry_reviews_its_agent_on_its_source(tmp_path: Path) -> None:
    root = project_root(tmp_path, "one")
    key, worktree = agent_with_worktree(root, "q")
    commit(worktree, {"q.txt": "q\n"}, "q")
    MergeQueue(Project(root)).add("feat-q", identity=key)
    MergeQueue(Project(root)).add("feat-none")
    specs = [SourceSpec("one", str(root)), SourceSpec("two", str(project_root(tmp_path, "two")))]
    async with console(specs) as (app, pilot):
        await pilot.press("6")
        await until(pilot, lambda: len(shown(app, 5)) == 2)
        queue = app.panes[5].table
        queue.move_cursor(row=row_of(queue, "mq-feat-q-"))
        await pilot.press("enter")
        screen = await reviewing(pilot, app)
        assert screen.target.label == f"one/{key}"
        assert [f.path for f in screen.document.diff.files] == ["q.txt"]
        await pilot.press("escape")
        notes: list[str] = []
        app.notify = lambda message, **_: notes.append(message)  # type: ignore[method-assign]
        queue.move_cursor(row=row_of(queue, "mq-feat-none-"))
        await pilot.press("d")
        await until(pilot, lambda: notes)
        assert notes == ["this entry names no agent to review"]
        assert not isinstance(app.screen, ReviewScreen)


def row_of(table, part: str) -> int:
    keys = table.keys()  # a KeyedTable's shown keys
    return table.get_row_index(next(key for key in keys if part in key))
