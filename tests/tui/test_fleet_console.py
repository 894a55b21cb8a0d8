"""``runeconsole --fleet FILE``: one console over several roots. Local roots always; two
"hosts" over a real private sshd when there is one (skipped, saying why, when not)."""

from __future__ import annotations

import io
import json
import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from rich.console import Console, RenderableType
from textual.pilot import Pilot
from textual.widgets import Static

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.core.timeutil import iso_z
from runeconsole.demo.suspended import write_context
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.suspension import Suspension
from runeconsole.services.worker_questions import Question, Questions
from runeconsole.tui.fleet_console.app import FleetConsole, SourcesBar, create_fleet_app
from runeconsole.tui.fleet_console.panes import FleetPipelinesPane, FleetQuestionsPane
from runeconsole.tui.modals.agent_detail import AgentDetail
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.modals.suspended_detail import InjectionScreen
from runeconsole.tui.pipelines.gate_window import GateWindow
from runeconsole.tui.widgets.pane_tabs import PaneTabs
from tests.support.fleet import project_root
from tests.support.pipelines import AT_GATE, whole_root
from tests.support.polling import until
from tests.support.questions import QUESTION_DIR, ask
from tests.support.sshd import Sshd, remote_events_pids


@asynccontextmanager
async def console(
    specs: list[SourceSpec], **kwargs: object
) -> AsyncIterator[tuple[FleetConsole, Pilot]]:
    app = create_fleet_app(specs, heartbeat=0.5, tick_seconds=0, **kwargs)
    async with app.run_test(size=(140, 30)) as pilot:
        await until(pilot, lambda: all(s.state != "connecting" for s in app.model.states.values()))
        yield app, pilot


def shown(app: FleetConsole, index: int) -> list[str]:
    return app.panes[index].table.keys()


def bar(app: FleetConsole) -> str:
    return str(app.query_one(SourcesBar).render())


async def test_every_root_has_its_rows_under_its_source_and_a_missing_root_is_one_red_row(
    tmp_path: Path,
) -> None:
    one, two = project_root(tmp_path, "one", "a", "b"), project_root(tmp_path, "two", "c")
    specs = [
        SourceSpec("one", str(one)),
        SourceSpec("two", str(two)),
        SourceSpec("gone", str(tmp_path / "nowhere")),
    ]
    async with console(specs) as (app, pilot):
        await until(pilot, lambda: len(shown(app, 0)) == 3)
        assert sorted(shown(app, 0)) == ["one/worker-a", "one/worker-b", "two/worker-c"]
        assert [str(app.panes[0].table.get_row(k)[0]) for k in sorted(shown(app, 0))] == [
            "one",
            "one",
            "two",
        ]
        sources = app.panes[1].table
        assert sources.keys() == ["one", "two", "gone"]
        assert "no such directory" in str(sources.get_row("gone")[-1])
        assert "gone down" in bar(app) and "one ●2 ●0 ●0" in bar(app)


async def test_a_change_on_one_root_repaints_its_row_and_its_source_counts(
    tmp_path: Path,
) -> None:
    one, two = project_root(tmp_path, "one", "a"), project_root(tmp_path, "two", "c")
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        await until(pilot, lambda: len(shown(app, 0)) == 2)
        Registry(Project(two)).mark_crashed("worker-c")
        await until(pilot, lambda: "crashed" in str(app.panes[0].table.get_row("two/worker-c")))
        assert app.model.agents.records["one/worker-a"].status == "active"
        await until(pilot, lambda: "two ●0 ●0 ●1 !1" in bar(app))
        problems = app.panes[2].table
        await until(pilot, lambda: problems.keys() == ["two/worker-c/crashed"])
        assert str(problems.get_row("two/worker-c/crashed")[0]) == "two"


async def test_a_source_name_in_the_filter_keeps_that_source_s_rows_only(tmp_path: Path) -> None:
    one, two = project_root(tmp_path, "one", "a", "b"), project_root(tmp_path, "two", "c")
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        await until(pilot, lambda: len(shown(app, 0)) == 3)
        await pilot.press("slash", *"source:two")
        await until(pilot, lambda: shown(app, 0) == ["two/worker-c"])
        await pilot.press("escape")
        await until(pilot, lambda: len(shown(app, 0)) == 3)
        await pilot.press("slash", *"one b")
        await until(pilot, lambda: shown(app, 0) == ["one/worker-b"])


