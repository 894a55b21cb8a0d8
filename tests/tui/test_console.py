"""The console, driven by Pilot: keys, live updates by key, bad files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Input, Static

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.files import atomic_write_bytes
from runeconsole.demo.scene import CAST, build_scene
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.console.status_bar import StatusBar
from runeconsole.tui.modals.agent_detail import AgentDetail
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.help_screen import HelpScreen
from runeconsole.tui.modals.message_modal import MessageModal
from runeconsole.tui.widgets.footer import ConsoleFooter
from tests.support.console import burst
from tests.support.polling import until


def scene_console(project: Path, clock: ManualClock) -> RuneConsole:
    """The console on the demo's fixed scene, its clock still (no watcher, no tick)."""
    build_scene(project, clock)
    return create_app(project, clock=clock, watch=False, tick_seconds=0)


def cell(app, key: str, column: str) -> str:
    return str(app.agents_pane.table.get_cell(key, column))


async def test_scene_shows_every_state(project: Path, clock: ManualClock) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(120, 30)):
        table = app.agents_pane.table
        assert table.row_count == len(CAST) + 1
        # An active agent's status says what it is doing: from its hooks, else its pane.
        assert cell(app, "orchestrator-billing", "status") == "idle"
        assert cell(app, "orchestrator-auth", "status") == "busy"
        assert cell(app, "claude-shop-7f3a91c2", "status") == "waiting"
        assert cell(app, "claude-shop-7f3a91c2", "wait") == "!"
        assert cell(app, "orchestrator-auth", "tokens") == "1.5M"
        assert cell(app, "runner-auth", "status") == "active"
        assert cell(app, "worker-docs", "status") == "terminated"
        assert cell(app, "worker-ghost", "status") == "unreadable"
        assert cell(app, "worker-ghost", "predecessor").startswith("unreadable: not valid JSON")
        assert app.agents_pane.figures() == {"red": 3, "yellow": 1, "green": 9, "grey": 1}
        status = app.query_one(StatusBar)
        assert status.figures["agents"]["red"] == 3


async def test_live_updates_are_applied_by_key(project: Path) -> None:
    registry = Registry(Project(project))
    registry.register("worker", "a")
    registry.register("worker", "b")
    app = create_app(project, rescan_seconds=60)
    async with app.run_test() as pilot:
        table = app.agents_pane.table
        cleared = []
        table.clear = lambda *a, **k: cleared.append(a)  # a refill would show up here
        registry.register("worker", "c")
        await until(pilot, lambda: table.has("worker-c"))
        registry.mark_crashed("worker-a")
        await until(pilot, lambda: cell(app, "worker-a", "status") == "crashed")
        assert table.keys() == ["worker-a", "worker-b", "worker-c"]
        registry.path_for("worker-b").unlink()
        await until(pilot, lambda: not table.has("worker-b"))
        atomic_write_bytes(registry.path_for("worker-c"), b"\x00\x01 not json")
        await until(pilot, lambda: cell(app, "worker-c", "status") == "unreadable")
        assert cleared == []


async def test_rescan_covers_missed_events(project: Path) -> None:
    registry = Registry(Project(project))
    app = create_app(project, watch=False, tick_seconds=0)
    async with app.run_test() as pilot:
        registry.register("worker", "late")
        app.rescan_fleet()
        await until(pilot, lambda: app.agents_pane.table.has("worker-late"))


async def test_ticks_turn_rows_yellow_then_red(project: Path, clock: ManualClock) -> None:
    Registry(Project(project, clock)).register("worker", "a")
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test() as pilot:
        pane = app.agents_pane
        assert cell(app, "worker-a", "seen") == "0s"
        clock.advance(125)
        app.tick()
        await pilot.pause()
        assert pane.records["worker-a"].liveness == "yellow"
        assert cell(app, "worker-a", "seen") == "2m05s"
        clock.advance(300)
        app.tick()
        await pilot.pause()
        assert pane.figures()["red"] == 1


async def test_filter_and_escape(project: Path, clock: ManualClock) -> None:
    app = scene_console(project, clock)
    async with app.run_test() as pilot:
        await pilot.press("slash", *"runner")
        assert sorted(app.agents_pane.table.keys()) == [
            "runner-auth",
            "runner-billing",
            "runner-search",
        ]
        await pilot.press("enter")
        box = app.query_one("#filter", Input)
        assert box.visible and box.value == "runner" and not box.has_focus  # still in sight
        await pilot.press("escape")
        assert app.agents_pane.table.row_count == len(CAST) + 1
        assert not box.visible
        await pilot.press("slash", *"runner", "enter", "2")  # a filter belongs to its pane
        assert not box.visible and app.agents_pane.table.row_count == len(CAST) + 1


