"""The real Claude Code's background sessions (``claude --bg``, pinned in
.ci/claude-code-version) as agents: one started by ``runeconsole spawn --background``
and one started by hand are listed with their names and kind, peeked at through
``claude logs``, attached to in a new tmux window and stopped. Skipped, saying why,
where the binary is not installed."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from tests.support.claude import install
from tests.support.claude_api import text_turn
from tests.support.claude_background import Sandbox, sandbox, wait_for_session
from tests.support.claude_binary import binary, new_project
from tests.support.polling import wait_until

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]


def identity(root: Path, key: str) -> dict:
    registry = Registry(Project(root))
    if not registry.path_for(key).exists():
        return {}
    record = registry.get(key)
    return {} if record.error else dict(record.fields)


def spawned(box: Sandbox, role: str, name: str, task: str) -> dict:
    done = box.runeconsole(
        "spawn", "--background", "--role", role, "--name", name, "--json", "--", "claude", task
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_background_session_is_spawned_listed_peeked_and_stopped(tmp_path: Path) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    script = [text_turn("Hello from the background."), text_turn("A second one, by hand.")]
    with sandbox(root, home, script) as box:
        record = spawned(box, "worker", "parser", "Say hello")
        short = record["background_id"]
        assert (record["key"], record["kind"], record["status"]) == (
            "worker-parser",
            "background",
            "active",
        )
        wait_for_session(box, short)
        # Its hooks find the agent spawn registered (by the session's name), not a new one.
        agent = wait_until(
            lambda: (found := identity(root, "worker-parser")).get("last_message") and found, 60
        )
        assert agent["last_message"] == "Hello from the background."
        assert agent["session_name"] == "worker-parser" and agent["kind"] == "background"
        assert agent["claude"]["session_id"].startswith(short)
        # One started by hand: its hooks register it as claude-{dir}-{id}.
        by_hand = box.claude("--bg", "Say it again").stdout.split("·")[1].split()[0]
        mine = f"claude-project-{by_hand}"
        wait_until(lambda: identity(root, mine).get("last_message"), 60)

        listed = box.runeconsole("background", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        sessions = {s["id"]: s for s in json.loads(listed.stdout)["sessions"]}
        assert sessions[short]["key"] == "worker-parser" and sessions[short]["running"]
        assert sessions[by_hand]["key"] == mine
        table = box.runeconsole("background", "list")
        assert table.returncode == 0, table.stderr
        assert short in table.stdout and "worker-parser" in table.stdout

        peek = box.runeconsole("background", "logs", "worker-parser")
        assert peek.returncode == 0, peek.stderr
        peeked = box.runeconsole("peek", "worker-parser", "--json")  # the same, through peek
        assert peeked.returncode == 0, peeked.stderr
        assert json.loads(peeked.stdout)["screen_from"] == f"claude logs {short}"
        assert "Hello from the background." in json.loads(peeked.stdout)["screen"]
        assert "Hello from the background." in peek.stdout
        assert "Claude Code" in peek.stdout and "\x1b" not in peek.stdout
        raw = box.runeconsole("background", "logs", "worker-parser", "--raw").stdout
        assert "\x1b[" in raw  # the escapes as Claude Code wrote them

        stop = box.runeconsole("kill", "worker-parser", "--json")
        assert stop.returncode == 0, stop.stderr
        assert json.loads(stop.stdout)["status"] == "terminated"
        entry = next(s for s in box.sessions() if s.get("id") == short)
        assert entry["state"] == "stopped" and "pid" not in entry
        # The one stopped by hand, outside runeconsole: its SessionEnd hook, else the next
        # listing, terminates it.
        box.claude("stop", by_hand)
        listed = json.loads(box.runeconsole("background", "list", "--json").stdout)
        assert not next(s for s in listed["sessions"] if s["id"] == by_hand)["running"]
        assert identity(root, mine)["status"] == "terminated"


def test_attach_opens_the_session_in_a_new_window_of_the_operators_tmux(
    tmp_path: Path,
) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    socket = f"rc-operator-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    with sandbox(root, home, [text_turn("Attached and well.")]) as box:
        subprocess.run(
            [*tmux, "new-session", "-d", "-s", "op", "-x", "150", "-y", "45"], check=True
        )
        try:
            path = subprocess.run(
                [*tmux, "display", "-p", "#{socket_path},#{pid},0"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            short = spawned(box, "worker", "tail", "Say it")["background_id"]
            wait_until(lambda: identity(root, "worker-tail").get("last_message"), 60)
            done = box.runeconsole("background", "attach", "worker-tail", "--window", TMUX=path)
            assert done.returncode == 0, done.stderr
            windows = subprocess.run(
                [*tmux, "list-windows", "-F", "#{window_name}"], capture_output=True, text=True
            ).stdout.split()
            assert "claude:worker-tail" in windows

            def shown() -> str:
                return subprocess.run(
                    [*tmux, "capture-pane", "-p", "-t", "op:claude:worker-tail"],
                    capture_output=True, text=True,
                ).stdout  # fmt: skip

            wait_until(lambda: "Attached and well." in shown(), 60, every=0.5, what=shown())
            outside = box.runeconsole("background", "attach", "worker-tail", "--window")
            assert outside.returncode == 1
            assert f"attach {short}" in outside.stderr and "not inside tmux" in outside.stderr
        finally:
            subprocess.run([*tmux, "kill-server"], check=False)


async def test_the_console_shows_peeks_and_stops_a_background_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runeconsole.tui.console.app import create_app
    from runeconsole.tui.modals.agent_detail import AgentDetail
    from runeconsole.tui.modals.agent_peek import AgentPeek
    from runeconsole.tui.modals.confirm import ConfirmScreen
    from tests.support.polling import until

    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    with sandbox(root, home, [text_turn("Hello from the background.")]) as box:
        short = spawned(box, "worker", "parser", "Say hello")["background_id"]
        wait_until(lambda: identity(root, "worker-parser").get("last_message"), 60)
        for name, value in box.environ.items():  # the console's Claude Code is the sandbox's
            monkeypatch.setenv(name, value)
        app = create_app(root, rescan_seconds=60)
        async with app.run_test(size=(150, 40)) as pilot:
            pane = app.agents_pane
            await until(pilot, lambda: pane.table.has("worker-parser"))
            pane.select("worker-parser")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, AgentDetail))
            peek = app.screen.query_one(AgentPeek)  # through runeconsole peek's seam
            screen = lambda: peek.parts().screen  # noqa: E731
            await until(pilot, lambda: "Hello from the background." in str(screen()), 60)
            title = peek.parts().screen_title.plain
            assert f"claude logs {short}" in title
            facts = dict(app.screen.session_facts())  # type: ignore[attr-defined]
            assert facts["kind"] == f"background ({short})"
            assert facts["last message"] == "Hello from the background."
            await pilot.press("escape")
            await pilot.press("x")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await until(
                pilot, lambda: identity(root, "worker-parser")["status"] == "terminated", 60
            )
        entry = next(s for s in box.sessions() if s.get("id") == short)
        assert entry["state"] == "stopped"
