"""Agents in tmux: spawn, watch, re-spawn and hand off (Epics 1, 2 and 4 of seed 004).

The supervisor is the runner of the PRD made programmatic. ``spawn`` writes the
identity and the initial hook, then starts the agent's command in its own tmux
session. ``monitor_step`` (one at a time, under a lock) looks at every supervised
session once: it refreshes ``last_seen`` of live agents, marks a vanished or
failed one ``crashed`` exactly once, and reads each pane for context left,
compaction, prompts waiting for an answer, and the work phase, which it writes
to the hook. ``respawn`` starts a successor with the same command and worktree
and a wisdom prompt built from the hook; ``handoff`` asks an agent that runs out
of context to save and exit, force-kills it if it does not, and re-spawns it.
The agent's worktree is never touched: uncommitted files are listed, not lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import Clock, SystemClock
from runeconsole.adapters.tmux import PANE_HEIGHT, PaneInfo, Tmux, process_alive
from runeconsole.core.config import Talisman
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import atomic_write_bytes, atomic_write_json, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import compact_stamp, format_age, iso_z, parse_iso
from runeconsole.core.validate import ID_PATTERN, validate_id
from runeconsole.services.hooks import Hook, Hooks, uncommitted_files
from runeconsole.services.pane_patterns import WORK_PHASES, PaneReading, read_pane
from runeconsole.services.registry import (
    ACTIVE,
    CRASHED,
    RED,
    SIGNAL_SOURCE,
    SIGNAL_TARGET,
    AgentRecord,
    LivenessSettings,
    Registry,
)
from runeconsole.services.signals import Signals

LOW, MEDIUM, HIGH = "low", "medium", "high"
URGENCY_RANK = {None: 0, LOW: 1, MEDIUM: 2, HIGH: 3}
HANDOFF_MESSAGE = "GUARDIAN: Save your work and exit cleanly"
CHECKPOINT_MESSAGE = (
    "GUARDIAN: Context is running low. Checkpoint now: commit what is ready and run "
    "`runeconsole hook update {key} --summary ... --instructions ...`"
)
SOCKET_ENV = "RUNECONSOLE_TMUX_SOCKET"
WISDOM_ENV = "RUNECONSOLE_WISDOM_FILE"
RUNNING, EXITED, GONE = "running", "exited", "gone"
HOOK_EXIT_GRACE = 5.0
KILL_GRACE = 2.0
POLL_SECONDS = 0.2
ID_WAIT_LIMIT = 1.5
RESPAWN_CAUSES = ("operator", "auto", "handoff")
STARTING_GRACE = 10.0


@dataclass(frozen=True)
class SupervisorSettings:
    """``runeconsole.tmux.socket_name`` and ``runeconsole.supervisor.*`` in talisman.yml."""

    socket_name: str | None = None
    monitor_interval: float = 1.0
    warn_at: float = 25.0
    checkpoint_at: float = 15.0
    handoff_at: float = 10.0
    handoff_timeout: float = 60.0
    auto_handoff: bool = False
    auto_respawn: bool = False
    respawn_limit: int = 3
    type_wisdom: bool = True
    touch_every: float = 30.0

    @classmethod
    def from_talisman(
        cls,
        talisman: Talisman,
        *,
        socket_name: str | None = None,
        environ: dict[str, str] | None = None,
    ) -> SupervisorSettings:
        """The socket comes from ``socket_name`` (``--tmux-socket``), else
        ``$RUNECONSOLE_TMUX_SOCKET``, else the talisman, else tmux's default server."""
        environ = dict(os.environ) if environ is None else environ
        section = talisman.section("runeconsole", "supervisor")
        configured = talisman.section("runeconsole", "tmux").text("socket_name", None)
        if configured and not ID_PATTERN.fullmatch(configured):
            talisman.report(
                f"{talisman.path}: runeconsole.tmux.socket_name is {configured!r}; "
                "allowed: letters, digits, '_' and '-'"
            )
            configured = None
        socket = socket_name or environ.get(SOCKET_ENV) or configured
        if socket:
            validate_id(socket, "tmux socket name")
        warn = section.number("context_warn_percent", 25, minimum=0, maximum=100)
        checkpoint = section.number("context_checkpoint_percent", 15, minimum=0, maximum=100)
        handoff = section.number("context_handoff_percent", 10, minimum=0, maximum=100)
        if not handoff <= checkpoint <= warn:
            talisman.report(
                f"{talisman.path}: runeconsole.supervisor context percentages must satisfy "
                f"handoff ({handoff:g}) <= checkpoint ({checkpoint:g}) <= warn ({warn:g})"
            )
            warn, checkpoint, handoff = 25.0, 15.0, 10.0
        liveness = LivenessSettings.from_talisman(talisman)
        return cls(
            socket_name=socket or None,
            monitor_interval=section.number("monitor_interval_seconds", 1.0, minimum=0.1),
            warn_at=warn,
            checkpoint_at=checkpoint,
            handoff_at=handoff,
            handoff_timeout=section.number("handoff_timeout_seconds", 60.0, minimum=0),
            auto_handoff=section.boolean("auto_handoff", False),
            auto_respawn=section.boolean("auto_respawn", False),
            respawn_limit=section.integer("respawn_limit", 3, minimum=0),
            type_wisdom=section.boolean("type_wisdom", True),
            touch_every=liveness.heartbeat_interval / 2,
        )

    def urgency(self, reading: PaneReading) -> str | None:
        """low at the warn mark, medium at the checkpoint mark, high at the handoff mark
        or whenever compaction is under way (PreCompact sighted)."""
        if reading.compacting:
            return HIGH
        left = reading.context_left
        if left is None:
            return None
        if left <= self.handoff_at:
            return HIGH
        if left <= self.checkpoint_at:
            return MEDIUM
        return LOW if left <= self.warn_at else None


