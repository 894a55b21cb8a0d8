"""Confirm resuming a suspended task (it counts against the resume gate)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from runeconsole.services.suspension import STALE, ContextRecord


class ResumeConfirm(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Resume"),
        Binding("n", "answer(False)", "Cancel"),
        Binding("escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, record: ContextRecord, max_resumes: int) -> None:
        super().__init__()
        self.record = record
        self.max_resumes = max_resumes

    def compose(self) -> ComposeResult:
        record = self.record
        text = Text.assemble(
            ("Resume task #", "bold"),
            (record.task_id, "bold"),
            (f" of {record.arc}?\n\n", "bold"),
            f"resume_count {record.resume_count} -> {record.resume_count + 1} "
            f"(of {self.max_resumes}); the injection is printed and copied.",
        )
        if record.verdict == STALE:
            text.append(f"\n\n{record.detail}", "yellow")
        with Vertical(id="confirm"):
            yield Static(text)
            with Horizontal(id="confirm-buttons"):
                yield Button("Resume (y)", variant="warning", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
