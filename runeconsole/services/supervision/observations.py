"""What a monitor pass saw and changed, and the saved copy of the latest pass that a
console not running the monitor itself reads."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.pane_observation import EXITED, GONE, RUNNING, AgentObservation

__all__ = [  # the observation itself lives in services/observation.py, below the monitor
    "EXITED",
    "GONE",
    "RUNNING",
    "AgentObservation",
    "ContextWarning",
    "MonitorReport",
    "ObservationFile",
]

if TYPE_CHECKING:  # not at run time: spawning brings tmux, and `agents --json` reads this
    from runeconsole.services.supervision.spawning import SpawnResult


@dataclass(frozen=True)
class ContextWarning:
    key: str
    urgency: str
    context_left: int | None
    compacting: bool


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
    other_monitor: int | None = None  # the pid of the monitor that ran instead
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "observed_at": self.observed_at,
            "skipped": self.skipped,
            "other_monitor": self.other_monitor,
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


class ObservationFile:
    """``observations.json``: rewritten only when what was seen changed, not every pass."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last_saved: str | None = None

    @classmethod
    def of(cls, paths: ProjectPaths) -> ObservationFile:
        """The project's saved pass (``.claude/state/supervisor/observations.json``)."""
        return cls(paths.inside(paths.supervisor / "observations.json"))

    def save(self, report: MonitorReport) -> None:
        agents = {key: obs.to_json() for key, obs in report.observations.items()}
        comparable = json.dumps(
            {k: {**v, "observed_at": None} for k, v in agents.items()}, sort_keys=True
        )
        if comparable == self._last_saved:
            return
        atomic_write_json(
            self.path,
            {"observed_at": report.observed_at, "monitor_pid": os.getpid(), "agents": agents},
        )
        self._last_saved = comparable

    def load(self) -> dict[str, AgentObservation]:
        """The last saved pass (empty when no monitor has run)."""
        try:
            data = read_json_object(self.path)
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