@dataclass
class AgentObservation:
    """What the monitor saw of one agent on its last pass (a row of the Agents pane)."""

    key: str
    agent_id: str | None
    tmux_session: str | None
    state: str
    observed_at: str
    pid: int | None = None
    exit_status: int | None = None
    screen: PaneReading = field(default_factory=PaneReading)
    urgency: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentObservation:
        known = {name: data.get(name) for name in cls.__dataclass_fields__}
        screen = known.pop("screen")
        screen = screen if isinstance(screen, dict) else {}
        reading = PaneReading(
            **{n: screen[n] for n in PaneReading.__dataclass_fields__ if n in screen}
        )
        return cls(**known, screen=reading)


@dataclass(frozen=True)
class ContextWarning:
    key: str
    urgency: str
    context_left: int | None
    compacting: bool


@dataclass
class SpawnResult:
    record: AgentRecord
    hook: Hook
    tmux_session: str
    pid: int | None
    wisdom_file: Path | None = None
    wisdom: str | None = None

    @property
    def key(self) -> str:
        return self.record.key

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "agent_id": self.record.get("agent_id"),
            "predecessor_id": self.record.get("predecessor_id"),
            "tmux_session": self.tmux_session,
            "pid": self.pid,
            "hook_path": str(self.hook.path),
            "wisdom_file": str(self.wisdom_file) if self.wisdom_file else None,
            "wisdom": self.wisdom,
        }


@dataclass
class HandoffResult:
    key: str
    predecessor_id: str | None
    outcome: str  # "exited" | "hook_updated" | "forced"
    waited_seconds: float
    uncommitted: list[str]
    successor: SpawnResult | None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "predecessor_id": self.predecessor_id,
            "outcome": self.outcome,
            "waited_seconds": round(self.waited_seconds, 2),
            "uncommitted": self.uncommitted,
            "successor": self.successor.to_json() if self.successor else None,
        }


@dataclass
class MonitorReport:
    """One monitor pass: what was seen and what it changed."""

    observed_at: str
    observations: dict[str, AgentObservation] = field(default_factory=dict)
    crashed: list[str] = field(default_factory=list)
    terminated: list[str] = field(default_factory=list)
    respawned: list[SpawnResult] = field(default_factory=list)
    warnings: list[ContextWarning] = field(default_factory=list)
    phase_changes: dict[str, str] = field(default_factory=dict)
    handoffs_started: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: bool = False
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "observed_at": self.observed_at,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 4),
            "crashed": self.crashed,
            "terminated": self.terminated,
            "respawned": [spawn.to_json() for spawn in self.respawned],
            "warnings": [asdict(warning) for warning in self.warnings],
            "phase_changes": self.phase_changes,
            "handoffs_started": self.handoffs_started,
            "errors": self.errors,
            "agents": {key: obs.to_json() for key, obs in self.observations.items()},
        }


@dataclass(frozen=True)
class Problem:
    """An agent needing attention; ``rank`` orders the problems view (0 = most urgent)."""

    key: str
    kind: str  # crashed | stale | waiting | context
    rank: int
    detail: str


