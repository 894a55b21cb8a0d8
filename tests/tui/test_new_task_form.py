"""``n``: the new-task form, in the project console and the fleet console, driven with Pilot
over real git repositories: the task made through ``Dispatch.new`` (real worktrees and
branches, Claude Code stood in for by ``/bin/true`` in tmux on a private server), its
agents' rows arriving through the file watch, the name suggested from the task, input the
service would refuse said in the form, esc, a refusal, a read-only root, and one snapshot
of the form at 80x24."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.tui.console import app as console_app
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.fleet_console.app import FleetConsole, create_fleet_app
from runeconsole.tui.fleet_console.panes import SourcesPane
from runeconsole.tui.modals.new_task import NewTaskForm, SourcePicker
from runeconsole.tui.widgets.filter_box import FilterBox
from tests.support.console import settle
from tests.support.fleet import project_root
from tests.support.merge_queue import git
from tests.support.polling import until

TASK = "fix-login-timeout"
MADE = "fix-login-timeout"  # from the first line of "Fix the login timeout\nsrc/login.py …"


@pytest.fixture
def agents_start(tmux_socket: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Claude Code stood in for by ``/bin/true``, its sessions on a private tmux server."""
    monkeypatch.setenv("RUNECONSOLE_CLAUDE", "/bin/true")
    monkeypatch.setenv("RUNECONSOLE_TMUX_SOCKET", tmux_socket)
    return tmux_socket


def console(root: Path, *, watch: bool = False) -> RuneConsole:
    return create_app(root, clock=ManualClock(), watch=watch, tick_seconds=0)


def tasks_made(root: Path) -> list[str]:
    folder = root / ".claude" / "state" / "tasks"
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def worktrees(root: Path) -> list[str]:
    listed = git(root, "worktree", "list", "--porcelain").splitlines()
    return [line.split(" ", 1)[1] for line in listed if line.startswith("worktree ")]


def toasts(app: RuneConsole | FleetConsole) -> list[str]:
    return [str(n.message) for n in app._notifications]


def status(form: NewTaskForm) -> str:
    return str(form.query_one("#new-task-status", Static).render())


async def type_text(pilot: Pilot, text: str) -> None:
    """Keys as the operator types them (a new line is Enter)."""
    names = {" ": "space", "\n": "enter", "/": "slash", "-": "minus", ".": "full_stop"}
    await pilot.press(*(names.get(char, char) for char in text))


async def open_form(pilot: Pilot) -> NewTaskForm:
    await pilot.press("n")
    await until(pilot, lambda: isinstance(pilot.app.screen, NewTaskForm))
    form = pilot.app.screen
    assert isinstance(form, NewTaskForm)
    await until(pilot, lambda: "worker" in form.names)  # the names it may not take, read
    return form


async def retype(pilot: Pilot, form: NewTaskForm, field: str, text: str) -> None:
    """Focus a one-line field (its text selected, as on focus) and type over it."""
    form.field(field).focus()
    await pilot.pause()
    await pilot.press("ctrl+a", "ctrl+k")
    await type_text(pilot, text)


async def test_n_then_ctrl_s_makes_the_task_in_real_worktrees_and_its_agents_rows_appear(
    repo: Path, agents_start: str
) -> None:
    app = console(repo, watch=True)
    async with app.run_test(size=(100, 30)) as pilot:
        form = await open_form(pilot)
        await type_text(pilot, "Fix the login timeout\nsrc/login.py gives up after 5 s")
        await settle(pilot)
        assert form.field("name").value == MADE  # the task's first words
        assert form.field("base").value == "main"
        await retype(pilot, form, "count", "2")
        await pilot.press("ctrl+s")
        agents = [f"worker-{MADE}-1", f"worker-{MADE}-2"]
        await until(pilot, lambda: all(app.agents_pane.table.has(a) for a in agents))
        await until(
            pilot, lambda: any(m.startswith(f"task {MADE}: 2 attempts") for m in toasts(app))
        )
        assert f"task {MADE}: 2 attempts started: {', '.join(agents)}" in toasts(app)
    task = json.loads((repo / ".claude" / "state" / "tasks" / f"{MADE}.json").read_text())
    assert task["text"] == "Fix the login timeout\nsrc/login.py gives up after 5 s"
    assert task["state"] == "working" and task["base"] == "main" and task["mode"] == "tmux"
    assert [a["state"] for a in task["attempts"]] == ["started", "started"]
    made = [str(repo / ".claude" / "worktrees" / f"{MADE}-{n}") for n in (1, 2)]
    assert worktrees(repo)[1:] == made
    for n, path in enumerate(made, 1):
        assert git(Path(path), "branch", "--show-current") == f"agent/worker-{MADE}-{n}"
        assert (Path(path) / "a.txt").read_text() == "a\n"  # a checkout of main


