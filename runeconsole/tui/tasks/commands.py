"""The palette's (ctrl+p) tasks and worktrees: "Worktrees" opens the Worktrees view, and
"Compare task ID" each task's Compare view; shown as the palette opens too."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from runeconsole.tui.panes.tasks_pane import TasksPane

WORKTREES = "Worktrees: every worktree, its agent, task and state"


class TaskConsole(Protocol):
    def show_worktrees(self) -> None:
        """Open the Worktrees view."""
        ...

    def compare_task(self, task_id: str) -> None:
        """Open a task's Compare view."""
        ...


class TaskCommands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], object]]]:
        console = cast(TaskConsole, self.app)
        commands: list[tuple[str, Callable[[], object]]] = [(WORKTREES, console.show_worktrees)]
        for pane in self.app.query(TasksPane):
            for key, task in pane.records.items():
                if not task.error:
                    commands.append((f"Compare task {key}", partial(console.compare_task, key)))
        return commands

    async def discover(self) -> Hits:
        for text, command in self._commands()[:1]:
            yield DiscoveryHit(text, command)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, command in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), command)
