"""The work phase seen on an agent's screen goes into its hook's ``work_phase``."""

from __future__ import annotations

from runeconsole.core.errors import RuneError
from runeconsole.services.hook_files import MONITOR, HookFiles
from runeconsole.services.pane_patterns import WORK_PHASES, PaneReading
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervision.observations import MonitorReport
from runeconsole.services.supervision.sessions import existing_worktree


class PhaseFollower:
    """Remembers the phase applied per identity, so an unchanged screen reads no hook."""

    def __init__(self, hook_files: HookFiles) -> None:
        self.hook_files = hook_files
        self._applied: dict[str, str] = {}

    def follow(self, record: AgentRecord, reading: PaneReading, report: MonitorReport) -> None:
        """Screen hints only move the phase forward (a ``Read`` while implementing is
        not a return to investigation); an explicit ``Phase: X`` line may go anywhere."""
        agent_id = str(record.get("agent_id"))
        phase = str(reading.phase)
        if self._applied.get(agent_id) == phase:
            return
        hook = self.hook_files.read(record.key)
        current = hook.work_phase if hook and not hook.error else None
        self._applied[agent_id] = phase
        if current == phase:
            return
        if (
            not reading.phase_explicit
            and current in WORK_PHASES
            and WORK_PHASES.index(phase) < WORK_PHASES.index(current)
        ):
            self._applied[agent_id] = current
            return
        try:
            self.hook_files.update(
                record.key,
                work_phase=phase,
                worktree=existing_worktree(record, self.hook_files.paths.root),
                writer=MONITOR,
            )
        except RuneError as exc:
            report.errors.append(f"{record.key}: hook not updated: {exc.message}")
            return
        report.phase_changes[record.key] = phase
