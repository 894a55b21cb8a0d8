"""The console's own housekeeping: the daily prune (off the UI thread), and saying so when
the root is read-only.

A minute after the console opens, and every hour after that, a worker asks whether a
prune is due (``runeconsole.retention.every_hours`` since the last one, by whoever ran
it: this console, another, ``runeconsole prune`` from cron) and runs it. What it moved is
said once, quietly; a prune another process is running is left to it; a failure (a full
disk) is a warning, and the next hour tries again.
"""

from __future__ import annotations

from textual.app import App

from runeconsole.core.errors import RuneError
from runeconsole.services.project import Project
from runeconsole.services.retention import Retention

PRUNE_FIRST_SECONDS = 60.0
PRUNE_CHECK_SECONDS = 3600.0


class Upkeep:
    def __init__(self, app: App[object], project: Project) -> None:
        self.app = app
        self.project = project
        self.last_report: str | None = None

    def start(self) -> None:
        self.app.set_timer(PRUNE_FIRST_SECONDS, self.check)
        self.app.set_interval(PRUNE_CHECK_SECONDS, self.check)

    def check(self) -> None:
        self.app.run_worker(
            self.prune_if_due, thread=True, group="prune", exclusive=True, exit_on_error=False
        )

    def prune_if_due(self) -> None:
        try:
            retention = Retention(self.project)
            if not retention.due():
                return
            report = retention.prune()
        except (RuneError, OSError) as exc:
            message = exc.message if isinstance(exc, RuneError) else f"{exc.strerror or exc}"
            if "another prune is running" not in message:
                self._say(f"not pruned: {message}", "warning")
            return
        self.last_report = report.summary()
        if report.changed:
            self._say(report.summary(), "information")

    def say_read_only(self, reason: str) -> None:
        self.app.notify(
            f"{reason}: nothing can be answered, decided, queued or resumed here; the "
            "console only watches",
            title="Read-only",
            severity="warning",
            timeout=30,
            markup=False,
        )

    def _say(self, message: str, severity: str) -> None:
        self.app.call_from_thread(
            self.app.notify, message, title="Retention", severity=severity, markup=False
        )
