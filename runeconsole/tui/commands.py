"""Command palette (ctrl+p): jump to any agent by key."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import Hit, Hits, Provider

if TYPE_CHECKING:
    from runeconsole.tui.app import RuneConsole


class AgentCommands(Provider):
    async def search(self, query: str) -> Hits:
        app = cast("RuneConsole", self.app)
        matcher = self.matcher(query)
        for key in sorted(app.agents_pane.records):
            text = f"Go to agent {key}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(app.goto_agent, key))
