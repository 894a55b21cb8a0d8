"""Command palette (ctrl+p): jump to any agent by key, in either console; search every
agent's conversation (``S``), or open one agent's (``t``); in the project console, open
the Worktrees view, and each task's Compare view (``TaskCommands``; "Worktrees" shown as
the palette opens too)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from runeconsole.tui.panes.agents_pane import AgentsPane
from runeconsole.tui.panes.tasks_pane import TasksPane

SEARCH = "Search every conversation (S): words, agent:, tool:, since:, who:"
WORKTREES = "Worktrees: every worktree, its agent, task and state"


class AgentConsole(Protocol):
    def goto_agent(self, key: str) -> None:
        """Show the agent's row in the Agents pane."""
        ...

    def action_search(self, typed: str = "") -> None:
        """The conversation search."""
        ...


class AgentCommands(Provider):
    async def search(self, query: str) -> Hits:
        panes = self.app.query(AgentsPane)
        if not panes:
            return
        console = cast(AgentConsole, self.app)
        matcher = self.matcher(query)
        for key in sorted(panes.first().records):
            text = f"Go to agent {key}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(console.goto_agent, key))


SECOND = 0.9  # a conversation's hit, beside the agent's own: ranked after it


class ConversationCommands(Provider):
    """ "Search every conversation" (shown as the palette opens), and "Conversation of
    KEY" for each agent."""

    async def discover(self) -> Hits:
        yield DiscoveryHit(SEARCH, cast(AgentConsole, self.app).action_search)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        score = matcher.match(SEARCH)
        if score > 0:
            yield Hit(score, matcher.highlight(SEARCH), cast(AgentConsole, self.app).action_search)
        panes = self.app.query(AgentsPane)
        if not panes:
            return
        pane = panes.first()
        for key in sorted(pane.records):
            text = f"Conversation of {key}"
            score = matcher.match(text)
            if score > 0:  # after "Go to agent KEY" when both match as well: enter goes there
                yield Hit(
                    score * SECOND, matcher.highlight(text), partial(pane.open_conversation, key)
                )


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