async def test_the_name_follows_the_task_is_unique_and_stays_once_the_operator_types_one(
    repo: Path,
) -> None:
    git(repo, "branch", f"agent/worker-{TASK}")  # taken: the suggestion moves on
    app = console(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        form = await open_form(pilot)
        assert form.field("name").value == ""
        await type_text(pilot, "Fix the login timeout")
        await pilot.pause()
        assert form.field("name").value == f"{TASK}-2"
        assert "agent/worker-fix-login-timeout-2 from main" in status(form)
        await retype(pilot, form, "name", "login")
        form.query_one(TextArea).focus()
        await type_text(pilot, " for good")
        await pilot.pause()
        assert form.field("name").value == "login"
        await retype(pilot, form, "name", "")
        form.query_one(TextArea).focus()
        await type_text(pilot, "!")  # emptied, the name follows the task again
        await pilot.pause()
        assert form.field("name").value == "fix-login-timeout-good"
        await retype(pilot, form, "count", "3")
        await pilot.pause()
        assert "3 attempts: agent/worker-fix-login-timeout-good-1 … -3" in status(form)


async def test_input_the_service_would_refuse_is_said_in_the_form_and_nothing_is_made(
    repo: Path,
) -> None:
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is form
        assert "not started: the task is empty" in status(form)
        assert form.query_one(TextArea).has_class("-wrong")
        await type_text(pilot, "Fix the login timeout")
        await retype(pilot, form, "name", "no good")
        await retype(pilot, form, "count", "17")
        await pilot.press("ctrl+s")
        await pilot.pause()
        said = status(form)
        assert "name 'no good' is not allowed" in said
        assert "attempts: a number from 1 to 16" in said
        assert form.field("name").has_class("-wrong") and form.field("count").has_class("-wrong")
        assert app.focused is form.field("name")  # the first field that is wrong
        await retype(pilot, form, "name", "login")
        await retype(pilot, form, "count", "0")
        await pilot.press("enter")  # Enter in a one-line field starts, as ctrl+s does
        await pilot.pause()
        assert app.screen is form and "attempts: a number from 1 to 16" in status(form)
        assert not form.field("name").has_class("-wrong")
    assert tasks_made(repo) == [] and worktrees(repo) == [str(repo)]


async def test_esc_closes_the_form_without_making_anything_and_the_next_n_starts_afresh(
    repo: Path,
) -> None:
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_form(pilot)
        await type_text(pilot, "Fix the login timeout")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, NewTaskForm)
        form = await open_form(pilot)
        assert form.query_one(TextArea).text == "" and form.field("name").value == ""
        await pilot.click("#new-task-cancel")
        await pilot.pause()
        assert not isinstance(app.screen, NewTaskForm)
    assert tasks_made(repo) == [] and worktrees(repo) == [str(repo)]


async def test_a_slash_a_q_and_a_question_mark_in_the_task_are_text_not_keys_of_the_console(
    repo: Path,
) -> None:
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot)
        await type_text(pilot, "quit a/b?")
        await pilot.pause()
        assert form.query_one(TextArea).text == "quit a/b?"
        assert app.screen is form and app.is_running
        assert not app.query_one(FilterBox).visible


async def test_a_refusal_by_the_service_is_a_toast_with_its_reason_and_nothing_is_made(
    repo: Path, agents_start: str
) -> None:
    app = console(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        form = await open_form(pilot)
        await type_text(pilot, "Fix the login timeout")
        await retype(pilot, form, "base", "no-such-branch")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any("no-such-branch" in m for m in toasts(app)))
        [said] = [m for m in toasts(app) if "no-such-branch" in m]
        assert said.startswith("base 'no-such-branch' names no commit")
        assert not isinstance(app.screen, NewTaskForm)
    assert tasks_made(repo) == [] and worktrees(repo) == [str(repo)]