async def test_a_question_is_answered_on_the_root_it_was_asked_on(tmp_path: Path) -> None:
    one, two = project_root(tmp_path, "one", "a"), project_root(tmp_path, "two", "c")
    asked = ask(two, "task-7", "Which database?")
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        await pilot.press("4")
        key = f"two/{QUESTION_DIR.split('/')[-1]}/task-7.q1"
        await until(pilot, lambda: shown(app, 3) == [key])
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        await pilot.press("B")
        questions = Questions(Project(two))
        await until(pilot, lambda: questions.read_question(asked).answer is not None)
        assert questions.read_question(asked).answer.option == "B"
        await until(pilot, lambda: shown(app, 3) == [])  # answered: no longer open


async def test_a_from_any_pane_opens_the_oldest_question_of_any_source(tmp_path: Path) -> None:
    one, two = project_root(tmp_path, "one", "a"), project_root(tmp_path, "two", "c")
    ask(two, "task-8", "Which queue?")
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        await until(pilot, lambda: len(shown(app, 0)) == 2)
        await until(pilot, lambda: app.model.counts("two")["questions"] == 1)
        await pilot.press("a")  # from the Agents pane
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        modal = app.screen
        assert isinstance(modal, QuestionModal)
        assert (modal.source, modal.question.task_id) == ("two", "task-8")


async def test_the_merge_queue_of_the_entry_s_source_is_processed_after_confirming(
    tmp_path: Path,
) -> None:
    from runeconsole.demo.merge_queue import commit_branch
    from runeconsole.services.merge_queue import MergeQueue
    from tests.support.merge_queue import write_talisman

    one, two = project_root(tmp_path, "one"), project_root(tmp_path, "two")
    write_talisman(two, "true")
    commit_branch(two, "feat/x", {"x.py": "x = 1\n"}, "x")
    queue = MergeQueue(Project(two))
    queue.add("feat/x")
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        await pilot.press("6")
        await until(pilot, lambda: len(shown(app, 5)) == 1)
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: queue.read().ordered()[0].status == "completed", 60)
        assert (two / "x.py").exists() or git.run(two, "show", "main:x.py").strip() == "x = 1"


async def test_a_suspended_task_is_resumed_on_its_source_and_a_corrupt_one_is_refused(
    tmp_path: Path,
) -> None:
    one, two = project_root(tmp_path, "one"), project_root(tmp_path, "two")
    good = write_context(two, "7")
    corrupt = write_context(one, "13")
    corrupt.write_text(corrupt.read_text().replace("next", "NEXT"))
    notes: list[str] = []
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        app.notify = lambda message, **_: notes.append(message)  # type: ignore[method-assign]
        await pilot.press("5")
        await until(pilot, lambda: len(shown(app, 4)) == 2)
        app.panes[4].table.move_to(f"one/{Suspension(Project(one)).key_for(corrupt)}")
        await pilot.press("s")
        await until(pilot, lambda: notes)
        assert "task #13 cannot resume" in notes[0] and not isinstance(app.screen, ConfirmScreen)
        app.panes[4].table.move_to(f"two/{Suspension(Project(two)).key_for(good)}")
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, InjectionScreen), 30)
        assert "resume_count: 1" in good.read_text()
        assert "Parser refactor done" in app.clipboard and "two" in str(app.screen.title_text())


async def test_a_stale_agent_s_problem_says_how_long_as_time_goes_on(tmp_path: Path) -> None:
    clock = ManualClock()
    one = project_root(tmp_path, "one", "a")
    old = iso_z(clock.now() - timedelta(seconds=400))
    Registry(Project(one)).update("worker-a", {"last_heartbeat": old, "last_seen": old})
    async with console([SourceSpec("one", str(one))], clock=clock) as (app, pilot):
        await pilot.press("3")
        await until(pilot, lambda: len(shown(app, 2)) == 1)
        (key,) = shown(app, 2)
        assert "no heartbeat for 6m40s" in str(app.panes[2].table.get_row(key)[-1])
        clock.advance(60)
        app.tick()
        assert "no heartbeat for 7m40s" in str(app.panes[2].table.get_row(key)[-1])


async def test_enter_on_an_agent_shows_its_detail_on_its_source(tmp_path: Path) -> None:
    one, two = project_root(tmp_path, "one", "a"), project_root(tmp_path, "two", "c")
    registry = Registry(Project(two))
    first = registry.get("worker-c").get("agent_id")
    registry.register("worker", "d", predecessor_id=first)
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        await until(pilot, lambda: len(shown(app, 0)) == 3)
        app.panes[0].table.move_to("two/worker-d")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, AgentDetail))
        detail = app.screen
        assert isinstance(detail, AgentDetail) and detail.key == "two/worker-d"
        title = str(detail.query_one("#detail-title", Static).render())
        assert "two/worker-d" in title and "on two" in title
        body = detail.query_one("#detail-body", Static).content
        assert "worker-c" in text_of(body)  # its predecessor


