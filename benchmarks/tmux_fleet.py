"""Shared set-up for the supervisor benchmarks: a throw-away project and a private tmux
server (never the operator's), torn down with every agent in it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")

from runeconsole.adapters.tmux import Tmux  # noqa: E402
from runeconsole.demo import fake_agent  # noqa: E402
from runeconsole.demo.project import make_project  # noqa: E402
from runeconsole.services.project import Project  # noqa: E402
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings  # noqa: E402


@dataclass
class Fleet:
    root: Path
    tmux: Tmux
    supervisor: Supervisor

    def agent_command(self, key: str, *extra: str) -> list[str]:
        return fake_agent.command(key, self.root, "--seed", "1", *extra)


@contextlib.contextmanager
def fleet(**settings: object) -> Iterator[Fleet]:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed")
    base = Path(tempfile.mkdtemp(prefix="runeconsole-bench-"))
    socket = f"rc-bench-{uuid.uuid4().hex[:8]}"
    root = make_project(base / "project", socket)
    tmux = Tmux(socket, config_file="/dev/null")
    chosen = SupervisorSettings(socket_name=socket, **settings)  # type: ignore[arg-type]
    try:
        yield Fleet(root, tmux, Supervisor(Project(root), settings=chosen, tmux=tmux))
    finally:
        for pane in tmux.panes().values():
            with contextlib.suppress(ProcessLookupError, PermissionError, TypeError):
                os.killpg(pane.pid, signal.SIGKILL)  # type: ignore[arg-type]
        tmux.kill_server()
        shutil.rmtree(base, ignore_errors=True)


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    median = ordered[len(ordered) // 2]
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {median:.2f}s  p95 {p95:.2f}s  max {ordered[-1]:.2f}s  (n={len(ordered)})"
