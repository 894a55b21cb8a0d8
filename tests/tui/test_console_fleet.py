"""The console over a fleet too large to read before the first frame: it paints first,
fills after, and follows changes by key."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.control import CONTROL
from runeconsole.core.timeutil import iso_z
from runeconsole.services.cost.ledger import local_day
from runeconsole.services.fleet.model import FleetChange, FleetModel
from runeconsole.tui.cells.agent_cells import dollars
from runeconsole.tui.console.app import INLINE_LOAD, RuneConsole, create_app
from runeconsole.tui.console.status_bar import StatusBar
from runeconsole.tui.panes.pane import FIRST_ROWS
from runeconsole.tui.support.messages import FleetChanged
from tests.support.polling import until

AGENTS = INLINE_LOAD + 300


def write_fleet(project: Path, clock: ManualClock, count: int, *, spent: bool = False) -> None:
    """``count`` workers, one in a hundred crashed; ``spent``: each agent ``n`` has spent
    ``n`` cents, half of it today."""
    directory = project / ".claude" / "state" / "identities"
    directory.mkdir(parents=True, exist_ok=True)
    stamp = iso_z(clock.now())
    for n in range(count):
        body: dict[str, object] = {
            "role": "worker",
            "name": f"w{n:05d}",
            "status": "active",
            "last_seen": stamp,
        }
        if n % 100 == 7:
            body["status"] = "crashed"
        if spent:
            body["cost"] = {"usd": n / 100, "today_usd": n / 200, "day": local_day(clock.now())}
        (directory / f"worker-w{n:05d}.json").write_text(json.dumps(body))


@asynccontextmanager
async def filled(project: Path, clock: ManualClock) -> AsyncIterator[tuple[RuneConsole, Pilot]]:
    """The console over a fleet of ``AGENTS``, once every row is in its table."""
    write_fleet(project, clock, AGENTS)
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.row_count == AGENTS)
        yield app, pilot


async def test_a_large_fleet_is_read_after_the_first_frame_and_every_row_follows(
    project: Path, clock: ManualClock
) -> None:
    async with filled(project, clock) as (app, pilot):
        keys = on_screen(app)
        assert keys == sorted(keys) and len(keys) == AGENTS  # in order, chunk after chunk
        assert app.fleet.counts()["red"] == AGENTS // 100 + (AGENTS % 100 > 7)
        await until(
            pilot,
            lambda: (
                f"{AGENTS - app.fleet.counts()['red']}" in str(app.query_one(StatusBar).render())
            ),
        )
        problems = app.query_one("#problems-table")  # judged after the rows: filled then
        await until(pilot, lambda: problems.row_count == app.fleet.counts()["red"])


async def test_a_filter_typed_during_the_fill_wins_over_it(
    project: Path, clock: ManualClock
) -> None:
    write_fleet(project, clock, AGENTS)
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: len(app.fleet) == AGENTS)
        await pilot.press("slash", *"w0120")
        table = app.agents_pane.table
        await until(pilot, lambda: table.row_count == 10)
        await pilot.pause(0.5)  # no chunk of the unfiltered fill arrives after it
        shown = table.keys()
        assert all(key.startswith("worker-w0120") for key in shown)
        await pilot.press("escape")
        await until(pilot, lambda: table.row_count == AGENTS)


async def test_a_filter_matching_more_than_a_screenful_brings_every_match_in_order_aged_now(
    project: Path, clock: ManualClock
) -> None:
    async with filled(project, clock) as (app, pilot):
        table = app.agents_pane.table
        clock.advance(65)
        await pilot.press("slash", "w", "0", "0")
        matching = [f"worker-w{n:05d}" for n in range(AGENTS) if "w00" in f"w{n:05d}"]
        assert len(matching) > FIRST_ROWS  # the rest arrive in chunks after the first frame
        await until(pilot, lambda: table.row_count == len(matching))
        assert table.keys() == matching
        assert str(table.get_cell(matching[0], "seen")) == "1m05s"  # as of now, not the fill


async def test_a_large_fleet_s_first_rows_come_before_its_problems_spending_and_monitor(
    project: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fleet(project, clock, AGENTS, spent=True)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")  # a tmux is there
    app = create_app(project, clock=clock, watch=False, tick_seconds=0, monitor=True)
    at_first_rows: dict[str, object] = {}
    monitor_started: list[tuple[int, float]] = []
    loaded = app._fleet_loaded

    def first_rows(change: FleetChange) -> None:
        loaded(change)
        table = app.agents_pane.table
        first = table.keys()[0]
        at_first_rows.update(
            first=first,
            cost=str(table.get_cell(first, "cost")),
            problems=len(app.fleet.problems),
            spent=app.spending.totals.usd(),
        )

    monkeypatch.setattr(app, "_fleet_loaded", first_rows)
    monkeypatch.setattr(
        app,
        "run_monitor",
        lambda: monitor_started.append((len(app.fleet.problems), app.spending.totals.usd())),
    )
    crashed = AGENTS // 100 + (AGENTS % 100 > 7)
    in_all = sum(range(AGENTS)) / 100
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: bool(monitor_started))
        # The first rows were drawn, right, before any problem or spending was worked out.
        assert at_first_rows == {
            "first": "worker-w00000",
            "cost": "$0.00",
            "problems": 0,
            "spent": 0,
        }
        # Then every agent's problems and spending, and only then the monitor (once).
        assert monitor_started == [(crashed, pytest.approx(in_all))]
        await until(pilot, lambda: app.query_one("#problems-table").row_count == crashed)
        await until(pilot, lambda: f"{dollars(in_all / 2)} today" in status_line(app))
        assert f"{dollars(in_all)} in all" in status_line(app)
        await until(pilot, lambda: app.agents_pane.table.row_count == AGENTS)
        assert str(app.agents_pane.table.get_cell("worker-w00150", "cost")) == "$1.50"
        app.load_fleet()  # read again (as a test or a reload may): the monitor runs once
        await pilot.pause(0.3)
        assert len(monitor_started) == 1


def status_line(app: RuneConsole) -> str:
    return str(app.query_one(StatusBar).render())


def on_screen(app: RuneConsole) -> list[str]:
    """The Agents table's keys in the order they are drawn."""
    return app.agents_pane.table.keys()


