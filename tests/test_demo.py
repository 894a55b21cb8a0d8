"""`runeconsole demo`: a real throw-away project and a simulated fleet process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli_env


def test_fleet_only_registers_the_cast_in_a_real_repo(tmp_path: Path, run_cli) -> None:
    root = tmp_path / "demo"
    result = run_cli("demo", "--fleet-only", "--duration", "3", "--dir", str(root), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "kept in" in result.stdout
    assert (root / ".git").is_dir()
    listed = json.loads(run_cli("agents", "--json", "--root", str(root)).stdout)
    assert len(listed) == 12
    assert {a["liveness"] for a in listed} == {"green"}
    signals = os.listdir(root / ".claude" / "attractor" / "signals")
    assert sum(name.endswith("AGENT_REGISTERED.json") for name in signals) == 12


def test_dir_must_be_new(tmp_path: Path, run_cli) -> None:
    result = run_cli("demo", "--fleet-only", "--dir", str(tmp_path))
    assert result.returncode == 2 and "exists" in result.stderr


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_demo_console_opens_and_cleans_up_on_quit(tmp_path: Path) -> None:
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
        subprocess.run([*tmux, "send-keys", "-t", "demo", "q"], check=True, timeout=10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and list(scratch.glob("runeconsole-demo-*")):
            time.sleep(0.2)
        assert not list(scratch.glob("runeconsole-demo-*"))
        time.sleep(1.0)  # an agent left running would write its state back by now
        assert not list(scratch.iterdir()), "an agent outlived the demo"
        assert not processes_mentioning(str(scratch))
    finally:
        subprocess.run([*tmux, "kill-server"], timeout=10, check=False)


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
