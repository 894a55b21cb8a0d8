"""The console's own housekeeping: what a kill left undone, said as the console opens (a
new task's creation cut short finished or undone too);
the daily prune (off the UI thread); and saying so when the root is read-only.

Actions the last console (or a command) was killed in the middle of are in the journal
(``services/journal.py``): each is said once, as a warning that stays a minute, with
what of it was written, and its record is cleared (on a read-only root it stays, for a
console that can clear it).

A minute after the console opens, and every hour after that, a worker asks whether a
prune is due (``runeconsole.retention.every_hours`` since the last one, by whoever ran
it: this console, another, ``runeconsole prune`` from cron) and runs it. What it moved is
said once, quietly; a prune another process is running is left to it; a failure (a full
disk) is a warning, and the next hour tries again.

Both run in workers of the app (``@background``): anything else they raise is shown, as
every worker's failure is.
"""

from __future__ import annotations

from typing import Any

from textual.app import App

from runeconsole.core.errors import RuneError
from runeconsole.services.dispatch.service import Dispatch
from runeconsole.services.journal import Interrupted, Journal
from runeconsole.services.project import Project
from runeconsole.services.retention import PruneRunning, Retention, RetentionSettings
from runeconsole.tui.support.workers import background

PRUNE_FIRST_SECONDS = 60.0
PRUNE_CHECK_SECONDS = 3600.0


class Upkeep:
    def __init__(self, app: App[Any], project: Project) -> None:
        self.app = app
        self.project = project
        project.settings(RetentionSettings)  # now: a bad value is shown as the console opens
        self.last_report: str | None = None
        self.interrupted: list[Interrupted] | None = None  # once read

    def start(self, *, prune: bool, read_only: bool) -> None:
        self.report_interrupted(dismiss=not read_only)
        if prune:
            self.app.set_timer(PRUNE_FIRST_SECONDS, self.check)
            self.app.set_interval(PRUNE_CHECK_SECONDS, self.check)

    @background("interrupted")
    def report_interrupted(self, *, dismiss: bool) -> None:
        journal = Journal(self.project.paths, self.project.via)
        found = journal.interrupted()
        for action in found:
            self.app.call_from_thread(
                self.app.notify, action.message(), title="Did not complete",
                severity="warning", timeout=60, markup=False,
            )  # fmt: skip
            if dismiss:
                journal.dismiss(action)
        if dismiss:
            self.finish_creations()
        self.interrupted = found

    def finish_creations(self) -> None:
        """Tasks whose creation a kill cut short: attempts that started kept, the rest
        undone (``Dispatch.recover``), each said once."""
        try:
            said = Dispatch(self.project).recover()
        except (RuneError, OSError) as exc:
            message = exc.message if isinstance(exc, RuneError) else f"{exc.strerror or exc}"
            said = [f"could not finish: {message}"]
        for line in said:
            self.app.call_from_thread(
                self.app.notify, line, title="New task cut short", severity="warning",
                timeout=60, markup=False,
            )  # fmt: skip

    def check(self) -> None:
        self.prune_if_due()

    @background("prune", exclusive=True)
    def prune_if_due(self) -> None:
        try:
            retention = Retention(self.project)
            if not retention.due():
                return
            report = retention.prune()
        except PruneRunning:
            return  # another console, or a prune from cron: it is theirs to do
        except (RuneError, OSError) as exc:
            message = exc.message if isinstance(exc, RuneError) else f"{exc.strerror or exc}"
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
