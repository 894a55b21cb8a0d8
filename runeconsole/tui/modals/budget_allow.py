"""``$`` on an agent: the window that asks how much more a held agent may spend, for the
rest of the day or so many dollars more; the console's ``Agents`` then allows it, here
or on the agent's source (``runeconsole budget allow KEY [--usd N]`` from a shell)."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from runeconsole.services.liveness import AgentRecord
from runeconsole.tui.cells.agent_cells import spent


class Allowance:
    """The operator's choice: ``usd`` more dollars, or (``None``) the rest of the day."""

    def __init__(self, usd: float | None) -> None:
        self.usd = usd

    def words(self) -> str:
        return "for the rest of the day" if self.usd is None else f"for ${self.usd:,.2f} more"


def parsed(text: str) -> Allowance:
    """What was typed: nothing, or dollars (``ValueError`` with the reason otherwise)."""
    text = text.strip().lstrip("$").replace(",", "")
    if not text:
        return Allowance(None)
    usd = float(text)
    if not 0 < usd < 1e9:
        raise ValueError("dollars more: a number above 0")
    return Allowance(usd)


class AllowWindow(ModalScreen["Allowance | None"]):
    DEFAULT_CSS = """
    #allow {
        width: 68;
        max-width: 95%;
        height: auto;
        border: round $warning;
        padding: 1 2;
        background: $surface;
    }
    #allow-error {
        color: $error;
        height: auto;
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, key: str, state: str) -> None:
        super().__init__()
        self.key = key
        self.state = state

    def compose(self) -> ComposeResult:
        text = Text(f"Let {self.key} go on?", "bold")
        text.append(f"\n{self.state}\n\n", "yellow")
        text.append("Dollars more it may spend; empty: for the rest of the day.")
        with Vertical(id="allow"):
            yield Static(text)
            yield Input(placeholder="e.g. 5 (enter: allow · esc: cancel)", id="allow-usd")
            yield Static("", id="allow-error")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            self.dismiss(parsed(event.value))
        except ValueError as exc:
            why = str(exc) if "above" in str(exc) else "dollars, e.g. 5 or 2.50"
            self.query_one("#allow-error", Static).update(Text(why))

    def action_cancel(self) -> None:
        self.dismiss(None)


def allow_window(record: AgentRecord, now: datetime) -> AllowWindow:
    """The window for ``record``'s agent, saying how its budget stands."""
    cost = spent(record, now)
    state = f"{cost.budget}: {cost.detail}" if cost and cost.detail else "not held"
    return AllowWindow(record.key, state)