def build_wisdom(
    predecessor_id: str, hook: Hook | None, uncommitted: Sequence[str], worktree: Path
) -> str:
    """The successor's first prompt: the PRD sentence, then what the hook knows."""
    fields = hook.fields if hook and not hook.error else {}
    phase = fields.get("work_phase") or fields.get("phase") or "unknown"
    summary = " ".join(str(fields.get("work_summary") or "nothing recorded").split())
    lines = [
        f"You are a continuation of {predecessor_id}. "
        f"Resume from phase: {phase}, last working on: {summary}",
        "",
        "Resumption instructions:",
        str(fields.get("resumption_instructions") or "(none recorded)"),
        "",
        f"Uncommitted files in {worktree} (left exactly as they were; review, then commit):",
        *([f"- {name}" for name in uncommitted] or ["(none)"]),
    ]
    if hook is not None:
        context = ", ".join(
            f"{label} {fields[name]}"
            for name, label in (
                ("current_node", "node"),
                ("current_bead", "bead"),
                ("tests_status", "tests"),
            )
            if fields.get(name)
        )
        lines += ["", f"Hook: {hook.path}" + (f" ({context})" if context else "")]
    return "\n".join(lines) + "\n"


class Supervisor:
    def __init__(
        self,
        root: Path,
        clock: Clock | None = None,
        *,
        talisman: Talisman | None = None,
        settings: SupervisorSettings | None = None,
        tmux: Tmux | None = None,
        registry: Registry | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        """``talisman``: the console passes its lenient one, so a bad value never stops it."""
        self.root = root
        self.paths = ProjectPaths(root)
        self.clock = clock or SystemClock()
        talisman = talisman or Talisman.load(root)
        self.settings = settings or SupervisorSettings.from_talisman(talisman)
        self.tmux = tmux or Tmux(self.settings.socket_name)
        self.signals = Signals(root, self.clock)
        self.registry = registry or Registry(
            root, self.clock, LivenessSettings.from_talisman(talisman), self.signals
        )
        self.hooks = hooks or Hooks(root, self.clock, self.signals)
        self._step_lock = threading.Lock()
        self._handoffs: dict[str, threading.Thread] = {}
        self._applied_phase: dict[str, str] = {}
        self._last_saved: str | None = None
        self._last_seen_screen: dict[str, AgentObservation] = {}
        self._settled: set[str] = set()
        self._background_errors: list[str] = []

    # -- paths -----------------------------------------------------------------------------

    @property
    def observations_path(self) -> Path:
        return self.paths.supervisor / "observations.json"

    def _screen_path(self, agent_id: str) -> Path:
        return self.paths.supervisor / "screens" / f"{validate_id(agent_id, 'agent id')}.txt"

    def _signal(self, signal_type: str, payload: dict[str, Any]) -> None:
        self.signals.send(signal_type, SIGNAL_SOURCE, SIGNAL_TARGET, payload)

    # -- spawning --------------------------------------------------------------------------

    def spawn(
        self,
        role: str,
        name: str,
        command: Sequence[str],
        *,
        worktree: Path | None = None,
        node_id: str | None = None,
        bead_id: str | None = None,
    ) -> SpawnResult:
        """Identity, initial hook, then ``command`` (argument list) in session ``rune-{key}``."""
        key = f"{validate_id(role, 'role')}-{validate_id(name, 'name')}"
        if not command:
            raise InvalidInput("give the agent's command after --, e.g. -- claude")
        if self.registry.path_for(key).exists():
            current = self.registry.read_path(self.registry.path_for(key))
            if current.status == ACTIVE and self._running(current):
                raise RuneError(
                    f"{key} is already running in tmux session {current.get('tmux_session')}; "
                    f"kill it first (`runeconsole kill {key}`)"
                )
        return self._launch(
            role,
            name,
            list(command),
            worktree=self._checked_worktree(worktree or self.root),
            node_id=node_id,
            bead_id=bead_id,
            metadata={"respawns": 0, "auto_respawns": 0},
        )

    def respawn(self, key: str, *, cause: str = "operator") -> SpawnResult:
        """A successor for a crashed or finished agent: same command and worktree, new identity
        whose ``predecessor_id`` is the old ``agent_id``, wisdom prompt from the hook.

        ``cause`` is ``operator``, ``auto`` (counts against the auto-respawn limit) or
        ``handoff``.
        """
        validate_id(key, "agent key")
        if cause not in RESPAWN_CAUSES:
            raise InvalidInput(f"respawn cause {cause!r} is not one of {', '.join(RESPAWN_CAUSES)}")
        with locked(self.paths.lock_for(f"respawn-{key}"), what=f"respawn of {key}"):
            record = self.registry.get(key)
            if record.status == ACTIVE:
                if self._running(record):
                    raise RuneError(
                        f"{key} is still running; hand it off (`runeconsole handoff {key}`) "
                        f"or kill it (`runeconsole kill {key}`) first"
                    )
                record, _ = self.registry.mark_crashed(key, "found gone when re-spawning")
            metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
            command = metadata.get("command")
            if not (
                isinstance(command, list) and command and all(isinstance(c, str) for c in command)
            ):
                raise RuneError(
                    f"{key} has no recorded command to re-run; start it with "
                    f"`runeconsole spawn --role R --name N -- COMMAND`"
                )
            worktree = self._checked_worktree(Path(record.worktree or self.root))
            predecessor_id = validate_id(str(record.get("agent_id") or key), "agent id")
            hook = self.hooks.read(key)
            try:
                uncommitted = uncommitted_files(worktree)
            except RuneError:
                uncommitted = hook.files_modified if hook else []
            wisdom = build_wisdom(predecessor_id, hook, uncommitted, worktree)
            wisdom_file = self.paths.supervisor / "wisdom" / f"after-{predecessor_id}.md"
            atomic_write_bytes(wisdom_file, wisdom.encode("utf-8"))
            auto = int(metadata.get("auto_respawns") or 0)
            if cause == "auto":
                auto += 1
            elif cause == "operator":
                auto = 0  # a person stepped in: the crash-loop count starts again
            return self._launch(
                str(record.get("role")),
                str(record.get("name")),
                command,
                worktree=worktree,
                node_id=record.get("node_id"),
                bead_id=record.get("bead_id"),
                predecessor=record,
                hook=hook,
                wisdom=wisdom,
                wisdom_file=wisdom_file,
                metadata={
                    "respawns": int(metadata.get("respawns") or 0) + 1,
                    "auto_respawns": auto,
                    "respawn_cause": cause,
                },
            )

    def _launch(
        self,
        role: str,
        name: str,
        command: list[str],
        *,
        worktree: Path,
        node_id: str | None,
        bead_id: str | None,
        metadata: dict[str, Any],
        predecessor: AgentRecord | None = None,
        hook: Hook | None = None,
        wisdom: str | None = None,
        wisdom_file: Path | None = None,
    ) -> SpawnResult:
        key = f"{role}-{name}"
        session = f"rune-{key}"
        if predecessor is not None:
            self._after_second_of(str(predecessor.get("agent_id")))
        stale = self.tmux.pane(session)
        if stale is not None:
            if not stale.dead:
                raise RuneError(
                    f"tmux session {session} already exists and is running; "
                    f"stop it first (`{' '.join(self.tmux.attach_command(session))}` to look)"
                )
            self.tmux.kill_session(session)
        record = self.registry.register(
            role,
            name,
            worktree=str(worktree),
            tmux_session=session,
            node_id=node_id,
            bead_id=bead_id,
            predecessor_id=str(predecessor.get("agent_id")) if predecessor else None,
            metadata={**metadata, "command": command, "tmux_socket": self.settings.socket_name},
        )
        new_hook = self.hooks.create(
            role, name, node=node_id, bead=bead_id, worktree=worktree, predecessor=hook
        )
        env = {
            "RUNECONSOLE_ROOT": str(self.root),
            "RUNECONSOLE_AGENT_KEY": key,
            "RUNECONSOLE_AGENT_ID": str(record.get("agent_id")),
            "RUNECONSOLE_HOOK_FILE": str(new_hook.path),
        }
        if wisdom_file is not None:
            env[WISDOM_ENV] = str(wisdom_file)
        try:
            pane = self.tmux.new_session(session, command, cwd=worktree, env=env)
        except RuneError as exc:
            self.registry.mark_crashed(key, f"spawn failed: {exc}")
            raise
        record = self.registry.update(key, {"pid": pane.pid})
        if wisdom and wisdom_file and self.settings.type_wisdom:
            first = wisdom.splitlines()[0]
            self.tmux.send_text(pane.pane_id, f"{first} (full context: {wisdom_file})")
        return SpawnResult(record, new_hook, session, pane.pid, wisdom_file, wisdom)

    def _after_second_of(self, agent_id: str) -> None:
        """Agent ids end in a one-second stamp (the harness's format): a successor started
        within its predecessor's second would get the same id, so wait for the next one."""
        deadline = time.monotonic() + ID_WAIT_LIMIT
        while agent_id.endswith(compact_stamp(self.clock.now())) and time.monotonic() < deadline:
            time.sleep(0.02)

    def _checked_worktree(self, worktree: Path) -> Path:
        path = worktree.expanduser()
        if not path.is_absolute():
            path = self.root / path
        if not path.is_dir():
            raise InvalidInput(f"worktree {worktree} is not a directory")
        return path.resolve()

    # -- liveness --------------------------------------------------------------------------

    def supervised(self, record: AgentRecord) -> bool:
        """Active identities with a tmux session on our server (or no server recorded)."""
        if record.error or record.status != ACTIVE or not record.get("tmux_session"):
            return False
        metadata = record.get("metadata")
        if isinstance(metadata, dict) and "tmux_socket" in metadata:
            return metadata["tmux_socket"] == self.settings.socket_name
        return True

    def _running(self, record: AgentRecord, pane: PaneInfo | None = None) -> bool:
        pane = pane or self.tmux.pane(str(record.get("tmux_session") or ""))
        return pane is not None and not pane.dead and self._pid_alive(record)

    @staticmethod
    def _pid_alive(record: AgentRecord) -> bool:
        pid = record.get("pid")
        return not isinstance(pid, int) or process_alive(pid)

    def _starting(self, record: AgentRecord) -> bool:
        """Registered (R1.3: before its session) but not yet given a pid by ``spawn``."""
        created = parse_iso(record.get("created_at"))
        if record.get("pid") is not None or created is None:
            return False
        return (self.clock.now() - created).total_seconds() < STARTING_GRACE

    def _handoff_pending(self, record: AgentRecord) -> bool:
        metadata = record.get("metadata")
        handoff = metadata.get("handoff") if isinstance(metadata, dict) else None
        if not isinstance(handoff, dict) or handoff.get("state") != "requested":
            return False
        started = parse_iso(handoff.get("requested_at"))
        limit = float(handoff.get("timeout") or self.settings.handoff_timeout) + 30
        return started is not None and (self.clock.now() - started).total_seconds() < limit

    # -- the monitor -----------------------------------------------------------------------

    def monitor_step(self) -> MonitorReport:
        """One pass over every supervised agent; skipped if another pass runs anywhere."""
        started = time.monotonic()
        report = MonitorReport(observed_at=iso_z(self.clock.now()))
        if not self._step_lock.acquire(blocking=False):
            report.skipped = True
            return report
        try:
            with contextlib.ExitStack() as held:
                try:
                    held.enter_context(
                        locked(self.paths.lock_for("monitor"), timeout=0, what="the monitor")
                    )
                except RuneError:  # another process's monitor is mid-pass
                    report.skipped = True
                    return report
                self._step(report)
        finally:
            self._step_lock.release()
        report.seconds = time.monotonic() - started
        return report

    def _step(self, report: MonitorReport) -> None:
        while self._background_errors:
            report.errors.append(self._background_errors.pop(0))
        panes = self.tmux.panes()
        alive: list[tuple[AgentRecord, PaneInfo]] = []
        for record in self.registry.list():
            if not self.supervised(record):
                continue
            session = str(record.get("tmux_session"))
            pane = panes.get(session)
            observation = AgentObservation(
                record.key, record.get("agent_id"), session, RUNNING, report.observed_at
            )
            report.observations[record.key] = observation
            if pane is not None and not pane.dead and self._pid_alive(record):
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
        screens = self.tmux.capture_many(pane.pane_id for _, pane in alive)
        for record, pane in alive:
            self._touch(record, report)
            screen = screens.get(pane.pane_id)
            if screen is not None:
                self._read_screen(record, screen, report)
        self._save(report)

    def _keep_screen(self, record: AgentRecord, pane: PaneInfo) -> None:
        """Save the last screen of an agent about to disappear, for its post-mortem."""
        with contextlib.suppress(RuneError, OSError):
            screen = self._screen(pane.pane_id)
            atomic_write_bytes(self._screen_path(str(record.get("agent_id"))), screen.encode())

    def last_screen(self, agent_id: str) -> str:
        """What a stopped agent's pane showed last ("" if nothing was kept)."""
        try:
            return self._screen_path(agent_id).read_text(encoding="utf-8")
        except OSError:
            return ""

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
        """A supervised agent stopped: terminated on exit 0, else crashed (each once)."""
        key = record.key
        if pane is not None:
            self._keep_screen(record, pane)
            self.tmux.kill_session(pane.session)
        if pane is None:
            reason = f"tmux session {record.get('tmux_session')} is gone"
        elif pane.exit_signal is not None:
            reason = f"killed by signal {pane.exit_signal}"
        elif pane.dead:
            known = pane.exit_status is not None
            reason = f"exited with status {pane.exit_status}" if known else "exited"
        else:
            reason = f"process {record.get('pid')} is gone"
        try:
            if pane is not None and pane.dead and pane.exit_status == 0:
                _, changed = self.registry.mark_terminated(key, reason)
                if changed:
                    report.terminated.append(key)
                return
            _, changed = self.registry.mark_crashed(key, reason)
        except RuneError as exc:
            report.errors.append(f"{key}: {exc.message}")
            return
        if changed:
            report.crashed.append(key)
            self._maybe_auto_respawn(key, report)

    def _maybe_auto_respawn(self, key: str, report: MonitorReport) -> None:
        if not self.settings.auto_respawn:
            return
        record = self.registry.get(key)
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        if int(metadata.get("auto_respawns") or 0) >= self.settings.respawn_limit:
            report.errors.append(
                f"{key}: auto-respawn limit ({self.settings.respawn_limit}) reached; "
                f"re-spawn by hand with `runeconsole respawn {key}`"
            )
            return
        try:
            report.respawned.append(self.respawn(key, cause="auto"))
        except RuneError as exc:
            report.errors.append(f"{key}: auto-respawn failed: {exc.message}")

    def _touch(self, record: AgentRecord, report: MonitorReport) -> None:
        """Refresh ``last_seen``, but only every ``touch_every`` seconds (writes are not free)."""
        if record.age_seconds is not None and record.age_seconds < self.settings.touch_every:
            return
        try:
            self.registry.heartbeat(record.key)
        except RuneError as exc:
            report.errors.append(f"{record.key}: {exc.message}")

    def _read_screen(self, record: AgentRecord, screen: str, report: MonitorReport) -> None:
        reading = read_pane(screen)
        observation = report.observations[record.key]
        previous = self._last_seen_screen.get(record.key)
        if reading.context_left is None and previous and previous.agent_id == observation.agent_id:
            # A prompt box hides the status line; the figure has not changed since.
            reading = replace(reading, context_left=previous.screen.context_left)
        self._last_seen_screen[record.key] = observation
        observation.screen = reading
        observation.urgency = self.settings.urgency(reading)
        self._warn(record, observation, report)
        if reading.phase:
            self._follow_phase(record, reading, report)

    def _warn(self, record: AgentRecord, obs: AgentObservation, report: MonitorReport) -> None:
        """CONTEXT_WARNING once per level per identity; the level resets when context recovers."""
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        raised = metadata.get("context_warning")
        if obs.urgency is None:
            if raised and (obs.screen.context_left or 0) > self.settings.warn_at:
                self.registry.update_metadata(record.key, {"context_warning": None})
            return
        if URGENCY_RANK[obs.urgency] <= URGENCY_RANK.get(raised, 0):
            return
        self.registry.update_metadata(record.key, {"context_warning": obs.urgency})
        warning = ContextWarning(
            record.key, obs.urgency, obs.screen.context_left, obs.screen.compacting
        )
        self._signal("CONTEXT_WARNING", {**asdict(warning), "agent_id": record.get("agent_id")})
        report.warnings.append(warning)
        if not self.settings.auto_handoff:
            return
        if obs.urgency == HIGH:
            self.start_handoff(record.key)
            report.handoffs_started.append(record.key)
        elif obs.urgency == MEDIUM:  # R4.3: checkpoint now, so a handoff loses nothing
            message = CHECKPOINT_MESSAGE.format(key=record.key)
            with contextlib.suppress(RuneError):
                self.tmux.send_text(f"={record.get('tmux_session')}:", message)
                self._signal("GUIDANCE", {"key": record.key, "message": message})

    def _follow_phase(
        self, record: AgentRecord, reading: PaneReading, report: MonitorReport
    ) -> None:
        """R2.3: a phase transition seen on screen goes into the hook's ``work_phase``.

        Screen hints only move the phase forward (a ``Read`` while implementing is
        not a return to investigation); an explicit ``Phase: X`` line may go anywhere.
        """
        agent_id = str(record.get("agent_id"))
        phase = str(reading.phase)
        if self._applied_phase.get(agent_id) == phase:
            return
        hook = self.hooks.read(record.key)
        current = hook.work_phase if hook and not hook.error else None
        self._applied_phase[agent_id] = phase
        if current == phase:
            return
        if (
            not reading.phase_explicit
            and current in WORK_PHASES
            and WORK_PHASES.index(phase) < WORK_PHASES.index(current)
        ):
            self._applied_phase[agent_id] = current
            return
        worktree = Path(record.worktree) if record.worktree else None
        try:
            self.hooks.update(
                record.key,
                work_phase=phase,
                worktree=worktree if worktree and worktree.is_dir() else None,
            )
        except RuneError as exc:
            report.errors.append(f"{record.key}: hook not updated: {exc.message}")
            return
        report.phase_changes[record.key] = phase

    def _save(self, report: MonitorReport) -> None:
        """Latest observations for a console that is not running the monitor itself."""
        agents = {key: obs.to_json() for key, obs in report.observations.items()}
        comparable = json.dumps(
            {k: {**v, "observed_at": None} for k, v in agents.items()}, sort_keys=True
        )
        if comparable == self._last_saved:
            return
        atomic_write_json(
            self.observations_path,
            {"observed_at": report.observed_at, "monitor_pid": os.getpid(), "agents": agents},
        )
        self._last_saved = comparable

    def run_monitor(
        self,
        *,
        interval: float | None = None,
        stop: threading.Event | None = None,
        on_report: Callable[[MonitorReport], None] | None = None,
    ) -> None:
        """Monitor until ``stop`` is set (the CLI's ``monitor`` and the console's worker)."""
        interval = self.settings.monitor_interval if interval is None else interval
        stop = stop or threading.Event()
        while not stop.is_set():
            started = time.monotonic()
            try:
                report = self.monitor_step()
            except RuneError as exc:
                report = MonitorReport(observed_at=iso_z(self.clock.now()), errors=[exc.message])
            if on_report is not None:
                on_report(report)
            stop.wait(max(0.0, interval - (time.monotonic() - started)))

    def observations(self) -> dict[str, AgentObservation]:
        """The last saved pass (empty when no monitor has run)."""
        try:
            data = read_json_object(self.observations_path)
        except UnreadableFile:
            return {}
        agents = data.get("agents")
        if not isinstance(agents, dict):
            return {}
        return {
            key: AgentObservation.from_json(value)
            for key, value in agents.items()
            if isinstance(value, dict)
        }

    # -- handoff and kill ------------------------------------------------------------------

    def start_handoff(self, key: str, **options: Any) -> threading.Thread:
        """``handoff`` in a background thread (at most one per agent), for the monitor loop."""
        running = self._handoffs.get(key)
        if running is not None and running.is_alive():
            return running

        def work() -> None:
            try:
                self.handoff(key, **options)
            except RuneError as exc:  # reported with the next monitor pass
                self._background_errors.append(f"{key}: handoff failed: {exc.message}")

        thread = threading.Thread(target=work, name=f"handoff-{key}", daemon=True)
        self._handoffs[key] = thread
        thread.start()
        return thread

    def handoff(
        self, key: str, *, timeout: float | None = None, respawn: bool = True
    ) -> HandoffResult:
        """R4.4/R4.5: ask the agent to save and exit, wait for its hook update or exit up to
        ``timeout`` seconds, force-kill it if it hangs (``ORCHESTRATOR_STUCK``), re-spawn."""
        timeout = self.settings.handoff_timeout if timeout is None else timeout
        record = self.registry.get(key)
        session = str(record.get("tmux_session") or "")
        pane = self.tmux.pane(session) if session else None
        if record.status != ACTIVE or pane is None or not self._running(record, pane):
            raise RuneError(
                f"{key} is not running ({record.status}); use `runeconsole respawn {key}`"
            )
        agent_id = record.get("agent_id")
        worktree = Path(record.worktree) if record.worktree else None
        worktree = worktree if worktree and worktree.is_dir() else None
        self.registry.update_metadata(
            key,
            {
                "handoff": {
                    "state": "requested",
                    "requested_at": iso_z(self.clock.now()),
                    "timeout": timeout,
                }
            },
        )
        hook = self.hooks.update(key, worktree=worktree)
        marker = self._hook_marker(key)
        self._signal(
            "HANDOFF_REQUESTED",
            {
                "key": key,
                "agent_id": agent_id,
                "timeout": timeout,
                "uncommitted": hook.files_modified,
            },
        )
        self.tmux.send_text(pane.pane_id, HANDOFF_MESSAGE)
        outcome, waited = self._await_exit(record, marker, timeout)
        if outcome == "forced":
            self._signal(
                "ORCHESTRATOR_STUCK",
                {"key": key, "agent_id": agent_id, "waited_seconds": round(waited, 1)},
            )
        self._keep_screen(record, pane)
        self._stop(session, record.get("pid"), grace=KILL_GRACE if outcome != "forced" else 0.2)
        hook = self.hooks.update(key, worktree=worktree)
        self.registry.update_metadata(
            key, {"handoff": {"state": outcome, "finished_at": iso_z(self.clock.now())}}
        )
        self.registry.mark_terminated(key, f"handoff ({outcome})")
        successor = self.respawn(key, cause="handoff") if respawn else None
        self._signal(
            "HANDOFF_COMPLETE",
            {
                "key": key,
                "predecessor_id": agent_id,
                "successor_id": successor.record.get("agent_id") if successor else None,
                "outcome": outcome,
                "uncommitted": hook.files_modified,
            },
        )
        return HandoffResult(key, agent_id, outcome, waited, hook.files_modified, successor)

    def _hook_marker(self, key: str) -> tuple[int, int] | None:
        """Changes whenever the hook file is replaced (atomic writes make a new inode)."""
        try:
            stat = self.hooks.path_for(key).stat()
        except OSError:
            return None
        return (stat.st_ino, stat.st_mtime_ns)

    def _await_exit(
        self, record: AgentRecord, marker: tuple[int, int] | None, timeout: float
    ) -> tuple[str, float]:
        started = time.monotonic()
        deadline = started + timeout
        outcome = "forced"
        while time.monotonic() < deadline:
            if not self._running(record):
                return "exited", time.monotonic() - started
            if outcome == "forced" and self._hook_marker(record.key) != marker:
                outcome = "hook_updated"
                deadline = min(deadline, time.monotonic() + HOOK_EXIT_GRACE)
            time.sleep(POLL_SECONDS)
        return outcome, time.monotonic() - started

    def _stop(self, session: str, pid: object, grace: float = KILL_GRACE) -> None:
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

    def kill(self, key: str, reason: str = "killed by the operator") -> AgentRecord:
        """Stop the agent (its worktree untouched, uncommitted files listed in the hook)."""
        record = self.registry.get(key)
        session = record.get("tmux_session")
        if session:
            self._stop(str(session), record.get("pid"))
        worktree = Path(record.worktree) if record.worktree else None
        if self.hooks.read(key) is not None and worktree and worktree.is_dir():
            self.hooks.update(key, worktree=worktree)
        if record.status == ACTIVE:
            record, _ = self.registry.mark_terminated(key, reason)
        return record

    # -- for the console -------------------------------------------------------------------

    def pane_tail(self, key: str, lines: int = 40) -> str:
        """The agent's screen now, or the last screen saved when it stopped."""
        record = self.registry.get(key)
        pane = self.tmux.pane(str(record.get("tmux_session") or ""))
        if pane is not None:
            screen = self._screen(pane.pane_id)
        else:
            screen = self.last_screen(str(record.get("agent_id")))
        return "\n".join(screen.rstrip("\n").splitlines()[-lines:])

    def _screen(self, pane_id: str) -> str:
        """Screen plus one screenful of history, blank runs squeezed (a dead pane's notice
        scrolls its last output off the visible screen)."""
        return re.sub(r"\n{3,}", "\n\n", self.tmux.capture(pane_id, lines=PANE_HEIGHT))

    def switch_to(self, key: str) -> None:
        """Jump the operator's tmux client to the agent's session (the console's ``g``);
        the error says how to attach when the console is not inside that tmux server."""
        self.tmux.switch_client(self._session_of(key))

    def attach_command(self, key: str) -> list[str]:
        """``tmux [-L socket] attach-session -t =SESSION`` for the agent's session."""
        return self.tmux.attach_command(self._session_of(key))

    def _session_of(self, key: str) -> str:
        session = self.registry.get(key).get("tmux_session")
        if not session:
            raise RuneError(f"{key} has no tmux session recorded")
        return str(session)

    def problems(self, observations: dict[str, AgentObservation] | None = None) -> list[Problem]:
        """Crashed, stale, waiting and low-context agents, most urgent first.

        ``observations`` defaults to the last saved monitor pass; a console running the
        monitor itself passes its latest report's.
        """
        observations = self.observations() if observations is None else observations
        problems: list[Problem] = []
        for record in self.registry.list():
            if record.error:
                problems.append(Problem(record.key, "unreadable", 1, record.error))
                continue
            if record.status == CRASHED:
                metadata = record.get("metadata")
                reason = metadata.get("crashed_reason") if isinstance(metadata, dict) else None
                problems.append(Problem(record.key, "crashed", 0, str(reason or "crashed")))
                continue
            if record.status != ACTIVE:
                continue
            if record.liveness == RED:
                age = format_age(record.age_seconds)
                problems.append(Problem(record.key, "stale", 1, f"no heartbeat for {age}"))
            obs = observations.get(record.key)
            if obs is None or obs.agent_id != record.get("agent_id"):
                continue
            screen = obs.screen
            if screen.waiting_for_input:
                detail = f"{screen.waiting_for_input}: {screen.prompt or ''}".strip(": ")
                problems.append(Problem(record.key, "waiting", 2, detail))
            if obs.urgency:
                left = "compacting" if screen.compacting else f"{screen.context_left}% context left"
                rank = 1 if obs.urgency == HIGH else 3
                problems.append(Problem(record.key, "context", rank, f"{obs.urgency}: {left}"))
        return sorted(problems, key=lambda problem: (problem.rank, problem.key))