async def test_n_is_neither_offered_nor_run_on_a_read_only_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console_app, "unwritable", lambda root: f"{root} is read-only")
    app = console(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        offered = {b.binding.action for b in app.screen.active_bindings.values()}
        assert "new_task" not in offered and "review" in offered
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, NewTaskForm)
    assert tasks_made(repo) == []


async def submitted(repo: Path, *, names_known: bool) -> NewTask | None:
    """What a form handed ``taken = {TASK}`` gives back for ``Fix the login timeout``."""
    got: list[NewTask | None] = []
    form = NewTaskForm(lambda role: {TASK}, names_known=names_known, where="alpha")
    app = console(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(form, got.append)
        await until(pilot, lambda: "worker" in form.names)
        await type_text(pilot, "Fix the login timeout")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(got))
    return got[0]


async def test_a_name_left_as_suggested_goes_as_shown_here_and_as_none_to_a_host(
    repo: Path,
) -> None:
    """Here the form knows every name taken, so ``Dispatch.new`` need not read them again;
    a host's it does not, so ``runeconsole new`` there suggests it."""
    here = await submitted(repo, names_known=True)
    there = await submitted(repo, names_known=False)
    assert here is not None and here.name == f"{TASK}-2" and here.base is None
    assert there is not None and there.name is None and there.text == "Fix the login timeout"


# -- the fleet console: the task goes to a source ------------------------------------------


async def fleet(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, FleetConsole)
    await until(pilot, lambda: all(s.state != "connecting" for s in app.model.states.values()))


async def test_n_on_a_fleet_row_starts_the_task_on_that_row_s_source_through_its_actions(
    tmp_path: Path, agents_start: str
) -> None:
    one = project_root(tmp_path, "one", "a")
    two = project_root(tmp_path, "two", "b")
    app = create_fleet_app(
        [SourceSpec("one", str(one)), SourceSpec("two", str(two))], heartbeat=0.5, tick_seconds=0
    )
    async with app.run_test(size=(120, 30)) as pilot:
        await fleet(pilot)
        await until(pilot, lambda: app.agents_pane.table.has("two/worker-b"))
        app.agents_pane.select("two/worker-b")
        form = await open_form(pilot)
        title = str(form.query_one("#new-task-title", Static).render())
        assert title.startswith("New task on two")
        assert form.field("base").value == "main"  # a root of this machine: its main branch
        await type_text(pilot, "Add a health check")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.agents_pane.table.has("two/worker-add-health-check"))
        await until(
            pilot, lambda: "task add-health-check: worker-add-health-check started" in toasts(app)
        )
    assert tasks_made(two) == ["add-health-check"] and tasks_made(one) == []
    assert worktrees(two)[1:] == [str(two / ".claude" / "worktrees" / "add-health-check")]


async def test_with_no_row_chosen_the_fleet_console_asks_which_source_and_a_down_one_is_refused(
    tmp_path: Path,
) -> None:
    one, two = project_root(tmp_path, "one"), project_root(tmp_path, "two")
    specs = [SourceSpec("one", str(one)), SourceSpec("two", str(two))]
    specs.append(SourceSpec("gone", str(tmp_path / "nowhere")))
    app = create_fleet_app(specs, heartbeat=0.5, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await fleet(pilot)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, SourcePicker))
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, NewTaskForm))
        title = str(app.screen.query_one("#new-task-title", Static).render())
        assert title.startswith("New task on two")
        await pilot.press("escape")
        await pilot.press("n", "down", "down", "enter")
        await until(pilot, lambda: any("gone is unreachable" in m for m in toasts(app)))
        assert not isinstance(app.screen, (NewTaskForm, SourcePicker))
        await pilot.press("2")  # the Sources pane: n on a source's row
        app.query_one(SourcesPane).table.move_cursor(row=0)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, NewTaskForm))
        title = str(app.screen.query_one("#new-task-title", Static).render())
        assert title.startswith("New task on one")
    assert tasks_made(one) == tasks_made(two) == []


# -- the look ----------------------------------------------------------------------------


def test_snapshot_the_form_at_80x24(snap_compare: Callable[..., bool], snap_dir: Path) -> None:
    from runeconsole.adapters import git as git_adapter

    root = snap_dir / "new-task"
    git_adapter.init_repo(root)
    app = console(root)

    async def fill(pilot: Pilot) -> None:
        await open_form(pilot)
        await type_text(pilot, "Fix the login timeout\nsrc/login.py gives up after 5 s")
        await pilot.press("tab")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=fill)