async def test_an_agent_changed_before_the_fill_reaches_it_still_ends_in_its_place(
    project: Path, clock: ManualClock
) -> None:
    async with filled(project, clock) as (app, pilot):
        pane = app.agents_pane
        pane.fill()  # as a cleared filter does: a screenful now, the rest in chunks
        late = "worker-w01000"  # not added again yet, and its file changes meanwhile
        pane.on_fleet_changed(FleetChanged(FleetChange(changed=frozenset({late}))))
        await until(pilot, lambda: pane.table.row_count == AGENTS)
        await pilot.pause(0.2)
        keys = on_screen(app)
        assert keys == sorted(keys) and keys.index(late) == 1000


def one_agent_with(project: Path, clock: ManualClock, **fields: str) -> None:
    """A fleet of one agent whose identity carries ``fields`` as another process wrote them."""
    write_fleet(project, clock, 1)
    path = project / ".claude" / "state" / "identities" / "worker-w00000.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))


async def test_a_name_that_looks_like_markup_is_drawn_as_written(
    project: Path, clock: ManualClock
) -> None:
    one_agent_with(project, clock, node_id="node[red]x", tmux_session=":smile:")
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(160, 30)):
        shown = app.export_screenshot()
        assert "node[red]x" in shown.replace("&#160;", " ") and ":smile:" in shown


async def test_escape_sequences_in_an_agent_s_fields_never_reach_the_terminal(
    project: Path, clock: ManualClock
) -> None:
    one_agent_with(
        project, clock, node_id="\x1b]0;owned\x07\x1b[2Jn\x9b1", tmux_session="s\x1b[31m"
    )
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        table = app.agents_pane.table
        lines = table.render_lines(Region(0, 0, table.size.width, 3))  # as the screen draws
        text = "".join(segment.text for line in lines for segment in line)
        assert "]0;owned" in text and "[2Jn" in text  # shown, as harmless text
        assert not CONTROL.search(text)
        assert all(line.cell_length == table.size.width for line in lines)


async def test_rows_share_one_cell_per_text_and_style(project: Path, clock: ManualClock) -> None:
    write_fleet(project, clock, 3)
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.agents_pane.table
        await until(pilot, lambda: table.row_count == 3)
        first, second = (
            table.get_cell(key, "status") for key in ("worker-w00000", "worker-w00001")
        )
        assert first is second  # one Text for the same words, however many rows show them


async def test_a_first_load_slower_than_the_rescan_period_still_shows_every_row(
    project: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold disk: the rescan falls due while the first load still reads. It waits for
    the load (both are one worker group, and the rescan would cancel the load: the model
    would hold the fleet and the table stay empty)."""
    write_fleet(project, clock, AGENTS)
    load = FleetModel.load

    def slow(model: FleetModel, **options: bool) -> FleetChange:
        change = load(model, **options)
        time.sleep(1.0)  # five rescan periods
        return change

    monkeypatch.setattr(FleetModel, "load", slow)
    app = create_app(project, clock=clock, rescan_seconds=0.2, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.agents_pane.table.row_count == AGENTS, timeout=10)