async def test_enter_opens_detail_with_chain_and_help(project: Path, clock: ManualClock) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        app.agents_pane.select("orchestrator-billing")
        await pilot.press("enter")
        assert isinstance(app.screen, AgentDetail)
        shown = app.export_screenshot()
        assert "Predecessor" in shown and "crashed" in shown and "predecessor_id" in shown
        await pilot.press("escape")
        await pilot.press("j", "k", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("q")
    assert app.return_code == 0


async def test_an_agents_window_reads_nothing_before_its_first_frame(
    project: Path, clock: ManualClock
) -> None:
    """Its screen, permissions, reviews and conversation are read in threads once the
    window is drawn: beside its first frame, they held the UI thread back."""
    app = scene_console(project, clock)
    happened: list[str] = []

    class Recording:
        def __init__(self, facts: Any) -> None:
            self.facts = facts

        def __getattr__(self, name: str) -> Any:
            found = getattr(self.facts, name)
            if name not in ("peek", "permission_history", "reviews", "last_turns"):
                return found

            def read(*args: Any) -> Any:
                happened.append(name)
                return found(*args)

            return read

    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.agents_pane
        key = "orchestrator-billing"
        facts = Recording(pane.agents.facts(key))
        window = AgentDetail(key, pane.agents.record(key), facts, pane.now)
        window.screen_layout_refresh_signal.subscribe(
            app, lambda _: happened.append("frame"), immediate=True
        )
        app.push_screen(window)
        await until(pilot, lambda: len(set(happened)) == 5)
        assert happened[0] == "frame"


async def test_an_unreadable_agents_window_says_why_in_text_a_mouse_can_copy(
    project: Path, clock: ManualClock
) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        app.agents_pane.select("worker-ghost")  # its identity file is not JSON
        await pilot.press("enter")
        body = app.screen.query_one("#detail-body", Static)
        body.text_select_all()
        await pilot.pause()
        selected = app.screen.get_selected_text() or ""
        assert "unreadable: not valid JSON" in selected and "no hook file" in selected


async def test_help_names_the_pane_keys_there_are(project: Path, clock: ManualClock) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = [key for key, _ in app.screen.common]
        assert "1 … 8" in keys and "1 … 9" not in keys  # eight panes, keys 1 to 8


async def test_an_ended_agent_is_offered_no_message_and_no_session_to_go_to(
    project: Path, clock: ManualClock
) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        app.agents_pane.select("worker-docs")  # terminated
        await pilot.press("g", "m")
        await pilot.pause()
        assert not isinstance(app.screen, MessageModal)
        said = [n.message for n in app._notifications if n.severity == "warning"]
        ended = "worker-docs has ended (terminated"
        assert [m.startswith(ended) for m in said] == [True, True]
        assert said[0].endswith(": no session to go to")
        assert said[1].endswith(": a message cannot reach it")
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, AgentDetail)
        assert "m" not in detail.active_bindings  # not offered in the footer
        title = detail.query_one("#detail-title", Static).render().plain
        assert "ended: no messages reach it" in title and "m: send" not in title
        app.clear_notifications()
        await pilot.press("m")  # pressed anyway: why, and no window
        await pilot.pause()
        assert isinstance(app.screen, AgentDetail)
        [told] = [n.message for n in app._notifications]
        assert told.startswith(ended) and told.endswith(": a message cannot reach it")


async def test_quit_and_help_show_in_the_footer_of_every_pane_at_80_columns(
    project: Path, clock: ManualClock
) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        for number in range(1, 7):
            await pilot.press(str(number))
            await pilot.pause()
            footer = app.screen.query_one(ConsoleFooter)
            placed = footer.placed  # the keys drawn, and where
            [palette] = [k for k in placed if k.palette]
            # In sight: inside the pane, and left of the palette's key on the right.
            seen = {k.key for k in placed if k.end <= palette.start and k.end <= 80}
            pane = app.current_pane().TITLE
            assert {"q", "question_mark"} <= seen, f"{pane}: {sorted(map(str, seen))}"


async def test_bad_config_is_reported_not_fatal(project: Path) -> None:
    atomic_write_bytes(
        project / ".claude" / "talisman.yml",
        b"runeconsole:\n  heartbeat_interval_seconds: -4\n",
    )
    app = create_app(project, watch=False, tick_seconds=0)
    async with app.run_test() as pilot:
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("heartbeat_interval_seconds" in m and ">= 1" in m for m in messages)
        assert app.registry.settings.heartbeat_interval == 60