async def test_the_palette_goes_to_an_agent_of_any_source(tmp_path: Path) -> None:
    one, two = project_root(tmp_path, "one", "a", "b"), project_root(tmp_path, "two", "c")
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        await until(pilot, lambda: len(shown(app, 0)) == 3)
        await pilot.press("3")  # from another pane
        await pilot.press("ctrl+p", *"two/worker-c")
        await until(pilot, lambda: "two/worker-c" in palette_hits(app))
        await pilot.press("enter")
        await until(pilot, lambda: app.panes[0].table.cursor_key() == "two/worker-c")
        assert app.query_one(PaneTabs).active == "agents"


async def test_a_long_source_name_is_shown_whole(tmp_path: Path) -> None:
    name = "production-eu-west-2"
    root = project_root(tmp_path, "one", "a")
    async with console([SourceSpec(name, str(root)), SourceSpec("b", str(tmp_path))]) as (
        app,
        pilot,
    ):
        await until(pilot, lambda: len(shown(app, 0)) == 1)
        assert app.panes[0].table.get_row(f"{name}/worker-a")[0].plain == name
        screen = app.export_screenshot()
        assert screen.count(name) >= 2  # in the Agents pane's row and the sources bar


def palette_hits(app: FleetConsole) -> str:
    from textual.command import CommandList

    found = app.screen.query(CommandList)
    return " ".join(str(option.prompt) for option in found.first().options) if found else ""


def text_of(shown: RenderableType) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(shown)
    return console.export_text()


# -- hosts over SSH ------------------------------------------------------------------------


def remote(sshd: Sshd, name: str, root: Path, host: str = "alpha") -> SourceSpec:
    env = [f"RUNECONSOLE_TMUX_SOCKET=rc-fleet-{os.getpid()}"]
    return SourceSpec(
        name, str(root), host, tuple(sshd.remote_command(*env)), tuple(sshd.ssh_prefix)
    )


