"""Agents in tmux: spawn, watch, re-spawn and hand off.

The supervisor runs the fleet as the protocol says
(docs/protocols.md#supervising-agents-in-tmux-monitor-handoff-respawn).
``spawn`` writes the identity and the initial hook, then starts the agent's command in
its own tmux session. ``monitor_step`` looks at every supervised session once and
writes what it reads of each pane to the hook. ``respawn`` starts a successor with the
same command and worktree and a wisdom prompt built from the hook; ``handoff`` asks an
agent that runs out of context to save and exit, force-kills it if it does not, and
re-spawns it. The agent's worktree is never touched: uncommitted files are listed, not
lost.

``Supervisor`` is the one entry point the console and CLI use; each job lives in its
own module of this package, and the names callers import are re-exported here.
An agent that is a Claude Code background session (no tmux session: Claude Code's daemon
runs it) is stopped, peeked at and attached to through ``services.claude.background``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from runeconsole.adapters.tmux import Tmux, open_window
from runeconsole.services.claude.background.sessions import Background
from runeconsole.services.claude.session.session_view import is_background
from runeconsole.services.fleet.problem import Problem
from runeconsole.services.hook_files import HookFiles
from runeconsole.services.project import Project
from runeconsole.services.registry import AgentRecord, Registry
from runeconsole.services.signals import Signals
from runeconsole.services.supervision import screens
from runeconsole.services.supervision.context_warnings import CHECKPOINT_MESSAGE
from runeconsole.services.supervision.handoff import HANDOFF_MESSAGE, HandoffResult, Handoffs
from runeconsole.services.supervision.monitoring import Monitor
from runeconsole.services.supervision.observations import (
    AgentObservation,
    ContextWarning,
    MonitorReport,
    ObservationFile,
)
from runeconsole.services.supervision.problems import find_problems
from runeconsole.services.supervision.sessions import AgentSessions
from runeconsole.services.supervision.settings import SOCKET_ENV, SupervisorSettings
from runeconsole.services.supervision.spawning import Spawner, SpawnResult
from runeconsole.services.supervision.wisdom import WISDOM_ENV, build_wisdom

__all__ = [
    "CHECKPOINT_MESSAGE",
    "HANDOFF_MESSAGE",
    "SOCKET_ENV",
    "WISDOM_ENV",
    "AgentObservation",
    "ContextWarning",
    "HandoffResult",
    "MonitorReport",
    "Problem",
    "SpawnResult",
    "Supervisor",
    "SupervisorSettings",
    "build_wisdom",
]


class Supervisor:
    """Wires the parts to one registry, hook store and tmux server, so a spawn, a monitor
    pass and a handoff all see the same agents."""

    def __init__(
        self,
        project: Project,
        *,
        settings: SupervisorSettings | None = None,
        tmux: Tmux | None = None,
        registry: Registry | None = None,
        hook_files: HookFiles | None = None,
    ) -> None:
        """``settings``: the project's unless given (the CLI's ``--tmux-socket``)."""
        settings = settings or project.settings(SupervisorSettings)
        signals = Signals(project)
        self.sessions = AgentSessions(
            project=project,
            settings=settings,
            tmux=tmux or Tmux(settings.socket_name),
            signals=signals,
            registry=registry or Registry(project, signals=signals),
            hook_files=hook_files or HookFiles(project, signals),
        )
        # The console's panes reach these through the supervisor.
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.settings, self.tmux, self.signals = settings, self.sessions.tmux, signals
        self.registry, self.hook_files = self.sessions.registry, self.sessions.hook_files
        self._spawner = Spawner(self.sessions)
        self._handoffs = Handoffs(self.sessions, self._spawner)
        self._observation_file = ObservationFile.of(self.paths)
        self._monitor = Monitor(
            self.sessions, self._spawner, self._handoffs, self._observation_file
        )
        self._background: Background | None = None

    @property
    def observations_path(self) -> Path:
        return self._observation_file.path

    # -- starting agents -------------------------------------------------------------------

    def spawn(
        self,
        role: str,
        name: str,
        command: Sequence[str],
        *,
        worktree: Path | None = None,
        node_id: str | None = None,
        bead_id: str | None = None,
        fresh_worktree: bool = False,
    ) -> SpawnResult:
        """Identity, initial hook, then ``command`` (argument list) in session ``rune-{key}``
        (``fresh_worktree``: made for it just now, so git is not asked what it changed)."""
        return self._spawner.spawn(
            role,
            name,
            command,
            worktree=worktree,
            node_id=node_id,
            bead_id=bead_id,
            fresh_worktree=fresh_worktree,
        )

    def respawn(self, key: str, *, cause: str = "operator") -> SpawnResult:
        """A successor with the same command and worktree and a wisdom prompt from the hook;
        ``cause`` is ``operator``, ``auto`` (counts against the limit) or ``handoff``."""
        return self._spawner.respawn(key, cause=cause)

    def supervised(self, record: AgentRecord) -> bool:
        """Active identities with a tmux session on our server (or no server recorded)."""
        return self.sessions.supervised(record)

    # -- the monitor -----------------------------------------------------------------------

    def monitor_step(self) -> MonitorReport:
        """One pass over every supervised agent; skipped while another monitor runs."""
        return self._monitor.step()

    def run_monitor(
        self,
        *,
        interval: float | None = None,
        stop: threading.Event | None = None,
        on_report: Callable[[MonitorReport], None] | None = None,
        follow: bool = True,
    ) -> None:
        """Monitor until ``stop`` is set, the only monitor of the project meanwhile; while
        another runs, ``follow`` reports skipped passes and takes over when it ends,
        otherwise ``LockBusy`` names its pid."""
        self._monitor.run(interval=interval, stop=stop, on_report=on_report, follow=follow)

    def follow_fleet(self, agents: Callable[[], list[AgentRecord]] | None) -> None:
        """Let the monitor visit the agents ``agents`` returns (a fleet model's supervised
        records, kept current by file events) instead of finding them by stat each pass."""
        self._monitor.follow(agents)

    def observations(self) -> dict[str, AgentObservation]:
        """The last saved pass (empty when no monitor has run)."""
        return self._observation_file.load()

    # -- handoff and kill ------------------------------------------------------------------

    def handoff(
        self, key: str, *, timeout: float | None = None, respawn: bool = True
    ) -> HandoffResult:
        """Ask the agent to save and exit, force it after ``timeout`` seconds, then re-spawn."""
        return self._handoffs.handoff(key, timeout=timeout, respawn=respawn)

    def kill(self, key: str, reason: str = "killed by the operator") -> AgentRecord:
        """Stop the agent (its worktree untouched, uncommitted files listed in the hook);
        a background session with ``claude stop`` (its conversation kept)."""
        if self.in_background(key):
            return self.background.stop(key)
        return self.sessions.kill(key, reason)

    # -- Claude Code's background sessions ---------------------------------------------------

    @property
    def background(self) -> Background:
        if self._background is None:
            self._background = Background(self.project, registry=self.registry)
        return self._background

    def in_background(self, key: str) -> bool:
        """The agent is a Claude Code background session (and has no tmux session)."""
        record = self.registry.get(key)
        return not record.error and not record.get("tmux_session") and is_background(record.fields)

    # -- for the console -------------------------------------------------------------------

    def pane_tail(self, key: str, lines: int = 40) -> str:
        """The agent's screen now, or the last screen saved when it stopped."""
        return screens.pane_tail(self.sessions, key, lines)

    def last_screen(self, agent_id: str) -> str:
        """What a stopped agent's pane showed last ("" if nothing was kept)."""
        return screens.last_screen(self.paths, agent_id)

    def switch_to(self, key: str) -> None:
        """Jump the operator's tmux client to the agent's session (the console's ``g``);
        the error says how to attach when the console is not inside that tmux server. A
        background session opens in a new window there (``claude attach``)."""
        if self.in_background(key):
            where = {k: v for k, v in os.environ.items() if k == "CLAUDE_CONFIG_DIR"}
            open_window(f"claude:{key}", self.background.attach_argv(key), self.root, where)
            return
        tmux, session = self.sessions.session_of(key)
        tmux.switch_client(session)

    def attach_command(self, key: str) -> list[str]:
        """``tmux [-L socket] attach-session -t =SESSION`` for the agent's session."""
        tmux, session = self.sessions.session_of(key)
        return tmux.attach_command(session)

    def problems(self, observations: dict[str, AgentObservation] | None = None) -> list[Problem]:
        """Crashed, stale, waiting and low-context agents, most urgent first.

        ``observations`` defaults to the last saved monitor pass; a console running the
        monitor itself passes its latest report's.
        """
        observations = self.observations() if observations is None else observations
        return find_problems(self.registry.list(), observations, self.settings)
