"""Agents for the say and peek tests: real processes in panes of a private tmux server,
each a paste reader (``tests/support/paste_reader.py``) that logs every byte it gets."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runeconsole.adapters.tmux import Tmux
from runeconsole.core.pids import process_start
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.reply import Replies
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings
from tests.support.polling import wait_until


def reader(log: Path, screen: Path | None = None) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tests.support.paste_reader",
        str(log),
        *([str(screen)] if screen else []),
    ]


@dataclass
class TmuxAgents:
    root: Path
    socket: str
    supervisor: Supervisor
    replies: Replies

    @property
    def registry(self) -> Registry:
        return self.supervisor.registry

    def spawn(self, name: str, screen: Path | None = None) -> Path:
        """A spawned agent ``worker-NAME`` reading pastes; the log of what it read."""
        log = self.root.parent / f"{name}.log"
        self.supervisor.spawn("worker", name, reader(log, screen))
        wait_until(log.exists, 20, what=f"{name} ready")
        return log

    def pane(self, name: str, log: Path, screen: Path | None = None) -> tuple[str, int]:
        """A pane of our server not started by ``spawn`` (as a Claude Code session started
        in tmux by hand): (pane id, its process)."""
        out = subprocess.run(
            ["tmux", "-L", self.socket, "new-session", "-d", "-s", name, "-x", "120",
             "-y", "30", "-P", "-F", "#{pane_id} #{pane_pid}", "--", *reader(log, screen)],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout.split()  # fmt: skip
        wait_until(log.exists, 20, what=f"{name} ready")
        return out[0], int(out[1])

    def socket_path(self) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "display-message", "-p", "#{socket_path}"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout.strip()  # fmt: skip

    def hooked(self, name: str, pane: str, pid: int | None, **claude: Any) -> str:
        """A Claude Code agent whose hook recorded ``pane`` (and session process ``pid``)
        at SessionStart; its key."""
        key = f"claude-{name}"
        self.registry.register("claude", name, session_id=f"s-{name}")
        recorded = {
            "pane": pane,
            "socket": self.socket_path(),
            "pid": pid,
            "pid_start": process_start(pid) if pid else None,
        }
        self.registry.update(key, {"claude": {"tmux": recorded, **claude}})
        return key


def make_tmux_agents(project: Path, tmux_socket: str) -> TmuxAgents:
    settings = SupervisorSettings(socket_name=tmux_socket)
    supervisor = Supervisor(
        Project(project), settings=settings, tmux=Tmux(tmux_socket, config_file="/dev/null")
    )
    return TmuxAgents(
        project, tmux_socket, supervisor, Replies(supervisor.project, supervisor=supervisor)
    )
