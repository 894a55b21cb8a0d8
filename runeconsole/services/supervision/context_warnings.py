"""Low context seen on an agent's screen: warn once per level, and with ``auto_handoff``
ask for a checkpoint (medium, typed once no prompt is on screen) or hand the agent off
(high)."""

from __future__ import annotations

import contextlib
from dataclasses import asdict

from runeconsole.core.errors import RuneError
from runeconsole.services.registry import AgentRecord
from runeconsole.services.supervision.handoff import Handoffs
from runeconsole.services.supervision.observations import (
    AgentObservation,
    ContextWarning,
    MonitorReport,
)
from runeconsole.services.supervision.sessions import AgentSessions
from runeconsole.services.supervision.settings import HIGH, MEDIUM, URGENCY_RANK

CHECKPOINT_MESSAGE = (
    "GUARDIAN: Context is running low. Checkpoint now: commit what is ready and run "
    "`runeconsole hook update {key} --summary ... --instructions ...`"
)


def warn_about_context(
    sessions: AgentSessions,
    handoffs: Handoffs,
    record: AgentRecord,
    obs: AgentObservation,
    report: MonitorReport,
) -> None:
    """CONTEXT_WARNING once per level per identity; the level resets when context recovers."""
    raised = record.metadata.get("context_warning")
    if obs.urgency is None:
        if raised and (obs.screen.context_left or 0) > sessions.settings.warn_at:
            sessions.registry.update_metadata(record.key, {"context_warning": None})
        return
    if URGENCY_RANK[obs.urgency] <= URGENCY_RANK.get(raised, 0):
        return
    sessions.registry.update_metadata(record.key, {"context_warning": obs.urgency})
    warning = ContextWarning(
        record.key, obs.urgency, obs.screen.context_left, obs.screen.compacting
    )
    sessions.signal("CONTEXT_WARNING", {**asdict(warning), "agent_id": record.get("agent_id")})
    report.warnings.append(warning)
    if not sessions.settings.auto_handoff:
        return
    if obs.urgency == HIGH:
        handoffs.start(record.key)
        report.handoffs_started.append(record.key)
    elif obs.urgency == MEDIUM:  # checkpoint now, so a later handoff loses nothing
        # Never into a prompt (Enter there could accept "Yes"): it waits for a later pass.
        message = CHECKPOINT_MESSAGE.format(key=record.key)
        with contextlib.suppress(RuneError):
            sessions.type_or_queue(record, message, obs.screen, signal_type="GUIDANCE")
