"""Shared fixtures: real temp projects (git repos), an injected clock, the CLI."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual import events
from textual.app import App

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.tmux import Tmux
from runeconsole.cli import main
from tests.sshd_helpers import Sshd, find_sshd, start_sshd

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture(autouse=True, scope="session")
def no_default_tmux_server() -> Iterator[None]:
    """Anything that reaches for tmux without a socket of its own gets a private, empty
    server, so no test ever touches the operator's sessions."""
    name = f"rc-tests-{os.getpid()}"
    previous = os.environ.get("RUNECONSOLE_TMUX_SOCKET")
    os.environ["RUNECONSOLE_TMUX_SOCKET"] = name
    yield
    if previous is None:
        os.environ.pop("RUNECONSOLE_TMUX_SOCKET", None)
    else:
        os.environ["RUNECONSOLE_TMUX_SOCKET"] = previous
    if shutil.which("tmux"):
        subprocess.run(
            ["tmux", "-L", name, "kill-server"], capture_output=True, timeout=10, check=False
        )


@pytest.fixture(autouse=True)
def private_claude_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own ``CLAUDE_CONFIG_DIR`` (a test file may set a closer one):
    services now write Claude Code task files, and none may ever reach the user's."""
    path = tmp_path_factory.mktemp("claude-config")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh git repository with one commit: the project root."""
    root = tmp_path / "project"
    git.init_repo(root)
    return root


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> object:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run ``runeconsole ARGS`` in-process and capture what it prints."""

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``runeconsole ARGS`` as a real process (for races, kills and blocking calls)."""

    def run(*args: str, timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "runeconsole", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=cli_env(),
            check=False,
            **kwargs,  # type: ignore[arg-type]
        )

    return run


def private_tmux_server() -> Iterator[str]:
    """A unique ``tmux -L`` name; at the end every agent on it is killed, then the server."""
    name = f"rc-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    yield name
    panes = subprocess.run(
        ["tmux", "-L", name, "list-panes", "-a", "-F", "#{pane_pid}"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    for pid in panes.stdout.split():  # agents that ignore the hang-up must not outlive the test
        with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
            os.killpg(int(pid), signal.SIGKILL)
    Tmux(name).kill_server()


@pytest.fixture
def tmux_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private tmux server (``tmux -L <unique>``), killed at teardown; never the user's.

    The server inherits this environment, so agents started in it import this checkout.
    """
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    monkeypatch.setenv("PYTHONPATH", cli_env()["PYTHONPATH"])
    yield from private_tmux_server()


@pytest.fixture(scope="session")
def sshd() -> Iterator[Sshd]:
    """A private sshd on 127.0.0.1 (``tests/sshd_helpers.py``), one for the whole run;
    without sshd the test is skipped and says why."""
    binary = find_sshd()
    if binary is None or shutil.which("ssh") is None:
        pytest.skip("sshd or ssh is not installed (Debian: openssh-server): no SSH tests")
    yield from start_sshd(binary)


@pytest.fixture
def other_tmux_socket(tmux_socket: str) -> Iterator[str]:
    """A second private server, for agents that must be found where they were spawned."""
    yield from private_tmux_server()


def burst(app: App, text: str) -> None:
    """Keys queued in one go, as a paste or keys sent over ssh arrive: no pause between
    them, unlike ``Pilot.press``."""
    for char in text:
        event = events.Key({"/": "slash"}.get(char, char), char)
        event.set_sender(app)
        app._driver.send_message(event)
