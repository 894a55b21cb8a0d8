"""The fleet console's top line: every source's agents by colour, problems, open
questions, permission requests and dollars spent today, or why it is down; then the
fleet's spending and the plan's headroom."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.widgets import Static

from runeconsole.services.cost.ledger import local_day
from runeconsole.services.liveness import GREEN, RED, YELLOW
from runeconsole.services.sources import DOWN, UP
from runeconsole.services.sources.model import SourcesModel
from runeconsole.tui.app_base.spend import spend_text
from runeconsole.tui.cells.agent_cells import dollars
from runeconsole.tui.support.theme import LIVENESS_STYLE


class SourcesBar(Static):
    """The top line: every source's agents by colour, problems (``!``), open questions
    (``?``), permission requests (``⚑``) and dollars spent today, or why it is down; then
    the fleet's spending and the plan's headroom (``tui/app_base/spend.py``)."""

    DEFAULT_CSS = "SourcesBar { height: 1; padding: 0 1; background: $panel; }"

    def show(self, model: SourcesModel, now: datetime | None = None) -> None:
        now = now or datetime.now().astimezone()
        day = local_day(now)
        text = Text("runeconsole fleet ", "bold")
        for name in model.names:
            state = model.state(name)
            text.append(" ")
            if state.state == DOWN:
                text.append(f"{name} down", "bold red")
                continue
            if state.state != UP:
                text.append(f"{name} …", "yellow")
                continue
            counts = model.counts(name)
            text.append(name, "bold")
            for colour in (GREEN, YELLOW, RED):
                text.append(" ●", LIVENESS_STYLE[colour])
                text.append(str(counts[colour]))
            if counts["problems"]:
                text.append(f" !{counts['problems']}", "bold red")
            if counts["questions"]:
                text.append(f" ?{counts['questions']}", "bold yellow")
            if counts["permissions"]:
                text.append(f" ⚑{counts['permissions']}", "bold magenta")
            if model.spending.usd(name) > 0:
                text.append(f" {dollars(model.spending.today_usd(day, name))}", "dim")
        today, rest = spend_text(model.spending, now)
        for part in (today, rest):
            if part:
                text.append("  ")
                text.append_text(part)
        self.update(text)
