"""The monitor: one monitor at a time (under a lock) over every supervised agent.

A monitor loop holds the project's monitor lock for as long as it runs, so a second
loop (the console, ``runeconsole monitor``) never interleaves its passes with it: it
follows the saved passes or stops with the holder's pid. The lock is an OS lock, so
a killed monitor frees it at once.

Each pass refreshes ``last_seen`` of live agents, marks a vanished or failed one
``crashed`` exactly once (re-spawning it with ``auto_respawn``), and reads each live
pane for context left, compaction, prompts waiting for an answer, and the work phase.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from runeconsole.adapters.tmux import PaneInfo
from runeconsole.core.errors import RuneError, WriteFailed
from runeconsole.core.locks import LockBusy, owned
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.claude.settings import notifier_for
from runeconsole.services.claude.view import overlay
from runeconsole.services.fleet.model import FleetModel
from runeconsole.services.pane_patterns import read_pane
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervision.context_warnings import warn_about_context
from runeconsole.services.supervision.handoff import Handoffs
from runeconsole.services.supervision.observations import (
    EXITED,
    GONE,
    RUNNING,
    AgentObservation,
    MonitorReport,
    ObservationFile,
)
from runeconsole.services.supervision.phases import PhaseFollower
from runeconsole.services.supervision.screens import keep_screen
from runeconsole.services.supervision.sessions import AgentSessions
from runeconsole.services.supervision.spawning import Spawner

STARTING_GRACE = 10.0


class Monitor:
    def __init__(
        self,
        sessions: AgentSessions,
        spawner: Spawner,
        handoffs: Handoffs,
        observation_file: ObservationFile,
    ) -> None:
        self.sessions = sessions
        self.spawner = spawner
        self.handoffs = handoffs
        self.observation_file = observation_file
        self.phases = PhaseFollower(sessions.hooks)
        self._step_lock = threading.Lock()
        self._last_seen_screen: dict[str, AgentObservation] = {}
        self._settled: set[str] = set()
        # The agents a pass visits. By default its own fleet model, brought up to date by
        # stat each pass (only changed identity files are read); the console hands in its
        # model's, which its file events keep current (``follow``).
        self._fleet = FleetModel(sessions.registry, sessions.hooks, supervised=sessions.supervised)
        self._agents: Callable[[], list[AgentRecord]] = self._own_agents

    def _own_agents(self) -> list[AgentRecord]:
        self._fleet.rescan()
        return self._fleet.supervised()

    def follow(self, agents: Callable[[], list[AgentRecord]] | None) -> None:
        """Visit the records ``agents`` returns each pass (the supervised ones of a model
        kept current elsewhere), or, with None, its own model's again."""
        self._agents = agents or self._own_agents

    @property
    def owner_file(self) -> Path:
        """The running monitor's pid, for the message a second one gets."""
        return self.sessions.paths.supervisor / "monitor.json"

    def _hold(self) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """The monitor lock (``LockBusy`` naming the holder's pid when it is taken)."""
        return owned(
            self.sessions.paths.lock_for("monitor"),
            self.owner_file,
            "the monitor",
            started_at=iso_z(self.sessions.clock.now()),
            tmux_socket=self.sessions.settings.socket_name,
        )

    def step(self) -> MonitorReport:
        """One pass over every supervised agent; skipped while another monitor runs
        (``report.other_monitor`` is its pid when known)."""
        report = MonitorReport(observed_at=iso_z(self.sessions.clock.now()))
        try:
            with self._hold():
                return self._timed_pass(report)
        except LockBusy as busy:
            report.skipped, report.other_monitor = True, busy.holder
            return report

    def run(
        self,
        *,
        interval: float | None = None,
        stop: threading.Event | None = None,
        on_report: Callable[[MonitorReport], None] | None = None,
        follow: bool = True,
    ) -> None:
        """Monitor until ``stop`` is set, holding the monitor lock all along (the CLI's
        ``monitor`` and the console's worker).

        While another process's monitor runs, ``follow`` reports skipped passes (naming
        its pid) and takes over when it ends; without ``follow`` its ``LockBusy`` is
        raised at once.
        """
        interval = self.sessions.settings.monitor_interval if interval is None else interval
        stop = stop or threading.Event()
        while not stop.is_set():
            try:
                with self._hold():
                    self._loop(interval, stop, on_report)
                return
            except (LockBusy, WriteFailed) as exc:  # or its pid file not written: a full disk
                if not follow:
                    raise
                report = MonitorReport(observed_at=iso_z(self.sessions.clock.now()))
                if isinstance(exc, LockBusy):
                    report.skipped, report.other_monitor = True, exc.holder
                else:
                    report.errors.append(exc.message)
                if on_report is not None:
                    on_report(report)
                stop.wait(interval)

    def _loop(
        self,
        interval: float,
        stop: threading.Event,
        on_report: Callable[[MonitorReport], None] | None,
    ) -> None:
        while not stop.is_set():
            started = time.monotonic()
            report = MonitorReport(observed_at=iso_z(self.sessions.clock.now()))
            try:
                report = self._timed_pass(report)
            except RuneError as exc:
                report.errors.append(exc.message)
            if on_report is not None:
                on_report(report)
            stop.wait(max(0.0, interval - (time.monotonic() - started)))

    def _timed_pass(self, report: MonitorReport) -> MonitorReport:
        """A pass, one at a time within this process too (its caller holds the lock)."""
        started = time.monotonic()
        with self._step_lock:
            self._pass(report)
        report.seconds = time.monotonic() - started
        return report

    def _pass(self, report: MonitorReport) -> None:
        report.errors.extend(self.handoffs.take_errors())
        tmux = self.sessions.tmux
        supervised = [r for r in self._agents() if self.sessions.supervised(r)]
        # Nothing to look at: no tmux client is started (a fleet that heartbeats its own
        # files costs the monitor nothing each second).
        panes = tmux.panes() if supervised else {}
        alive: list[tuple[AgentRecord, PaneInfo]] = []
        for record in sorted(supervised, key=lambda r: r.key):
            session = str(record.get("tmux_session"))
            pane = panes.get(session)
            observation = AgentObservation(
                record.key, record.get("agent_id"), session, RUNNING, report.observed_at
            )
            report.observations[record.key] = observation
            if pane is not None and not pane.dead and self.sessions.pid_alive(record):
                observation.pid = pane.pid
                alive.append((record, pane))
                continue
            observation.state = GONE if pane is None else EXITED
            observation.exit_status = pane.exit_status if pane else None
            if self._starting(record) or self._handoff_pending(record):
                continue
            if self._settling(record, pane):
                continue
            self._record_end(record, pane, report)
        screens = tmux.capture_many(pane.pane_id for _, pane in alive)
        for record, pane in alive:
            self._touch(record, report)
            screen = screens.get(pane.pane_id)
            if screen is not None:
                self._read_screen(record, screen, report)
                self._type_pending(record, report)
        self.observation_file.save(report)

    def _starting(self, record: AgentRecord) -> bool:
        """Registered (``spawn`` writes the identity before it starts the session) but not yet
        given a pid."""
        created = parse_iso(record.get("created_at"))
        if record.get("pid") is not None or created is None:
            return False
        return (self.sessions.clock.now() - created).total_seconds() < STARTING_GRACE

    def _handoff_pending(self, record: AgentRecord) -> bool:
        """A handoff stops the agent itself; until it is overdue, its exit is no crash."""
        handoff = record.metadata.get("handoff")
        if not isinstance(handoff, dict) or handoff.get("state") != "requested":
            return False
        started = parse_iso(handoff.get("requested_at"))
        limit = float(handoff.get("timeout") or self.sessions.settings.handoff_timeout) + 30
        return started is not None and (self.sessions.clock.now() - started).total_seconds() < limit

    def _settling(self, record: AgentRecord, pane: PaneInfo | None) -> bool:
        """An exit tmux has not finished recording (process gone, pane not dead yet, or
        dead without a status): judge it on the next pass, once, so a clean exit is not
        taken for a crash."""
        agent_id = str(record.get("agent_id"))
        unsettled = pane is not None and (
            not pane.dead or (pane.exit_status is None and pane.exit_signal is None)
        )
        if unsettled and agent_id not in self._settled:
            self._settled.add(agent_id)
            return True
        return False

    def _record_end(
        self, record: AgentRecord, pane: PaneInfo | None, report: MonitorReport
    ) -> None:
        """A supervised agent stopped: terminated on exit 0, else crashed (each once).

        The change applies only to the identity seen here while it is still active
        (checked under its lock), so an agent killed or handed off on purpose meanwhile,
        or already replaced by a successor, is left as it is, and so is its session.
        """
        key = record.key
        registry = self.sessions.registry
        if pane is not None:
            keep_screen(self.sessions, record, pane)
        if pane is None:
            reason = f"tmux session {record.get('tmux_session')} is gone"
        elif pane.exit_signal is not None:
            reason = f"killed by signal {pane.exit_signal}"
        elif pane.dead:
            known = pane.exit_status is not None
            reason = f"exited with status {pane.exit_status}" if known else "exited"
        else:
            reason = f"process {record.get('pid')} is gone"
        agent_id = record.get("agent_id")
        clean = pane is not None and pane.dead and pane.exit_status == 0
        try:
            if clean:
                _, changed = registry.mark_terminated(key, reason, agent_id=agent_id)
            else:
                _, changed = registry.mark_crashed(key, reason, agent_id=agent_id)
        except RuneError as exc:
            report.errors.append(f"{key}: {exc.message}")
            return
        if not changed:
            return
        if pane is not None:  # the dead pane, cleared away
            self.sessions.tmux.kill_session(pane.session)
        if clean:
            report.terminated.append(key)
            return
        report.crashed.append(key)
        self._tell_operator(key, reason, report)
        self._maybe_auto_respawn(key, report)

    def _tell_operator(self, key: str, reason: str, report: MonitorReport) -> None:
        """``runeconsole.notify.command``, if set: a crash reaches the operator off-screen."""
        try:
            notifier_for(self.sessions.paths).notify(key, f"{key} crashed", reason)
        except (RuneError, OSError) as exc:
            report.errors.append(f"{key}: the notify command failed: {exc}")

    def _maybe_auto_respawn(self, key: str, report: MonitorReport) -> None:
        settings = self.sessions.settings
        if not settings.auto_respawn:
            return
        record = self.sessions.registry.get(key)
        if int(record.metadata.get("auto_respawns") or 0) >= settings.respawn_limit:
            report.errors.append(
                f"{key}: auto-respawn limit ({settings.respawn_limit}) reached; "
                f"re-spawn by hand with `runeconsole respawn {key}`"
            )
            return
        try:
            report.respawned.append(self.spawner.respawn(key, cause="auto"))
        except RuneError as exc:
            report.errors.append(f"{key}: auto-respawn failed: {exc.message}")

    def _touch(self, record: AgentRecord, report: MonitorReport) -> None:
        """Refresh ``last_seen``, but only every ``touch_every`` seconds (writes are not free)."""
        age = record.age_at(self.sessions.clock.now())
        if age is not None and age < self.sessions.settings.touch_every:
            return
        try:
            self.sessions.registry.heartbeat(record.key)
        except RuneError as exc:
            report.errors.append(f"{record.key}: {exc.message}")

    def _type_pending(self, record: AgentRecord, report: MonitorReport) -> None:
        """Text held back from this pane (a wisdom prompt, a checkpoint request) is typed
        on the first pass whose reading shows it safe."""
        try:
            self.sessions.type_pending(record, report.observations[record.key].screen)
        except RuneError as exc:
            report.errors.append(f"{record.key}: {exc.message}")

    def _read_screen(self, record: AgentRecord, screen: str, report: MonitorReport) -> None:
        reading = overlay(read_pane(screen), record.fields)  # hook-fed figures first
        observation = report.observations[record.key]
        previous = self._last_seen_screen.get(record.key)
        if reading.context_left is None and previous and previous.agent_id == observation.agent_id:
            # A prompt box hides the status line; the figure has not changed since.
            reading = replace(reading, context_left=previous.screen.context_left)
        self._last_seen_screen[record.key] = observation
        observation.screen = reading
        observation.urgency = self.sessions.settings.urgency(reading)
        warn_about_context(self.sessions, self.handoffs, record, observation, report)
        if reading.phase:
            self.phases.follow(record, reading, report)
