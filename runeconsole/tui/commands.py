"""Command palette (ctrl+p): jump to any agent by key, in either console."""

from __future__ import annotations

from functools import partial
from typing import Protocol, cast

from textual.command import Hit, Hits, Provider

from runeconsole.tui.agents_pane import AgentsPane


class AgentConsole(Protocol):
    def goto_agent(self, key: str) -> None:
        """Show the agent's row in the Agents pane."""
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
