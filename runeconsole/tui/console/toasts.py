"""The monitor's pass told in one toast (how many toasts show, and repeats: the consoles'
``support/toast_shelf.py``)."""

from __future__ import annotations

from textual.notifications import SeverityLevel

from runeconsole.services.supervision.service import MonitorReport
from runeconsole.services.supervision.settings import URGENCY_WORDS


def monitor_toast(report: MonitorReport) -> tuple[str, SeverityLevel] | None:
    """One toast a pass, however much happened: a busy fleet must not bury the screen."""
    lines = [f"{key} crashed" for key in report.crashed]
    for warning in report.warnings:
        left = "compacting" if warning.compacting else f"{warning.context_left}% context left"
        if warning.key in report.handoffs_started:
            advice = "handing it off"
        else:
            advice = URGENCY_WORDS.get(warning.urgency, warning.urgency)
        lines.append(f"{warning.key}: {left}, {advice}")
    lines += [f"{spawned.key} re-spawned" for spawned in report.respawned]
    lines += report.errors
    if not lines:
        return None
    severity: SeverityLevel = "information"
    if report.warnings or report.errors:
        severity = "warning"
    if report.crashed or any(w.urgency == "high" for w in report.warnings):
        severity = "error"
    return "\n".join(lines), severity