async def test_command_palette_jumps_to_an_agent(project: Path, clock: ManualClock) -> None:
    app = scene_console(project, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p", *"worker-tokens")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.agents_pane.table.cursor_key() == "worker-tokens"


async def test_problems_pane_keeps_urgency_then_context_order(project: Path) -> None:
    from runeconsole.services.fleet import Problem
    from runeconsole.tui.panes.problems_pane import ProblemsPane

    def context(key: str, rank: int, left: int) -> Problem:
        return Problem(key, "context", rank, f"{left}% context left", left)

    app = create_app(project, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("2")
        pane = app.query_one(ProblemsPane)

        def judged(*problems: Problem) -> None:  # as the model keeps them once judged
            app.fleet.problems.update({problem.key: [problem] for problem in problems})
            pane.show_agents({problem.key for problem in problems})

        judged(context("worker-a", 4, 22), context("worker-b", 4, 18), context("c", 3, 14))
        await pilot.pause()
        assert pane.table.visible_keys() == ["c/context", "worker-b/context", "worker-a/context"]
        # No row added, only context spent: the order still follows it.
        judged(context("worker-a", 4, 16))
        await pilot.pause()
        assert pane.table.visible_keys() == ["c/context", "worker-a/context", "worker-b/context"]


async def test_a_busy_monitor_pass_is_one_toast_and_repeats_are_not_shown(
    project: Path, clock: ManualClock
) -> None:
    from runeconsole.services.supervision.observations import ContextWarning, MonitorReport

    app = scene_console(project, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        report = MonitorReport(
            "2026-02-26T12:00:00Z",
            crashed=["worker-schema"],
            warnings=[
                ContextWarning("orchestrator-auth", "medium", 12, False),
                ContextWarning("worker-tokens", "low", 23, False),
                ContextWarning("worker-parser", "high", 9, False),
            ],
            handoffs_started=["worker-parser"],
        )
        app._apply_report(report)
        app._apply_report(report)  # the same news again: not shown twice
        app.notify("saved", title="Hook")
        app.notify("saved", title="Hook")
        await pilot.pause()
        toasts = [(n.title, n.message, n.severity) for n in app._notifications]
        assert toasts == [
            (
                "Agents",
                # What the urgency asks for, in words: "(medium)" read as the context's level.
                "worker-schema crashed\n"
                "orchestrator-auth: 12% context left, time to checkpoint\n"
                "worker-tokens: 23% context left, running low\n"
                "worker-parser: 9% context left, handing it off",
                "error",
            ),
            ("Hook", "saved", "information"),
        ]


async def test_a_burst_of_keys_after_slash_goes_into_the_filter(
    project: Path, clock: ManualClock
) -> None:
    app = scene_console(project, clock)
    async with app.run_test() as pilot:
        burst(app, "/worker")  # `r` and `k` are the Agents pane's keys: none may fire
        await pilot.pause()
        assert app.query_one("#filter", Input).value == "worker"
        assert not isinstance(app.screen, ConfirmScreen)


async def test_rows_added_renamed_or_removed_under_a_filter_are_in_place_when_it_changes(
    project: Path, clock: ManualClock
) -> None:
    registry = Registry(Project(project, clock))
    for name in ("b", "d", "f"):
        registry.register("worker", name)
    app = create_app(project, clock=clock, watch=False, tick_seconds=0)
    async with app.run_test() as pilot:
        table = app.agents_pane.table
        await pilot.press("slash", *"worker-d", "enter")
        assert table.keys() == ["worker-d"]
        registry.update("worker-f", {"name": "c"})  # moves up: shown as c, before d
        app.rescan_fleet()
        await until(pilot, lambda: app.fleet.records["worker-f"].get("name") == "c")
        await pilot.press("escape")
        assert table.keys() == ["worker-b", "worker-f", "worker-d"]
        await pilot.press("slash", *"worker-d", "enter")
        registry.register("worker", "a")  # added while filtered out
        registry.path_for("worker-b").unlink()
        app.rescan_fleet()
        await until(pilot, lambda: "worker-a" in app.fleet.records and len(app.fleet) == 3)
        await pilot.press("escape")
        assert table.keys() == ["worker-a", "worker-f", "worker-d"]
        await pilot.press("slash", "w")
        assert table.keys() == ["worker-a", "worker-f", "worker-d"]
