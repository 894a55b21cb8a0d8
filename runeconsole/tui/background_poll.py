"""The console keeps Claude Code's background sessions in view: every
``runeconsole.background.poll_seconds`` (15) it asks Claude Code which run
(``Background.sync``, in a worker), so a session no hook told of appears and one that
ended is marked so. Nothing is asked when Claude Code is not installed; a failure is
said once (and again only when it changes), never fatal."""

from __future__ import annotations

from typing import Any

from textual.app import App

from runeconsole.core.errors import RuneError
from runeconsole.services.claude.background import Background, BackgroundSettings
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry


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
        self.app.run_worker(
            self._sync,
            thread=True,
            group="background-sessions",
            exclusive=True,
            exit_on_error=False,
        )

    def _sync(self) -> None:
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
