"""``R`` and ``F`` in the Agents pane: an ended agent's Claude Code session resumed by a
successor (asked first), any agent's forked into a new agent in its worktree or a new one
(asked where); Claude Code played by a stand-in that records its arguments, the agents on
a private tmux server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from runeconsole.adapters.claude_cli import COMMAND_ENV
from runeconsole.adapters.clock import ManualClock
from runeconsole.services.dispatch.creation import NewTask
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.project import Project
from runeconsole.tui.console.app import RuneConsole, create_app
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.modals.fork_choice import ForkChoice
from runeconsole.tui.panes.agents_pane import AgentsPane
from tests.services.dispatch.helpers import install_stand_in, project_excluding_state, stand_in_args
from tests.support.polling import until, wait_until

SESSION = "0630e3b6-ad49-4600-90a2-d7573e8f8f23"


@pytest.fixture
def root(project: Path, tmp_path: Path, tmux_socket: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_stand_in(tmp_path, monkeypatch)
    monkeypatch.setenv("RUNECONSOLE_TMUX_SOCKET", tmux_socket)
    return project_excluding_state(project)


def agent_with_session(root: Path, name: str) -> str:
    """An agent ``new`` started, whose hooks reported a session and its transcript."""
    dispatch = Dispatch(Project(root))
    task = dispatch.new(NewTask(f"tidy the {name} module", name=name))
    key = task.attempts[0].agent
    stand_in = Path(os.environ[COMMAND_ENV])
    wait_until(lambda: stand_in_args(stand_in, key) is not None, 10, what=key)
    worktree = Path(str(task.attempts[0].worktree))
    transcript = worktree.parent.parent / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "uuid": SESSION}))
    claude = {"session_id": SESSION, "transcript_path": str(transcript)}
    dispatch.supervisor.registry.update(key, {"session_id": SESSION, "claude": claude})
    return key


def console(root: Path) -> RuneConsole:
    return create_app(root, clock=ManualClock(), watch=False, tick_seconds=0)


async def test_r_resumes_an_ended_agent_after_asking_and_refuses_a_running_one(root: Path) -> None:
    key = agent_with_session(root, "tidy")
    async with console(root).run_test(size=(120, 30)) as pilot:
        app = pilot.app
        pane = app.query_one(AgentsPane)
        await until(pilot, lambda: key in pane.records)
        pane.select(key)
        await pilot.press("R")  # still running: nothing asked, F is offered instead
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        Dispatch(Project(root)).supervisor.kill(key)
        assert isinstance(app, RuneConsole)
        app.load_fleet()
        await until(pilot, lambda: pane.records[key].status == "terminated")
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen) and confirm.question == f"Resume {key}?"
        await pilot.press("y")
        registry = Dispatch(Project(root)).supervisor.registry
        await until(pilot, lambda: registry.get(key).get("status") == "active", timeout=15)
        assert registry.get(key).metadata["resumed"]["session_id"] == SESSION


async def test_f_forks_an_agent_into_a_new_worktree_when_asked_for_one(root: Path) -> None:
    key = agent_with_session(root, "tidy")
    async with console(root).run_test(size=(120, 30)) as pilot:
        app = pilot.app
        pane = app.query_one(AgentsPane)
        await until(pilot, lambda: key in pane.records)
        pane.select(key)
        await pilot.press("F")
        await until(pilot, lambda: isinstance(app.screen, ForkChoice))
        await pilot.press("w")
        fork = f"{key}-fork"
        registry = Dispatch(Project(root)).supervisor.registry
        await until(pilot, lambda: registry.get(fork) is not None, timeout=20)
        worktree = Path(str(registry.get(fork).worktree))
        assert worktree.name == "tidy-fork" and (worktree / ".git").is_file()
        assert registry.get(key).get("status") == "active"  # the agent itself goes on