async def test_two_hosts_over_ssh_beside_a_local_root_answered_and_back_after_a_dropped_stream(
    sshd: Sshd, tmp_path: Path, monkeypatch
) -> None:
    here, far = project_root(tmp_path, "here", "a"), project_root(tmp_path, "far", "r")
    other = project_root(tmp_path, "other", "o")
    Registry(Project(far)).update("worker-r", {"tmux_session": "rune-worker r"})
    asked = ask(far, "task-9", "Ship it?")
    specs = [
        SourceSpec("here", str(here)),
        remote(sshd, "far", far),
        remote(sshd, "other", other, "beta"),
    ]
    everyone = ["far/worker-r", "here/worker-a", "other/worker-o"]
    async with console(specs, sockets=sshd.sockets) as (app, pilot):
        await until(pilot, lambda: sorted(shown(app, 0)) == everyone)
        assert app.model.states["far"].state == "up"
        # The remote events process dies: the console reconnects and shows the same rows.
        for pid in remote_events_pids(far):
            os.kill(pid, signal.SIGKILL)
        far_source = app.feed.remote("far")
        await until(pilot, lambda: far_source.connections >= 2, 60)
        await until(pilot, lambda: sorted(shown(app, 0)) == everyone)
        # The SSH connection itself goes (ssh -O exit ends the master and its sessions).
        far_source.transport.close()
        await until(pilot, lambda: far_source.connections >= 3, 60)
        await until(pilot, lambda: sorted(shown(app, 0)) == everyone)
        # g on a remote agent, outside tmux: the command that attaches, on the host's socket.
        monkeypatch.delenv("TMUX", raising=False)
        notes: list[str] = []
        app.notify = lambda message, **_: notes.append(message)  # type: ignore[method-assign]
        app.panes[0].table.move_to("far/worker-r")
        await pilot.press("g")
        await until(pilot, lambda: notes)
        assert "-t" in notes[0] and "alpha" in notes[0] and f"rc-fleet-{os.getpid()}" in notes[0]
        assert "=rune-worker r" in notes[0]
        # An answer over SSH reaches the far root.
        await pilot.press("4")
        await until(pilot, lambda: len(shown(app, 3)) == 1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        await pilot.press("t", *"yes, ship", "enter")
        questions = Questions(Project(far))
        await until(pilot, lambda: questions.read_question(asked).answer is not None, 60)
        assert questions.read_question(asked).answer.answer == "yes, ship"


async def test_an_answer_while_its_host_is_down_is_refused_and_said_so(
    sshd: Sshd, tmp_path: Path
) -> None:
    far = project_root(tmp_path, "far", "r")
    question = ask(far, "task-4", "Retry?")
    refused = SourceSpec(
        "far", str(far), "alpha", tuple(sshd.remote_command()), (*sshd.ssh_prefix, "-p", "1")
    )
    async with console([refused, SourceSpec("here", str(project_root(tmp_path, "here")))]) as (
        app,
        pilot,
    ):
        assert app.model.states["far"].state == "down"
        assert "far down" in bar(app)
        key = f"{QUESTION_DIR.split('/')[-1]}/task-4.q1"
        seen = Question.from_json(  # as seen before the outage
            {"signal_dir": key.split("/")[0], "task_id": "task-4", "question": "Retry?"}
            | {"options": ["A", "B"]}
        )
        app.query_one(FleetQuestionsPane).open_modal(seen, f"far/{key}")
        await until(pilot, lambda: isinstance(app.screen, QuestionModal))
        await pilot.press("A")
        note = app.screen.query_one("#question-note")
        await until(pilot, lambda: "unreachable" in str(note.render()))
        assert "nothing was sent" in str(note.render())
        assert isinstance(app.screen, QuestionModal)  # still open: it can be tried again
        assert not question.with_suffix(".answer").exists()


def test_the_cli_refuses_a_bad_fleet_file_before_any_screen(tmp_path: Path, cli: Callable) -> None:
    bad = tmp_path / "fleet.yml"
    bad.write_text(json.dumps({"sources": [{"name": "x"}]}))
    result = cli("--fleet", str(bad))
    assert result.code != 0 and "root" in result.err


def test_fleet_with_no_file_reads_the_default_fleet_file(
    tmp_path: Path, cli: Callable, monkeypatch
) -> None:
    one = project_root(tmp_path, "one", "a")
    config = tmp_path / "config"
    (config / "runeconsole").mkdir(parents=True)
    (config / "runeconsole" / "fleet.yml").write_text(f"- {{name: one, root: '{one}'}}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    result = cli("events", "--json", "--fleet")
    assert result.code == 0, result.err
    assert '"key":"worker-a"' in result.out


async def fleet_scene_ready(pilot: Pilot, pane: str) -> None:
    app = pilot.app
    await until(pilot, lambda: all(s.state != "connecting" for s in app.model.states.values()))
    await until(pilot, lambda: len(app.panes[0].table.keys()) == 14)
    await pilot.press(pane)
    app.panes[int(pane) - 1].table.move_cursor(row=0)
    await pilot.pause()


def test_snapshot_fleet_agents_80x24(snap_compare: Callable, snap_dir: Path) -> None:
    from tests.support.fleet_scene import build_fleet_scene

    specs, clock = build_fleet_scene(snap_dir)
    app = create_fleet_app(specs, clock=clock, tick_seconds=0)
    assert snap_compare(app, terminal_size=(80, 24), run_before=lambda p: fleet_scene_ready(p, "1"))


def test_snapshot_fleet_sources_80x24(snap_compare: Callable, snap_dir: Path) -> None:
    from tests.support.fleet_scene import build_fleet_scene

    specs, clock = build_fleet_scene(snap_dir)
    app = create_fleet_app(specs, clock=clock, tick_seconds=0)
    assert snap_compare(app, terminal_size=(80, 24), run_before=lambda p: fleet_scene_ready(p, "2"))


async def test_a_gate_on_one_root_is_a_row_of_its_source_and_a_answers_it_there(
    tmp_path: Path,
) -> None:
    one = project_root(tmp_path, "one", "a")
    two = whole_root(tmp_path, AT_GATE, name="two")
    async with console([SourceSpec("one", str(one)), SourceSpec("two", str(two))]) as (
        app,
        pilot,
    ):
        pane = app.query_one(FleetPipelinesPane)
        await until(pilot, lambda: pane.table.keys() == ["two/gate-demo"])
        assert str(pane.table.get_row("two/gate-demo")[0]) == "two"
        await pilot.press("a")  # the gate is the only thing waiting, on any source
        await until(pilot, lambda: isinstance(app.screen, GateWindow))
        await pilot.press("y")
        dot = two / ".pipelines" / "pipelines" / "gate-demo.dot"
        await until(pilot, lambda: 'status="validated"' in dot.read_text())
        await until(pilot, lambda: app.model.pipelines.open_count("two") == 0)
