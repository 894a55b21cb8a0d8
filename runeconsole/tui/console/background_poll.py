"""The console keeps Claude Code's background sessions in view: every
``runeconsole.background.poll_seconds`` (15) it asks Claude Code which run
(``Background.sync``, in a worker), so a session no hook told of appears and one that
ended is marked so. Nothing is asked when Claude Code is not installed; a failure is
said once (and again only when it changes), never fatal (anything else it raises is shown
as every worker's failure is: ``@background``)."""

from __future__ import annotations

from typing import Any

from textual.app import App

from runeconsole.core.errors import RuneError
from runeconsole.services.claude.background.sessions import Background, BackgroundSettings
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.tui.support.workers import background


class BackgroundPoll:
    def __init__(self, app: App[Any], project: Project, registry: Registry) -> None:
        self.app = app
        self.every = project.settings(BackgroundSettings).poll_seconds
        self.background = Background(project, registry=registry)
        self.said: str | None = None

    def start(self) -> bool:
        """Poll from now on (``False``: switched off, or no Claude Code to ask)."""
        if self.every <= 0 or not self.background.cli.installed:
            return False
        self.app.set_interval(self.every, self.poll)
        self.app.call_after_refresh(self.poll)
        return True

    def poll(self) -> None:
        self.sync()

    @background("background-sessions", exclusive=True)
    def sync(self) -> None:
        try:
            self.background.sync()
        except RuneError as exc:
            if exc.message != self.said:
                self.said = exc.message
                self.app.call_from_thread(
                    self.app.notify,
                    exc.message,
                    title="Background sessions",
                    severity="warning",
                    markup=False,
                )
            return
        self.said = None
