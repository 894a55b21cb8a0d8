"""A yes/no question before anything that changes the fleet (``y`` / ``n`` / esc)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    #confirm {
        width: 64;
        max-width: 95%;
        height: auto;
        border: round $warning;
        padding: 1 2;
        background: $surface;
    }
    #confirm-buttons {
        height: auto;
        margin-top: 1;
        align-horizontal: right;
    }
    #confirm-buttons Button {
        margin-left: 2;
    }
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, question: str, detail: Text | str = "", yes: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self) -> ComposeResult:
        text = Text(self.question, "bold")
        if self.detail:
            text.append("\n\n")
            text.append(self.detail if isinstance(self.detail, Text) else Text(self.detail))
        with Vertical(id="confirm"):
            yield Static(text)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", variant="warning", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
