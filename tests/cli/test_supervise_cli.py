"""``runeconsole spawn|monitor|respawn|handoff|kill`` on a private tmux server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.pids import pid_alive
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.service import (
    SOCKET_ENV,
    Supervisor,
    SupervisorSettings,
)
from tests.support.cli import cli_env
from tests.support.polling import wait_until
from tests.support.tmux import fake_agent, monitoring, sleeper, wait_for_monitor


def test_spawn_kill_monitor_respawn_via_cli(project: Path, tmux_socket: str, cli: Callable) -> None:
    base = ("--root", str(project), "--tmux-socket", tmux_socket)
    spawned = cli(
        "spawn", *base, "--role", "worker", "--name", "cli", "--node-id", "impl_cli",
        "--json", "--", *sleeper(),
    )  # fmt: skip
    assert spawned.code == 0, spawned.err
    data = spawned.json()
    assert data["tmux_session"] == "rune-worker-cli" and pid_alive(data["pid"])
    assert Tmux(tmux_socket).has_session("rune-worker-cli")

    Tmux(tmux_socket).kill_session("rune-worker-cli")
    monitored = cli("monitor", *base, "--once", "--json")
    assert monitored.code == 0, monitored.err
    assert monitored.json()["crashed"] == ["worker-cli"]
    assert cli("monitor", *base, "--once", "--json").json()["crashed"] == []

    respawned = cli("respawn", "worker-cli", *base, "--json")
    assert respawned.code == 0, respawned.err
    assert respawned.json()["predecessor_id"] == data["agent_id"]
    assert "You are a continuation of" in respawned.json()["wisdom"]

    killed = cli("kill", "worker-cli", *base)
    assert (killed.code, killed.out.strip()) == (0, "worker-cli: terminated")
    assert not Tmux(tmux_socket).has_session("rune-worker-cli")


def test_socket_from_environment(
    project: Path, tmux_socket: str, cli: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SOCKET_ENV, tmux_socket)
    result = cli(
        "spawn", "--root", str(project), "--role", "worker", "--name", "env", "--", *sleeper()
    )
    assert result.code == 0, result.err
    assert "rune-worker-env" in result.out
    assert Tmux(tmux_socket).has_session("rune-worker-env")


def test_handoff_via_cli_subprocess(project: Path, tmux_socket: str, run_cli: Callable) -> None:
    base = ("--root", str(project), "--tmux-socket", tmux_socket)
    key = "orchestrator-cli"
    spawned = run_cli("spawn", *base, "--role", "orchestrator", "--name", "cli", "--",
                      *fake_agent(key, project))  # fmt: skip
    assert spawned.returncode == 0, spawned.stderr
    tmux = Tmux(tmux_socket)
    wait_until(lambda: "Phase: investigation" in tmux.capture("=rune-orchestrator-cli:"))
    result = run_cli("handoff", key, *base, "--timeout", "20")
    assert result.returncode == 0, result.stderr
    assert "handoff exited" in result.stdout or "handoff hook_updated" in result.stdout
    assert "successor orchestrator-cli-" in result.stdout
    assert Registry(Project(project)).get(key).get("predecessor_id")


def test_usage_errors(project: Path, tmux_socket: str, cli: Callable) -> None:
    base = ("--root", str(project), "--tmux-socket", tmux_socket)
    assert cli("spawn", *base, "--role", "worker", "--name", "x").code == 2
    assert cli("spawn", *base, "--role", "bad/role", "--name", "x", "--", "true").code == 2
    missing = cli("respawn", "worker-nobody", *base)
    assert missing.code == 1 and "no agent 'worker-nobody'" in missing.err
    assert cli("handoff", "worker-nobody", *base).code == 1
    bad_socket = cli("monitor", "--root", str(project), "--tmux-socket", "../x", "--once")
    assert bad_socket.code == 2


def test_kill_goes_to_the_agents_own_server_or_refuses_a_named_other(
    project: Path, tmux_socket: str, other_tmux_socket: str, cli: Callable,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    spawned = cli("spawn", "--root", str(project), "--tmux-socket", tmux_socket,
                  "--role", "worker", "--name", "far", "--json", "--", *sleeper())  # fmt: skip
    assert spawned.code == 0, spawned.err
    pid = spawned.json()["pid"]
    named = cli("kill", "worker-far", "--root", str(project), "--tmux-socket", other_tmux_socket)
    assert named.code == 1
    assert f"runs on tmux server {tmux_socket}, not {other_tmux_socket}" in named.err
    assert pid_alive(pid) and Registry(Project(project)).get("worker-far").status == "active"
    monkeypatch.setenv(SOCKET_ENV, other_tmux_socket)  # configured elsewhere, not named
    killed = cli("kill", "worker-far", "--root", str(project))
    assert (killed.code, killed.out.strip()) == (0, "worker-far: terminated")
    assert not pid_alive(pid) and not Tmux(tmux_socket).has_session("rune-worker-far")


def test_spawn_over_an_old_hook_keeps_it_and_says_where(
    project: Path, tmux_socket: str, cli: Callable
) -> None:
    base = ("--root", str(project), "--tmux-socket", tmux_socket)
    first = cli("spawn", *base, "--role", "worker", "--name", "again", "--json", "--", *sleeper())
    assert first.code == 0, first.err
    hooks = HookFiles(Project(project))
    first_hook = hooks.get("worker-again").get("hook_id")
    hooks.update("worker-again", instructions="resume at the lexer")
    assert cli("kill", "worker-again", *base).code == 0
    again = cli("spawn", *base, "--role", "worker", "--name", "again", "--", *sleeper())
    assert again.code == 0, again.err
    old_hook = hooks.archived(first_hook)
    assert f"previous hook kept in {old_hook}" in again.out
    assert "runeconsole respawn worker-again" in again.out
    assert json.loads(old_hook.read_text())["resumption_instructions"] == "resume at the lexer"
    assert hooks.get("worker-again").get("resumption_instructions") is None


def test_one_monitor_for_as_long_as_it_runs_and_a_killed_one_frees_the_lock(
    project: Path, tmux_socket: str, run_cli: Callable
) -> None:
    base = ("--root", str(project), "--tmux-socket", tmux_socket)
    first = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "monitor", *base, "--interval", "0.2"],
        env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    supervisor = Supervisor(Project(project), settings=SupervisorSettings(socket_name=tmux_socket))
    try:
        wait_for_monitor(supervisor, first.pid)
        busy = f"another monitor (pid {first.pid}) is running"
        second = run_cli("monitor", *base, "--interval", "0.2", timeout=20)
        assert second.returncode == 1 and busy in second.stderr
        once = run_cli("monitor", *base, "--once", timeout=20)
        assert once.returncode == 1 and busy in once.stderr
        with monitoring(supervisor, interval=0.1) as reports:  # the console's way
            wait_until(lambda: any(r.skipped and r.other_monitor == first.pid for r in reports))
            first.kill()  # SIGKILL: no clean-up, yet the lock is free
            first.wait(timeout=10)
            wait_until(lambda: reports and not reports[-1].skipped)  # it took over
    finally:
        first.kill()
    assert run_cli("monitor", *base, "--once", timeout=20).returncode == 0
