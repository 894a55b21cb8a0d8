"""Detail of one identity: every field as read, and its predecessor chain."""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.registry import AgentRecord, Registry
from runeconsole.tui.theme import LIVENESS_STYLE


def fields_table(record: AgentRecord) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold")
    for name, value in record.fields.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        table.add_row(name, Text(str(shown)))
    return table


def chain_text(chain: list[AgentRecord]) -> Text:
    text = Text()
    for depth, record in enumerate(chain):
        if depth:
            text.append("   " * (depth - 1) + "└─ ", "dim")
        text.append("● ", LIVENESS_STYLE[record.liveness])
        text.append(str(record.get("agent_id") or record.key), "bold" if depth == 0 else "")
        text.append(f"  {record.status}", "dim")
        text.append("\n")
    return text


class AgentDetail(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("enter", "dismiss", "Close", show=False),
    ]

    def __init__(self, registry: Registry, key: str, record: AgentRecord | None) -> None:
        super().__init__()
        self.registry = registry
        self.key = key
        self.record = record

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static(self._title(), id="detail-title")
            yield Static(self._body(), id="detail-body")

    def _title(self) -> Text:
        record = self.record
        title = Text(self.key, "bold")
        if record is not None:
            title = Text.assemble(("● ", LIVENESS_STYLE[record.liveness]), title)
            title.append(f"  {record.status} · seen {format_age(record.age_seconds)} ago", "dim")
        return title

    def _body(self) -> Table | Text:
        record = self.record
        if record is None:
            return Text("this identity no longer exists", "dim")
        if record.error:
            return Text(f"unreadable: {record.error}\n{record.path}", "red")
        try:
            chain = self.registry.chain(self.key)
        except RuneError as exc:
            chain, note = [record], Text(str(exc), "red")
        else:
            note = Text("")
        grid = Table.grid()
        grid.add_row(fields_table(record))
        grid.add_row(Text("\nPredecessor chain", "bold"))
        grid.add_row(chain_text(chain))
        grid.add_row(note)
        return grid
