"""Where ``F`` forks an agent's session: in the agent's own worktree (``s``), or in a new
worktree from the same commit (``w``); esc: not at all."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

SAME, NEW = "fork", "fork_worktree"  # the agent actions each choice runs


class ForkChoice(ModalScreen[str | None]):
    DEFAULT_CSS = """
    #fork-choice {
        width: 68;
        max-width: 95%;
        height: auto;
        border: round $warning;
        padding: 1 2;
        background: $surface;
    }
    #fork-buttons {
        height: auto;
        margin-top: 1;
        align-horizontal: right;
    }
    #fork-buttons Button {
        margin-left: 1;
    }
    """

    BINDINGS = [
        Binding("s", "choose('fork')", "Same worktree"),
        Binding("w", "choose('fork_worktree')", "New worktree"),
        Binding("escape,n", "choose('')", "Cancel", show=False),
    ]

    def __init__(self, key: str, where: str = "") -> None:
        super().__init__()
        self.key, self.where = key, where

    def compose(self) -> ComposeResult:
        text = Text(f"Fork {self.key}?", "bold")
        on = f" on {self.where}" if self.where else ""
        text.append(
            "\n\nIts Claude Code conversation is copied into a new agent of its role, with a "
            f"session of its own{on} (claude --resume --fork-session); the agent itself goes "
            "on. Same worktree: both work on the same files. New worktree: a branch "
            "agent/{role}-{name} from the commit the agent's worktree is on."
        )
        with Vertical(id="fork-choice"):
            yield Static(text)
            with Horizontal(id="fork-buttons"):
                yield Button("Same worktree (s)", variant="warning", id=SAME)
                yield Button("New worktree (w)", variant="primary", id=NEW)
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id if event.button.id in (SAME, NEW) else None)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice or None)
