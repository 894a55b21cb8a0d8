"""Where a session's terminal is: the hook records ``$TMUX_PANE`` and ``$TMUX`` at
SessionStart (with the Claude Code process above it), drops them at a start outside tmux,
and keeps the Stop event's last assistant message for ``peek``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from runeconsole.core.pids import process_start
from runeconsole.services.claude.hooks import terminal
from tests.support.claude import Bridge, bridge

pytestmark = pytest.mark.timeout(120)

IN_TMUX = {"TMUX_PANE": "%7", "TMUX": "/tmp/tmux-1000/work,4242,0"}


@pytest.fixture
def in_tmux(project: Path) -> Iterator[Bridge]:
    with bridge(project, IN_TMUX) as made:
        yield made


def recorded(made: Bridge) -> dict | None:
    return made.identity()["claude"].get("tmux")


def test_session_start_in_tmux_records_the_pane_and_socket(in_tmux: Bridge) -> None:
    in_tmux.send("SessionStart")
    found = recorded(in_tmux)
    assert found is not None
    assert (found["pane"], found["socket"]) == ("%7", "/tmp/tmux-1000/work")
    # Run by the test's hook runner, no Claude Code process is above the hook.
    assert (found["pid"], found["pid_start"]) == (None, None)


@pytest.mark.e2e
def test_a_session_whose_start_was_missed_is_recorded_at_its_next_event(
    project: Path,
) -> None:
    with bridge(project) as outside:
        outside.send("SessionStart")
        assert recorded(outside) is None
    with bridge(project, IN_TMUX) as inside:
        inside.send("UserPromptSubmit")
        assert recorded(inside) == {
            "pane": "%7",
            "socket": "/tmp/tmux-1000/work",
            "pid": None,
            "pid_start": None,
        }


@pytest.mark.e2e
def test_a_start_outside_tmux_drops_the_pane(project: Path) -> None:
    with bridge(project, IN_TMUX) as inside:
        inside.send("SessionStart")
        assert recorded(inside) is not None
    with bridge(project) as outside:
        outside.send("SessionStart", source="resume")
        assert recorded(outside) is None


@pytest.mark.e2e
def test_stop_keeps_the_last_assistant_message(in_tmux: Bridge) -> None:
    in_tmux.send("SessionStart")
    in_tmux.send("Stop", last_assistant_message="Both fixed; ready for review.")
    claude = in_tmux.identity()["claude"]
    assert claude["last_assistant_message"] == "Both fixed; ready for review."
    assert claude["last_assistant_message_at"].endswith("Z")


def test_the_session_process_is_the_nearest_claude_code_above() -> None:
    """A process named ``claude`` (as Claude Code names itself) with a shell below it, as
    when Claude Code runs a hook command."""
    claude = subprocess.Popen(
        ["claude", "-c", "sleep 30 & wait"], executable="/bin/sh", start_new_session=True
    )
    try:
        child = None
        for _ in range(200):
            out = subprocess.run(
                ["pgrep", "-P", str(claude.pid)], capture_output=True, text=True, check=False
            ).stdout.split()
            if out:
                child = int(out[0])
                break
            subprocess.run(["sleep", "0.02"], check=False)
        assert child is not None
        found = terminal.describe("%3", "/tmp/tmux-1000/default", below=child)
        assert found == {
            "pane": "%3",
            "socket": "/tmp/tmux-1000/default",
            "pid": claude.pid,
            "pid_start": process_start(claude.pid),
        }
    finally:
        claude.kill()
        claude.wait()


@pytest.mark.parametrize(
    ("pane", "tmux"),
    [
        ("", "/tmp/s,1,0"),
        ("%x", "/tmp/s,1,0"),
        ("3", "/tmp/s,1,0"),
        ("%3", ""),
        ("%3", "relative/socket,1,0"),
        ("%3", "/tmp/s\nx,1,0"),
    ],
)
def test_a_malformed_environment_records_nothing(pane: str, tmux: str) -> None:
    assert terminal.from_environ({"TMUX_PANE": pane, "TMUX": tmux}) is None


def test_a_malformed_record_reads_as_none() -> None:
    for bad in ({"pane": "%3"}, {"pane": "x", "socket": "/s"}, "text", None):
        assert terminal.recorded({"claude": {"tmux": bad}}) is None
    found = terminal.recorded(
        {"claude": {"tmux": {"pane": "%3", "socket": "/s", "pid": True, "pid_start": "1"}}}
    )
    assert found is not None and (found.pid, found.pid_start) == (None, None)
