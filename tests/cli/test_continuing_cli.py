"""``runeconsole resume`` and ``runeconsole fork``: what they print, their JSON, their exit
codes, and the refusals (a live agent, an id that is no UUID, an unknown agent). Real git,
tmux on a private server, Claude Code played by a stand-in through ``$RUNECONSOLE_CLAUDE``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.services.dispatch.helpers import (
    identity,
    install_stand_in,
    project_excluding_state,
    stand_in_args,
)
from tests.support.cli import CliResult
from tests.support.polling import wait_until

SESSION = "0630e3b6-ad49-4600-90a2-d7573e8f8f23"


@pytest.fixture
def root(project: Path) -> Path:
    return project_excluding_state(project)


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install_stand_in(tmp_path, monkeypatch)


@pytest.fixture
def on_tmux(
    cli: Callable[..., CliResult], root: Path, stand_in: Path, tmux_socket: str
) -> Callable[..., CliResult]:
    return lambda *args: cli(*args, "--root", str(root), "--tmux-socket", tmux_socket)


def agent_with_session(
    on_tmux: Callable[..., CliResult], root: Path, stand_in: Path, session: str = SESSION
) -> str:
    assert on_tmux("new", "--task", "tidy up", "--name", "tidy").code == 0
    key = "worker-tidy"
    wait_until(lambda: stand_in_args(stand_in, key) is not None, 10, what=key)
    path = root / ".claude" / "state" / "identities" / f"{key}.json"
    fields = json.loads(path.read_text())
    path.write_text(json.dumps({**fields, "session_id": session}))
    return key


def test_resume_prints_what_it_started_and_refuses_a_live_agent(
    on_tmux: Callable[..., CliResult], root: Path, stand_in: Path
) -> None:
    key = agent_with_session(on_tmux, root, stand_in)

    live = on_tmux("resume", key)
    assert live.code == 1 and "still running" in live.err

    assert on_tmux("kill", key).code == 0
    ended_id = identity(root, key)["agent_id"]
    resumed = on_tmux("resume", key, "--json")
    assert resumed.code == 0, resumed.err
    result = json.loads(resumed.out)
    assert (result["action"], result["key"], result["session_id"]) == ("resume", key, SESSION)
    assert result["source_agent_id"] == ended_id
    assert identity(root, key)["predecessor_id"] == ended_id


def test_fork_prints_the_new_agent_and_its_session(
    on_tmux: Callable[..., CliResult], root: Path, stand_in: Path
) -> None:
    key = agent_with_session(on_tmux, root, stand_in)

    forked = on_tmux("fork", key, "--name", "other")
    assert forked.code == 0, forked.err
    assert forked.out.startswith(f"forked {key} (session {SESSION}) into worker-other")
    wait_until(lambda: stand_in_args(stand_in, "worker-other") is not None, 10)
    assert stand_in_args(stand_in, "worker-other")[:3] == ["--resume", SESSION, "--fork-session"]


def test_bad_ids_exit_2_and_an_unknown_agent_1(
    on_tmux: Callable[..., CliResult], root: Path, stand_in: Path
) -> None:
    key = agent_with_session(on_tmux, root, stand_in, session="not-a-uuid")

    assert on_tmux("fork", key).code == 2
    assert on_tmux("fork", key, "--name", "../x").code == 2
    assert on_tmux("fork", key, "--at", "'; rm -rf /'").code == 2
    unknown = on_tmux("resume", "worker-nobody")
    assert unknown.code == 1 and "no agent 'worker-nobody'" in unknown.err
