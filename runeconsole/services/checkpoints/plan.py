"""What resuming a checkpoint does (or did): the plan every step adds to, and how its
phases read (for the CLI's listing and the console's detail)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runeconsole.adapters.tasks import TaskWrite
from runeconsole.services.checkpoints.artifacts import DIRECTORY, MISSING
from runeconsole.services.checkpoints.schema import (
    FORBIDDEN_PHASE_KEYS,
    PHASE_ORDER,
    RETIRED_PHASES,
)
from runeconsole.services.checkpoints.session import SessionPid


@dataclass
class PhaseView:
    name: str
    status: str
    number: int | None  # its place in PHASE_ORDER; ``None`` for a phase the order lacks
    demoted: bool = False
    tracked: bool = True

    @property
    def known(self) -> bool:
        """In this runeconsole's PHASE_ORDER (a newer plugin may record phases it lacks)."""
        return self.number is not None

    @property
    def retired(self) -> bool:
        """A phase the plugin no longer runs, kept by old checkpoints."""
        return self.name in RETIRED_PHASES


@dataclass
class ResumePlan:
    """What resuming a checkpoint does (or did): every change, warning and the next phase."""

    path: Path
    checkpoint_id: str = ""
    from_version: int | None = None
    checkpoint: dict[str, Any] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    demoted: list[str] = field(default_factory=list)
    resume_from: str | None = None
    injections: dict[str, str] = field(default_factory=dict)
    task_writes: list[TaskWrite] = field(default_factory=list)
    removed_teams: set[str] = field(default_factory=set)
    fresh_start: str | None = None
    blocked: str | None = None
    newer: bool = False  # written by a newer tool: shown as it is, never rewritten
    active_pid: int | None = None
    written: bool = False
    session: SessionPid | None = None  # who a resume claims it for, and how that was found

    @property
    def action(self) -> str:
        """``resume``, ``complete``, ``active`` (a live session owns it), ``newer`` (a schema
        newer than this runeconsole: read-only), ``blocked`` or ``fresh_start``."""
        if self.fresh_start:
            return "fresh_start"
        if self.newer:
            return "newer"
        if self.active_pid is not None:
            return "active"
        if self.blocked:
            return "blocked"
        return "resume" if self.resume_from else "complete"

    @property
    def message(self) -> str:
        if self.fresh_start:
            return (
                f"checkpoint {self.path} is corrupt ({self.fresh_start}); falling back to a "
                "fresh start: run the arc again without --resume"
            )
        if self.blocked:
            return self.blocked
        if self.resume_from is None:
            return f"{self.checkpoint_id}: every phase is finished; nothing to resume"
        return f"{self.checkpoint_id}: resume from phase {self.resume_from}"

    def phases(self) -> list[PhaseView]:
        """PHASE_ORDER first (untracked ones marked), then every other phase the checkpoint
        records, in its order: none is hidden."""
        phases = self.checkpoint.get("phases")
        phases = phases if isinstance(phases, dict) else {}
        views = []
        for number, name in enumerate(PHASE_ORDER, 1):
            status = _shown_status(phases.get(name)) if name in phases else "absent"
            views.append(PhaseView(name, status, number, name in self.demoted, name in phases))
        for name, data in phases.items():
            if name not in PHASE_ORDER and name not in FORBIDDEN_PHASE_KEYS:
                views.append(PhaseView(name, _shown_status(data), None, name in self.demoted))
        return views

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "id": self.checkpoint_id,
            "plan_file": self.checkpoint.get("plan_file"),
            "action": self.action,
            "message": self.message,
            "from_version": self.from_version,
            "schema_version": self.checkpoint.get("schema_version"),
            "resume_from": self.resume_from,
            "changes": self.changes,
            "warnings": self.warnings,
            "demoted": self.demoted,
            "phases": [
                {
                    "name": v.name,
                    "status": v.status,
                    "demoted": v.demoted,
                    "tracked": v.tracked,
                    "known": v.known,
                    "retired": v.retired,
                }
                for v in self.phases()
            ],
            "injections": self.injections,
            "task_updates": [task.to_json() for task in self.task_writes],
            "written": self.written,
            "session_pid": self.session.pid if self.session else None,
            "session_pid_found_by": self.session.found_by if self.session else None,
        }


@dataclass
class Claim:
    """What claiming ownership changes and warns about (``ownership.claim``)."""

    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def demotion_warning(
    name: str, artifact: str, expected: str, found: str | None, instead: str = MISSING
) -> str:
    """The hash-mismatch warning, word for word as the Rune plugin prints it (``instead``:
    what is there when there is no file to hash)."""
    number = PHASE_ORDER.index(name) + 1 if name in PHASE_ORDER else name
    label = os.path.basename(artifact)
    found_line = f"sha256:{found}" if found else f"({instead})"
    verbs = {MISSING: "is missing", DIRECTORY: "is a directory, not a file"}
    verb = "has been modified since checkpoint" if found else verbs.get(instead, f"is {instead}")
    return (
        f"WARNING: Artifact for Phase {number} ({label}) {verb}.\n"
        f"Hash expected: sha256:{expected}\n"
        f"Hash found: {found_line}\n"
        f'Demoting Phase {number} to "pending" — will re-run {name.replace("_", " ")}.'
    )


def _shown_status(data: Any) -> str:
    status = data.get("status") if isinstance(data, dict) else None
    return status if isinstance(status, str) else "?"
