"""Toasts: the monitor's pass told in one toast, and the same toast not shown twice in a
row (a flapping agent, a retried action: repeats would stack up and hide the screen)."""

from __future__ import annotations

import threading
import time

from textual.notifications import SeverityLevel

from runeconsole.services.supervision.settings import URGENCY_WORDS
from runeconsole.services.supervisor import MonitorReport

REPEAT_SECONDS = 30.0  # the same toast again within this long is not shown


class RepeatFilter:
    """Remembers the toasts shown in the last ``REPEAT_SECONDS`` (safe from any thread)."""

    def __init__(self, seconds: float = REPEAT_SECONDS) -> None:
        self.seconds = seconds
        self._seen: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def fresh(self, title: str, message: str) -> bool:
        """True, and remembered, unless the same toast was shown moments ago."""
        now = time.monotonic()
        with self._lock:
            self._seen = {k: t for k, t in self._seen.items() if now - t < self.seconds}
            if (title, message) in self._seen:
                return False
            self._seen[(title, message)] = now
            return True


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
