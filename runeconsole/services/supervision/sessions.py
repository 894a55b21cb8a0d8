"""What every part of the supervisor shares: the project's handles, and the questions they
all ask of an agent's tmux session (is it ours, is it running) and how it is stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from runeconsole.adapters.clock import Clock
from runeconsole.adapters.tmux import PaneInfo, Tmux
from runeconsole.core import pids
from runeconsole.core.errors import RuneError
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.validate import ID_PATTERN
from runeconsole.services.hook_files import SUPERVISOR, HookFiles
from runeconsole.services.pane_patterns import PaneReading, safe_to_type
from runeconsole.services.project import Project
from runeconsole.services.registry import (
    ACTIVE,
    SIGNAL_SOURCE,
    SIGNAL_TARGET,
    AgentRecord,
    Registry,
)
from runeconsole.services.signals import Signals
from runeconsole.services.supervision.settings import SupervisorSettings

if TYPE_CHECKING:
    from runeconsole.services.identity_fields import AgentMetadata, PendingInput

KILL_GRACE = 2.0
PENDING_INPUT: Final = "pending_input"  # identity metadata: text waiting for a pane safe to type in


def existing_worktree(record: AgentRecord, root: Path) -> Path | None:
    """The agent's worktree (a relative one under ``root``) while it is still on disk: the
    hook lists its uncommitted files."""
    worktree = record.worktree_in(root)
    return worktree if worktree and worktree.is_dir() else None


def _pending(metadata: AgentMetadata) -> list[PendingInput]:
    entries = metadata.get(PENDING_INPUT)
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("text"), str)]


def server_label(socket: str | None) -> str:
    return socket or "(tmux's default server)"


@dataclass
class AgentSessions:
    project: Project
    settings: SupervisorSettings
    tmux: Tmux
    signals: Signals
    registry: Registry
    hook_files: HookFiles
    _servers: dict[str | None, Tmux] = field(init=False, default_factory=dict)

    @property
    def root(self) -> Path:
        return self.project.root

    @property
    def clock(self) -> Clock:
        return self.project.clock

    @property
    def paths(self) -> ProjectPaths:
        return self.project.paths

    def signal(self, signal_type: str, payload: dict[str, Any]) -> None:
        self.signals.send(signal_type, SIGNAL_SOURCE, SIGNAL_TARGET, payload)

    def supervised(self, record: AgentRecord) -> bool:
        """Active identities with a tmux session on our server (or no server recorded)."""
        if record.error or record.status != ACTIVE or not record.get("tmux_session"):
            return False
        if "tmux_socket" in record.metadata:
            return bool(record.metadata["tmux_socket"] == self.settings.socket_name)
        return True

    def tmux_for(self, record: AgentRecord) -> Tmux:
        """The server the agent was spawned on (``metadata.tmux_socket``): whatever server
        the caller is set up for, an existing agent is looked at and stopped there. A
        caller that named another server (``--tmux-socket``) is refused instead, so no
        command ever acts on a same-named session of the wrong server."""
        metadata = record.metadata
        if "tmux_socket" not in metadata:  # registered by another tool: the caller's server
            return self.tmux
        socket = metadata["tmux_socket"]
        if socket == self.settings.socket_name:
            return self.tmux
        if socket is not None and not (isinstance(socket, str) and ID_PATTERN.fullmatch(socket)):
            raise RuneError(
                f"{record.key}: metadata.tmux_socket {socket!r} in {record.path} is not a "
                "tmux socket name"
            )
        if self.settings.socket_explicit:
            hint = f"--tmux-socket {socket}" if socket else "no --tmux-socket"
            raise RuneError(
                f"{record.key} runs on tmux server {server_label(socket)}, not "
                f"{server_label(self.settings.socket_name)}; use {hint} to act on it"
            )
        if socket not in self._servers:
            self._servers[socket] = Tmux(
                socket, config_file=self.tmux.config_file, timeout=self.tmux.timeout
            )
        return self._servers[socket]

    def pane_of(self, record: AgentRecord) -> PaneInfo | None:
        session = record.get("tmux_session")
        return self.tmux_for(record).pane(str(session)) if session else None

    def running(self, record: AgentRecord, pane: PaneInfo | None = None) -> bool:
        pane = pane or self.pane_of(record)
        return pane is not None and not pane.dead and self.pid_alive(record)

    @staticmethod
    def pid_alive(record: AgentRecord) -> bool:
        pid = record.get("pid")
        return not isinstance(pid, int) or pids.pid_alive(pid)

    def session_of(self, key: str) -> tuple[Tmux, str]:
        """The agent's server and session name (an error says when it has none)."""
        record = self.registry.get(key)
        session = record.get("tmux_session")
        if not session:
            raise RuneError(f"{key} has no tmux session recorded")
        return self.tmux_for(record), str(session)

    # -- typing into an agent's pane ----------------------------------------------------------

    def type_or_queue(
        self,
        record: AgentRecord,
        text: str,
        reading: PaneReading | None,
        *,
        signal_type: str | None = None,
    ) -> bool:
        """Type ``text`` and Enter into the agent's pane if ``reading`` (its latest screen)
        is safe to type into (drawn, no menu where Enter would accept an option); else keep
        it in the identity's ``pending_input`` for a later monitor pass (``type_pending``).
        ``signal_type`` is sent once the text is typed. Returns whether it was typed now."""
        if reading is not None and safe_to_type(reading):
            self._type(record, text, signal_type)
            return True
        entry: PendingInput = {"text": text, "signal_type": signal_type}
        self.registry.edit_metadata(
            record.key,
            lambda metadata: metadata.update({PENDING_INPUT: [*_pending(metadata), entry]}),
        )
        return False

    def type_pending(self, record: AgentRecord, reading: PaneReading) -> int:
        """Type what waits in ``pending_input``, in order, once ``reading`` is safe."""
        if not _pending(record.metadata) or not safe_to_type(reading):
            return 0
        taken: list[PendingInput] = []

        def take(metadata: AgentMetadata) -> None:
            taken.extend(_pending(metadata))
            metadata[PENDING_INPUT] = None

        record = self.registry.edit_metadata(record.key, take)
        for done, entry in enumerate(taken):
            try:
                self._type(record, str(entry["text"]), entry.get("signal_type"))
            except RuneError:
                self._requeue(record.key, taken[done:])
                raise
        return len(taken)

    def _requeue(self, key: str, entries: list[PendingInput]) -> None:
        """Text that could not be typed goes back, ahead of anything queued meanwhile."""

        def put_back(metadata: AgentMetadata) -> None:
            metadata[PENDING_INPUT] = [*entries, *_pending(metadata)]

        self.registry.edit_metadata(key, put_back)

    def _type(self, record: AgentRecord, text: str, signal_type: object) -> None:
        self.tmux_for(record).send_text(f"={record.get('tmux_session')}:", text)
        if isinstance(signal_type, str):
            self.signal(
                signal_type,
                {"key": record.key, "agent_id": record.get("agent_id"), "message": text},
            )

    def stop(self, record: AgentRecord, grace: float = KILL_GRACE) -> None:
        """Kill the agent's session, then its process group if it outlived the hang-up
        (``grace`` seconds for each of hang-up and SIGTERM before the next step)."""
        session, pid = record.get("tmux_session"), record.get("pid")
        if session:
            self.tmux_for(record).kill_session(str(session))
        if not isinstance(pid, int):
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            deadline = time.monotonic() + grace
            while pids.pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not pids.pid_alive(pid):
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(pid) == pid:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)

    def kill(self, key: str, reason: str) -> AgentRecord:
        """Stop the agent on purpose (its worktree untouched, uncommitted files listed in
        the hook).

        It is marked terminated under its lock *before* its session is killed: a monitor
        pass that then finds the session gone cannot mark it crashed (that change only
        applies to an identity still active), so it is neither alerted nor re-spawned.
        """
        record = self.registry.get(key)
        self.tmux_for(record)  # refused before anything changes
        agent_id = record.get("agent_id")
        if record.status == ACTIVE:
            record, _ = self.registry.mark_terminated(key, reason, agent_id=agent_id)
            if record.get("agent_id") != agent_id:
                raise RuneError(
                    f"{key} was replaced by {record.get('agent_id')} meanwhile; nothing was "
                    "killed (look again, then kill it if you mean to)"
                )
        try:
            self.stop(record)
        except RuneError as exc:
            raise RuneError(
                f"{key} is marked {record.status}, but stopping its session failed: {exc.message}"
            ) from None
        worktree = existing_worktree(record, self.root)
        if self.hook_files.read(key) is not None and worktree:
            self.hook_files.update(key, worktree=worktree, writer=SUPERVISOR)
        return self.registry.get(key)
