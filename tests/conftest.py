"""Fixtures every floor shares: real temp projects (git repos), an injected clock, the CLI
in-process and as a process, private tmux servers. Helpers that are not fixtures live in
``tests/support/``; each area's own fixtures in the ``conftest.py`` of its folder."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.adapters.tmux import Tmux
from runeconsole.cli import main
from tests.support.claude import Bridge, bridge
from tests.support.cli import CliResult, cli_env
from tests.support.merge_queue import commit_in_checkout, ignore_state
from tests.support.paths import TESTS
from tests.support.replies import TmuxAgents, make_tmux_agents
from tests.support.sshd import Sshd, find_sshd, start_sshd

# The end-to-end tests, marked ``e2e``, are those that need what is more than Python and
# git: the real Claude Code and the demo (tests/e2e/), runeconsole serve in a browser
# (tests/web/), a real disk filled up or made read-only (tests/disk/), and every test on a
# real tmux server or sshd (killed with -9 at a pause point too), here; where they are,
# the tests of real processes racing (a hook or the CLI run as Claude Code or a script
# runs it, thousands of writes) and property runs of thousands of cases. ``pytest -m
# "not e2e"`` runs the rest in a few minutes: every floor, the console driven with Pilot
# and its snapshots (tests/tui/), and the checkers (ruff, mypy, the import contracts and
# the public-API guard); ``.ci/run`` runs all (docs/contributing.md has both times).
E2E_DIRECTORIES = frozenset({"e2e", "web", "disk"})
E2E_FIXTURES = frozenset({"tmux_socket", "other_tmux_socket", "sshd"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.relative_to(TESTS).parts[0]
        fixtures = getattr(item, "fixturenames", ())
        if folder in E2E_DIRECTORIES or E2E_FIXTURES.intersection(fixtures):
            item.add_marker(pytest.mark.e2e)


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


@pytest.fixture(autouse=True)
def private_state_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own ``XDG_STATE_HOME``: a fleet's served console is announced
    there (and notifications link to it), and no test may see the user's."""
    path = tmp_path_factory.mktemp("state-home")
    monkeypatch.setenv("XDG_STATE_HOME", str(path))
    return path


@pytest.fixture
def chome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's config dir for this test (its task files live under it), inside the
    test's own ``tmp_path`` so that what lies beside it is the test's too."""
    path = tmp_path / "claude-config"
    path.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def hooked(project: Path) -> Iterator[Bridge]:
    """The project with our hooks installed, and a Claude Code session to send events."""
    with bridge(project) as made:
        yield made


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh git repository with one commit: the project root."""
    root = tmp_path / "project"
    git.init_repo(root)
    return root


@pytest.fixture
def repo(project: Path) -> Path:
    """The project with some history: three files committed on main, its own state kept
    out of ``git status`` (as a real project does)."""
    ignore_state(project)
    commit_in_checkout(project, {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}, "base files")
    return project


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


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
    """A private sshd on 127.0.0.1 (``tests/support/sshd.py``), one for the whole run;
    without sshd the test is skipped and says why."""
    binary = find_sshd()
    if binary is None or shutil.which("ssh") is None:
        pytest.skip("sshd or ssh is not installed (Debian: openssh-server): no SSH tests")
    yield from start_sshd(binary)


@pytest.fixture
def other_tmux_socket(tmux_socket: str) -> Iterator[str]:
    """A second private server, for agents that must be found where they were spawned."""
    yield from private_tmux_server()


@pytest.fixture
def tmux_agents(project: Path, tmux_socket: str) -> TmuxAgents:
    """Agents in panes of a private tmux server, reading pastes (``tests/support/replies.py``)."""
    return make_tmux_agents(project, tmux_socket)
