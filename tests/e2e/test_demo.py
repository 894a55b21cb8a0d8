"""`runeconsole demo`: a real throw-away project and a simulated fleet process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.pids import pid_alive
from runeconsole.demo.fleet import TASK_ATTEMPTS, agent_worktree
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings
from runeconsole.services.suspension import Suspension
from tests.support.cli import cli_env
from tests.support.polling import wait_until
from tests.support.tmux import fake_agent


def test_fleet_only_registers_the_cast_in_a_real_repo(tmp_path: Path, run_cli) -> None:
    root = tmp_path / "demo"
    # Long enough for the task's three attempts to start (at TASK_AT), with tmux.
    result = run_cli("demo", "--fleet-only", "--duration", "6", "--dir", str(root), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "kept in" in result.stdout
    assert (root / ".git").is_dir()
    listed = json.loads(run_cli("agents", "--json", "--root", str(root)).stdout)
    cast = 12 + TASK_ATTEMPTS
    assert len(listed) == cast
    # The fleet stops its tmux agents (the task's too) on purpose when it ends: terminated,
    # never crashed.
    ended = {a["key"]: (a["status"], a["liveness"]) for a in listed if a.get("tmux_session")}
    assert set(ended.values()) == {("terminated", "grey")} and len(ended) == 8 + TASK_ATTEMPTS
    assert {a["liveness"] for a in listed if not a.get("tmux_session")} == {"green"}
    assert not any(name.endswith("AGENT_CRASHED.json") for name in signal_names(root))
    assert sum(name.endswith("AGENT_REGISTERED.json") for name in signal_names(root)) == cast


def signal_names(root: Path) -> list[str]:
    return os.listdir(root / ".claude" / "attractor" / "signals")


def test_dir_must_be_new(tmp_path: Path, run_cli) -> None:
    result = run_cli("demo", "--fleet-only", "--dir", str(tmp_path))
    assert result.returncode == 2 and "exists" in result.stderr


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("ending", ["q", "terminal closed"])
def test_demo_console_opens_and_cleans_up_on_quit(tmp_path: Path, ending: str) -> None:
    socket = f"rc-test-{os.getpid()}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = cli_env() | {"TMPDIR": str(scratch), "TERM": "xterm-256color"}
    command = [sys.executable, "-m", "runeconsole", "demo"]
    tmux = ["tmux", "-L", socket]
    subprocess.run(
        [
            *tmux,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "24",
            "-s",
            "demo",
            *[f"-e{k}={v}" for k, v in env.items() if k in ("PYTHONPATH", "TMPDIR", "TERM")],
            *command,
        ],
        check=True,
        timeout=10,
        env=env,
    )
    demo_pid = 0
    try:
        deadline = time.monotonic() + 30
        screen = ""
        while time.monotonic() < deadline and "worker" not in screen:
            time.sleep(0.3)
            screen = subprocess.run(
                [*tmux, "capture-pane", "-p", "-t", "demo"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            ).stdout
        assert "runeconsole" in screen and "orchestrator" in screen, screen
        (project,) = scratch.glob("runeconsole-demo-*/project")
        assert (project / ".git").is_dir()
        demo_pid = int(
            subprocess.run(
                [*tmux, "display-message", "-p", "-t", "demo", "#{pane_pid}"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout
        )
        if ending == "q":
            subprocess.run([*tmux, "send-keys", "-t", "demo", "q"], check=True, timeout=10)
        else:  # its tmux goes away: the demo gets SIGHUP
            subprocess.run([*tmux, "kill-server"], check=True, timeout=10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and list(scratch.glob("runeconsole-demo-*")):
            time.sleep(0.2)
        assert not list(scratch.glob("runeconsole-demo-*"))
        time.sleep(1.0)  # an agent left running would write its state back by now
        assert not list(scratch.iterdir()), (
            "an agent outlived the demo",
            [str(p) for p in scratch.rglob("*")],
        )
        assert not processes_mentioning(str(scratch))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and pid_alive(demo_pid):
            time.sleep(0.1)
        assert not pid_alive(demo_pid), "the demo did not exit"
    finally:
        Tmux(socket).kill_server()  # its socket file too
        if demo_pid and pid_alive(demo_pid):
            os.kill(demo_pid, signal.SIGKILL)


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that name ``text`` (the demo's agents do)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in args:
            found.append(args)
    return found


def test_fake_agents_suspend_and_request_merges_one_predicted_to_conflict(
    project: Path, tmux_socket: str
) -> None:
    supervisor = Supervisor(
        Project(project),
        settings=SupervisorSettings(socket_name=tmux_socket),
        tmux=Tmux(tmux_socket),
    )
    same_file = ("--merge-at", "0.3", "--merge-file", "src/api.py")
    for name, extra in (
        ("a", (*same_file, "--suspend-at", "0.3")),
        ("b", (*same_file, "--merge-via", "queue")),
    ):
        key = f"worker-{name}"
        worktree = agent_worktree(project, key)
        supervisor.spawn("worker", name, fake_agent(key, project, *extra), worktree=worktree)
    queue = MergeQueue(Project(project))
    signalled = Signals(Project(project))
    wait_until(lambda: signalled.pending(signal_type="MERGE_READY") and queue.read().pending())
    (ready,) = signalled.pending(signal_type="MERGE_READY")
    assert (ready.source, ready.payload["branch"]) == ("worker-a", "agent/worker-a")
    queue.pick_up_signals()  # as the console's merge-queue pane does
    state = queue.read()
    assert {e.identity: e.branch for e in state.pending()} == {
        "worker-a": "agent/worker-a",
        "worker-b": "agent/worker-b",
    }
    first, second = state.pending()
    predictions = queue.predict(state)
    assert not predictions[first.entry_id].conflicts
    assert predictions[second.entry_id].with_entries == {first.entry_id: ["src/api.py"]}
    (context,) = Suspension(Project(project)).list()
    assert (context.task_id, context.text("worker"), context.verdict) == (
        "1",
        "worker-a",
        "ok",
    )
    assert "src/a.py" in context.files("files_pending")


def test_without_tmux_the_fleet_still_shows_every_colour(project: Path) -> None:
    from runeconsole.demo.fleet import CRASHES, KILLED, Fleet
    from runeconsole.services.registry import Registry

    fleet = Fleet(project, tmux=False)
    fleet.launch()
    registry = Registry(Project(project))
    assert len(registry.list()) == 12 and not registry.paths.hook_files.exists()  # nothing spawned
    first = registry.get(CRASHES).get("agent_id")
    fleet.crash()
    fleet.kill()
    assert (registry.get(CRASHES).status, registry.get(KILLED).status) == ("crashed", "terminated")
    fleet.respawn_crashed()
    successor = registry.get(CRASHES)
    assert successor.status == "active" and successor.get("predecessor_id") == first
    fleet.step()  # heartbeats every agent still active, tmux or not
    fleet.stop()
