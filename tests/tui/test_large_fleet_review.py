"""The review states of a fleet too large to read before the first frame: worked out
after its first rows are painted (the Agents pane's ``_follow_review``), and then right
in the CHANGES column, the ready count and the ``/ ready`` filter."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters.clock import ManualClock
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.tui.console.app import create_app
from runeconsole.tui.console.status_bar import StatusBar
from tests.support.console import changes_looked
from tests.support.polling import until
from tests.support.review import agent_with_worktree, commit
from tests.tui.test_console_fleet import AGENTS, write_fleet


async def test_a_large_fleet_s_review_states_follow_its_first_rows(repo: Path) -> None:
    clock = ManualClock()
    write_fleet(repo, clock, AGENTS)
    ready, worktree = agent_with_worktree(repo, "zz-ready", clock=clock)
    commit(worktree, {"a.txt": "a\nmore\n", "new.py": "x = 1\n"}, "work")
    Registry(Project(repo, clock)).update(ready, {"activity": "idle"})
    app = create_app(repo, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.agents_pane.table
        await until(pilot, lambda: table.row_count == AGENTS + 1)
        await changes_looked(pilot)
        await until(pilot, lambda: str(table.get_cell(ready, "changes")) == "● +2 −0 2f")
        assert app.agents_pane.review_state(ready) == "ready"
        assert "ready 1" in str(app.query_one(StatusBar).render())
        await pilot.press("slash", *"ready", "enter")
        await until(pilot, lambda: table.keys() == [ready])
