"""The demo's agents go through the real bridge: the demo project has the hooks installed,
and a fake agent's events and AskUserQuestion call run the installed command."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.paths import ProjectPaths
from runeconsole.demo.fleet import agent_worktree
from runeconsole.demo.project import make_project
from runeconsole.services.claude.bridge.presence import ConsolePresence
from runeconsole.services.claude.session.view import AgentView, agent_view
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings
from tests.support.cli import CliResult
from tests.support.polling import wait_until
from tests.support.tmux import fake_agent

pytestmark = pytest.mark.timeout(120)


def activity(root: Path, key: str) -> AgentView:
    return agent_view(Registry(Project(root)).get(key).fields, None)


def test_the_demo_project_has_the_hooks_installed(tmp_path: Path) -> None:
    root = make_project(tmp_path / "demo", "rc-unused")
    settings = json.loads((root / ".claude" / "settings.local.json").read_text())
    assert "PreToolUse" in settings["hooks"] and "SessionEnd" in settings["hooks"]


@contextlib.contextmanager
def demo_with_console(base: Path, tmux_socket: str) -> Iterator[tuple[Path, Supervisor]]:
    """The demo project, its console lock held as an open console does, and a supervisor
    to spawn its fake agents in tmux; the hook logged nothing by the end."""
    root = make_project(base / "demo", tmux_socket)
    presence = ConsolePresence(ProjectPaths(root))
    assert presence.try_hold()
    try:
        yield (
            root,
            Supervisor(
                Project(root),
                settings=SupervisorSettings(socket_name=tmux_socket),
                tmux=Tmux(tmux_socket),
            ),
        )
    finally:
        presence.release()
    assert not (root / ".claude" / "state" / "claude" / "hook.log").exists()


def test_a_demo_agent_asks_through_the_hook_and_the_console_answers(
    tmp_path: Path, tmux_socket: str, cli: Callable[..., CliResult]
) -> None:
    with demo_with_console(tmp_path, tmux_socket) as (root, supervisor):
        key = "orchestrator-search"
        command = fake_agent(key, root, "--claude-ask-at", "0.5")
        supervisor.spawn("orchestrator", "search", command, worktree=agent_worktree(root, key))
        relayed = root / "tmp" / ".rune-signals" / "claude-code"
        wait_until(lambda: relayed.exists() and len(list(relayed.glob("*.question"))) == 2, 60)
        first, second = sorted(relayed.glob("*.question"))
        assert json.loads(first.read_text())["worker_name"] == key
        assert json.loads(second.read_text())["multi_select"] is True
        # the questions come first, the agent's state right after
        wait_until(lambda: activity(root, key).activity == "waiting", 30)
        for path, options in ((first, ["B"]), (second, ["A", "C"])):
            args = [f"claude-code/{path.stem}", *(f"--option={o}" for o in options)]
            assert cli("question", "answer", *args, "--root", str(root)).code == 0
        wait_until(lambda: "Answered Claude's questions" in supervisor.pane_tail(key), 60)
        tail = supervisor.pane_tail(key)
        assert "→ Trigram index" in tail and "→ lint, e2e" in tail
        # its tool calls went through the hook too: busy, with tokens from its transcript
        wait_until(lambda: activity(root, key).activity == "busy", 60)
        wait_until(lambda: activity(root, key).tokens, 60)


def test_a_demo_agent_asks_permission_through_the_hook_and_the_cli_denies_it(
    tmp_path: Path, tmux_socket: str, cli: Callable[..., CliResult]
) -> None:
    with demo_with_console(tmp_path, tmux_socket) as (root, supervisor):
        key = "worker-docs"
        command = fake_agent(key, root, "--claude-permission-at", "0.5")
        supervisor.spawn("worker", "docs", command, worktree=agent_worktree(root, key))
        wait_until(lambda: "Do you want to proceed?" in supervisor.pane_tail(key), 60)

        def pending() -> list:
            return cli("permissions", "pending", "--json", "--root", str(root)).json()  # type: ignore[return-value]

        wait_until(lambda: len(pending()) == 1, 60)
        (request,) = pending()
        assert (request["agent"], request["tool"]) == (key, "Bash")
        said = cli(
            "permissions", "decide", request["id"], "--deny", "--message", "not today",
            "--root", str(root),
        )  # fmt: skip
        assert said.code == 0, said.err
        wait_until(
            lambda: "Denied by PermissionRequest hook: not today" in supervisor.pane_tail(key), 60
        )
