"""The harness's DOT pipelines in the console, driven with Pilot over the harness's own
files (``tests/interop/pipeline``, copied writable): the Pipelines pane and its states, a
pipeline's nodes in dependency order (an unreadable DOT says why over its last good
reading), and human gates answered from the gate window (its files written as the
harness reads them), from Problems and from ``a``."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual.widgets import Input, Static

from runeconsole.adapters.clock import ManualClock
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.panes.pipelines_pane import PIPELINES, LocalPipelinesPane
from runeconsole.tui.panes.problems_pane import ProblemsPane
from runeconsole.tui.pipelines.gate_window import GateWindow, rejection_said
from runeconsole.tui.pipelines.screen import PipelineScreen
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from tests.support.console import settle
from tests.support.pipelines import AT_GATE, STEMS, live_runner, whole_root
from tests.support.pipelines import PIPELINES as DOTS
from tests.support.polling import until

GATE_ROW = "gate-demo/review/gate"


def console(root: Path) -> RuneConsole:
    return create_app(root, clock=ManualClock(), watch=False, tick_seconds=0)


async def loaded(pilot) -> LocalPipelinesPane:
    pane = pilot.app.query_one(LocalPipelinesPane)
    await until(pilot, lambda: pane.loads)
    await pilot.pause()
    return pane


def cell(pane: LocalPipelinesPane, key: str, column: str) -> str:
    value = pane.table.get_cell(key, column)
    return value.plain if isinstance(value, Text) else str(value)


def dot_status(root: Path, stem: str, node: str) -> str:
    from runeconsole.services.pipelines.store import read_plan

    plan = read_plan(root / DOTS / f"{stem}.dot")
    found = plan.node(node)
    assert found is not None
    return found.status


async def open_pipeline(pilot, stem: str) -> PipelineScreen:
    app = pilot.app
    await pilot.press("8")
    app.query_one(LocalPipelinesPane).select(stem)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, PipelineScreen) and app.screen.shows)
    await pilot.pause()
    return app.screen


async def test_the_pane_lists_every_pipeline_with_its_state_progress_and_runner(
    tmp_path: Path,
) -> None:
    root = whole_root(tmp_path)
    async with console(root).run_test(size=(160, 40)) as pilot:
        pane = await loaded(pilot)
        await pilot.press("8")
        assert pilot.app.query_one(PaneTabs).active == PIPELINES
        assert sorted(pane.table.keys()) == STEMS
        assert cell(pane, "gate-reject-demo", "state") == "gate"
        assert pane.table.get_cell("gate-reject-demo", "state").style == "bold yellow"
        assert cell(pane, "engine-demo", "state") == "complete"
        assert cell(pane, "auth-demo", "state") == "running"
        assert cell(pane, "auth-demo", "progress") == "3✓ 1▶ 1·"
        assert cell(pane, "gate-reject-demo", "gates") == "1"
        assert cell(pane, "engine-demo", "runner") == "engine gone"
        assert cell(pane, "tdd-ci-demo", "runner") == "cli"
        assert cell(pane, "tdd-ci-demo", "prd") == "PRD-CI-DEMO"


async def test_enter_shows_the_nodes_in_dependency_order_and_an_unreadable_dot_says_why(
    tmp_path: Path,
) -> None:
    root = whole_root(tmp_path)
    async with console(root).run_test(size=(120, 40)) as pilot:
        pane = await loaded(pilot)
        screen = await open_pipeline(pilot, "gate-reject-demo")
        assert screen.table.keys() == ["start", "validate_graph", "review", "decide", "finalize"]
        assert screen.table.get_cell("review", "status").plain == "active"
        assert screen.table.get_cell("validate_graph", "from").plain == "start, decide [fail]"
        assert screen.table.get_cell("review", "agent").plain == "no agent"
        await pilot.press("t")
        await until(pilot, lambda: screen.moments is not None)
        history = str(screen.query_one("#pipeline-history-text", Static).render())
        assert "rejection loop" in history
        await pilot.press("escape")

        dot = root / DOTS / "auth-demo.dot"
        dot.write_text(dot.read_text()[:200])  # cut as an in-place rewrite leaves it
        pane.reread({"auth-demo"})
        await pilot.pause()
        assert cell(pane, "auth-demo", "state") == "unreadable"
        assert cell(pane, "auth-demo", "note").startswith("unreadable: ")
        screen = await open_pipeline(pilot, "auth-demo")
        title = str(screen.query_one("#pipeline-title", Static).render())
        assert "unreadable: " in title and "last good reading" in title
        assert screen.table.row_count == 5  # its last good nodes


async def test_approving_a_gate_in_its_window_validates_it_and_its_problem_goes(
    tmp_path: Path,
) -> None:
    root = whole_root(tmp_path, AT_GATE)
    async with console(root).run_test(size=(100, 30)) as pilot:
        app = pilot.app
        await loaded(pilot)
        problems = app.query_one(ProblemsPane)
        assert problems.table.has(GATE_ROW)
        assert problems.table.get_cell(GATE_ROW, "kind").plain == "gate"
        detail = problems.table.get_cell(GATE_ROW, "detail").plain
        assert detail.startswith("PRD-GATE-DEMO review: Human review, waiting ")
        await pilot.press("2")
        problems.select(GATE_ROW)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, GateWindow))
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, GateWindow))
        await settle(pilot)
        assert dot_status(root, "gate-demo", "review") == "validated"
        assert not problems.table.has(GATE_ROW)
        assert any("gate-demo/review approved" in n.message for n in app._notifications)


async def test_rejecting_a_gate_of_a_live_runner_needs_a_reason_and_sends_the_work_back(
    tmp_path: Path,
) -> None:
    root = whole_root(tmp_path, AT_GATE)
    with live_runner(root, "gate-demo"):
        async with console(root).run_test(size=(100, 30)) as pilot:
            app = pilot.app
            await loaded(pilot)
            await pilot.press("8", "g")
            await until(pilot, lambda: isinstance(app.screen, GateWindow))
            window = app.screen
            assert "back to pending" in rejection_said(window.pipeline, window.gate)
            await pilot.press("n")
            assert app.focused is window.query_one("#gate-reason", Input)
            await pilot.press("enter")  # no reason: refused
            assert isinstance(app.screen, GateWindow)
            assert "needs a reason" in str(window.query_one("#gate-note", Static).render())
            await pilot.press(*"missing tests", "enter")
            await until(pilot, lambda: not isinstance(app.screen, GateWindow))
            await settle(pilot)
            guidance = root / DOTS / "signals" / "gate-demo" / "guidance" / "validate_graph.txt"
            assert "missing tests" in guidance.read_text()
            assert dot_status(root, "gate-demo", "validate_graph") == "pending"
            assert dot_status(root, "gate-demo", "review") == "active"


async def test_a_opens_the_gate_window_when_a_gate_is_the_oldest_thing_waiting(
    tmp_path: Path,
) -> None:
    root = whole_root(tmp_path, AT_GATE)
    async with console(root).run_test(size=(100, 30)) as pilot:
        app = pilot.app
        await loaded(pilot)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, GateWindow))
        assert app.screen.gate.key == "gate-demo/review"


async def test_a_second_answer_to_a_gate_says_it_was_answered_already(tmp_path: Path) -> None:
    root = whole_root(tmp_path, AT_GATE)
    async with console(root).run_test(size=(100, 30)) as pilot:
        app = pilot.app
        pane = await loaded(pilot)
        await pilot.press("8", "g")
        await until(pilot, lambda: isinstance(app.screen, GateWindow))
        # Another console (or the CLI) answers first.
        app.gate_answers.answer("gate-demo", "review", "approve", by="elsewhere")
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, GateWindow))
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert any("answered already" in m or "not waiting" in m for m in said), said
        claims = list((root / ".claude" / "state" / "gates" / "gate-demo").iterdir())
        assert len(claims) == 1
        assert json.loads(claims[0].read_text())["by"] == "elsewhere"
        assert not pane.records["gate-demo"].gates
