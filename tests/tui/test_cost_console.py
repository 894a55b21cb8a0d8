"""Money in the consoles: the COST column, the top line's spending and the plan's headroom,
a toast when a budget is crossed, ``$`` to let a held agent go on; and the fleet
console's spending by source, from the sources' streams."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from runeconsole.core.fleet_file import SourceSpec
from runeconsole.tui.app import create_app
from runeconsole.tui.budget_allow import AllowWindow
from runeconsole.tui.fleet_console.app import create_fleet_app
from runeconsole.tui.fleet_console.sources_bar import SourcesBar
from runeconsole.tui.problems_pane import ProblemsPane
from runeconsole.tui.status_bar import StatusBar
from tests.support.claude import KEY, Bridge, in_thread
from tests.support.cost import spend as book
from tests.support.fleet import project_root
from tests.support.polling import until

pytestmark = pytest.mark.timeout(120)


def top(app: object) -> str:
    return str(app.query_one(StatusBar).render())  # type: ignore[attr-defined]


def cost_cell(app: object) -> str:
    table = app.agents_pane.table  # type: ignore[attr-defined]
    return str(table.get_cell(KEY, "cost")) if table.has(KEY) else ""


def spend(made: Bridge, usd: float) -> None:
    """A subscription's status line with the session's cost at ``usd`` (its plan's windows
    reset in an hour and in three days, whenever the test runs)."""
    data = made.status_input("subscription")
    now = int(time.time())
    limits = {
        "five_hour": {"used_percentage": 42, "resets_at": now + 3600},
        "seven_day": {"used_percentage": 17, "resets_at": now + 3 * 86400},
    }
    cost = {**data["cost"], "total_cost_usd": usd}
    made.status_line({**data, "cost": cost, "rate_limits": limits})


async def test_spending_shows_crossed_budgets_toast_and_dollar_lets_the_agent_go_on(
    hooked: Bridge,
) -> None:
    (hooked.project / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  budgets:\n    per_day_usd: 1\n"
    )
    app = create_app(hooked.project, rescan_seconds=60)
    async with app.run_test(size=(160, 30)) as pilot:
        await in_thread(lambda: hooked.send("SessionStart"))
        await in_thread(lambda: spend(hooked, 0.5))
        await until(pilot, lambda: cost_cell(app) == "$0.50")
        await until(pilot, lambda: "$0.50 today" in top(app))
        assert "5h 42% ↻" in top(app) and "7d 17%" in top(app)  # the plan, from its line
        await in_thread(lambda: spend(hooked, 0.9))
        problems = app.query_one(ProblemsPane)
        await until(pilot, lambda: f"{KEY}/budget" in problems.records)
        toasts = [n.message for n in app._notifications]
        assert f"{KEY}: per_day_usd: $0.90 of $1.00 today (90%)" in toasts
        await in_thread(lambda: spend(hooked, 1.2))
        await until(pilot, lambda: problems.records[f"{KEY}/budget"].detail.startswith("held"))
        await until(pilot, lambda: any("is held" in n.message for n in app._notifications))
        app.agents_pane.select(KEY)
        await pilot.press("dollar_sign")
        await until(pilot, lambda: isinstance(app.screen, AllowWindow))
        await pilot.press("x", "enter")  # not dollars: said, and the window stays
        assert isinstance(app.screen, AllowWindow)
        await pilot.press("backspace", "2", "enter")
        await until(pilot, lambda: f"{KEY}/budget" not in problems.records)
        assert hooked.identity()["cost"]["budget"]["state"] == "allowed"
        quiet = await in_thread(lambda: hooked.send("PreToolUse-Bash"))
        assert quiet.stdout == ""  # type: ignore[attr-defined]


async def test_the_fleet_console_shows_each_sources_spending(tmp_path: Path) -> None:
    shop, ml = project_root(tmp_path, "shop", "a"), project_root(tmp_path, "ml", "b")
    book(shop, "worker-a", "s1", 2.5)
    book(ml, "worker-b", "s2", 0.75, estimated=True)
    specs = [SourceSpec("shop", str(shop)), SourceSpec("ml", str(ml))]
    app = create_fleet_app(specs, heartbeat=0.5, tick_seconds=0)
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: len(app.panes[0].table.keys()) == 2)
        table = app.panes[0].table
        assert str(table.get_cell("shop/worker-a", "cost")) == "$2.50"
        assert str(table.get_cell("ml/worker-b", "cost")) == "~$0.75"
        line = str(app.query_one(SourcesBar).render())
        assert "shop ●1 ●0 ●0 $2.50" in line and "ml ●1 ●0 ●0 $0.75" in line
        assert "~$3.25 today" in line and "~$3.25 in all" in line
