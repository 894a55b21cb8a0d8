"""What every part of the supervisor shares: the project's handles, and the questions they
all ask of an agent's tmux session (is it ours, is it running) and how it is stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import Clock
from runeconsole.adapters.tmux import PaneInfo, Tmux, process_alive
from runeconsole.core.errors import RuneError
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.hooks import Hooks
from runeconsole.services.registry import (
    ACTIVE,
    SIGNAL_SOURCE,
    SIGNAL_TARGET,
    AgentRecord,
    Registry,
)
from runeconsole.services.signals import Signals
from runeconsole.services.supervision.settings import SupervisorSettings

KILL_GRACE = 2.0


def existing_worktree(record: AgentRecord) -> Path | None:
    """The agent's worktree while it is still on disk: the hook lists its uncommitted files."""
    worktree = Path(record.worktree) if record.worktree else None
    return worktree if worktree and worktree.is_dir() else None


@dataclass
class AgentSessions:
    root: Path
    clock: Clock
    settings: SupervisorSettings
    tmux: Tmux
    signals: Signals
    registry: Registry
    hooks: Hooks
    paths: ProjectPaths = field(init=False)

    def __post_init__(self) -> None:
        self.paths = ProjectPaths(self.root)

    def signal(self, signal_type: str, payload: dict[str, Any]) -> None:
        self.signals.send(signal_type, SIGNAL_SOURCE, SIGNAL_TARGET, payload)

    def supervised(self, record: AgentRecord) -> bool:
        """Active identities with a tmux session on our server (or no server recorded)."""
        if record.error or record.status != ACTIVE or not record.get("tmux_session"):
            return False
        if "tmux_socket" in record.metadata:
            return record.metadata["tmux_socket"] == self.settings.socket_name
        return True

    def running(self, record: AgentRecord, pane: PaneInfo | None = None) -> bool:
        pane = pane or self.tmux.pane(str(record.get("tmux_session") or ""))
        return pane is not None and not pane.dead and self.pid_alive(record)

    @staticmethod
    def pid_alive(record: AgentRecord) -> bool:
        pid = record.get("pid")
        return not isinstance(pid, int) or process_alive(pid)

    def session_of(self, key: str) -> str:
        session = self.registry.get(key).get("tmux_session")
        if not session:
            raise RuneError(f"{key} has no tmux session recorded")
        return str(session)

    def stop(self, session: str, pid: object, grace: float = KILL_GRACE) -> None:
        """Kill the session, then the agent's process group if it outlived the hang-up
        (``grace`` seconds for each of hang-up and SIGTERM before the next step)."""
        self.tmux.kill_session(session)
        if not isinstance(pid, int):
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            deadline = time.monotonic() + grace
            while process_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not process_alive(pid):
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(pid) == pid:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)

    def kill(self, key: str, reason: str) -> AgentRecord:
        """Stop the agent (its worktree untouched, uncommitted files listed in the hook)."""
        record = self.registry.get(key)
        session = record.get("tmux_session")
        if session:
            self.stop(str(session), record.get("pid"))
        worktree = existing_worktree(record)
        if self.hooks.read(key) is not None and worktree:
            self.hooks.update(key, worktree=worktree)
        if record.status == ACTIVE:
            record, _ = self.registry.mark_terminated(key, reason)
        return record
