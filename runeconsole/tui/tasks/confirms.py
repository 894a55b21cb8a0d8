"""The questions asked before attempts are ended or worktrees cleaned, each naming what
would be lost and what would stay: per other attempt, its agent's uncommitted files (they
keep that worktree) and its commits found on no other branch (count and subjects: lost
only because the operator says yes); for ``clean``, what a dry run would remove and keep.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from runeconsole.services.dispatch.removal import Removal
from runeconsole.services.dispatch.service import AttemptView, Loss
from runeconsole.services.dispatch.task_store import Task
from runeconsole.tui.tasks.ending import lost_commits

COMMITS_SHOWN = 8  # subjects listed per attempt; the count is always whole
FILES_SHOWN = 6  # files listed per attempt, the same


class LossConfirm(ModalScreen[bool]):
    """Yes or no, with what it costs: ``y`` / ``n`` / esc, and a button for each."""

    DEFAULT_CSS = """
    LossConfirm > #loss {
        width: 76;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: round $warning;
        padding: 0 1;
        background: $surface;
    }
    LossConfirm #loss-question {
        padding-bottom: 1;
    }
    LossConfirm #loss-body {
        height: auto;
        max-height: 60vh;  /* the buttons stay in sight; a long list scrolls */
    }
    LossConfirm #loss-buttons {
        height: auto;
        align-horizontal: right;
    }
    LossConfirm #loss-buttons Button {
        margin-left: 2;
    }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, question: str, body: Text, yes: str) -> None:
        super().__init__()
        self.question, self.body, self.yes = question, body, yes

    def compose(self) -> ComposeResult:
        with Vertical(id="loss"):
            yield Static(Text(self.question, "bold"), id="loss-question")
            with VerticalScroll(id="loss-body"):
                yield Static(self.body)
            with Horizontal(id="loss-buttons"):
                yield Button(f"{self.yes} (y)", variant="warning", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # enter is never a yes by accident

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


def _attempt_losses(text: Text, losses: list[Loss]) -> None:
    for loss in losses:
        text.append(f"\n#{loss.attempt} ", "bold")
        text.append(loss.agent, "bold cyan")
        commits = len(loss.commits)
        if loss.files:
            count = len(loss.files)
            text.append(f": kept, {count} uncommitted file{'s' * (count != 1)} of its agent")
            for path in loss.files[:FILES_SHOWN]:
                text.append(f"\n   {path}", "yellow")
            if count > FILES_SHOWN:
                text.append(f"\n   and {count - FILES_SHOWN} more", "yellow")
            if commits:
                text.append(f"\n   its {commits} commit{'s' * (commits != 1)} stay", "dim")
                text.append(" with its branch", "dim")
        elif commits:
            text.append(": ")
            text.append(
                f"{commits} commit{'s' * (commits != 1)} on no other branch LOST", "bold red"
            )
            for commit in loss.commits[:COMMITS_SHOWN]:
                text.append(f"\n   {commit}", "red")
            if commits > COMMITS_SHOWN:
                text.append(f"\n   and {commits - COMMITS_SHOWN} more", "red")
        else:
            text.append(": removed, nothing lost", "dim")


def _yes(word: str, losses: list[Loss]) -> str:
    lost = len(lost_commits(losses))
    return f"{word}, lose {lost} commit{'s' * (lost != 1)}" if lost else word


def pick_window(task: Task, view: AttemptView, losses: list[Loss]) -> LossConfirm:
    """Before ``A``: the attempt's branch joins the merge queue; the others go."""
    attempt = view.attempt
    body = Text.assemble((attempt.branch, "cyan"), " joins the merge queue (as a review's approve)")
    test = view.test
    if test is None:
        body.append("; its tests were not run here", "yellow")
    elif not test.get("ok"):
        body.append("; its tests FAILED", "bold red")
    else:
        body.append("; its tests passed", "green")
    body.append(".")
    if losses:
        body.append(
            "\nThe other attempts are stopped; their worktrees and branches are removed "
            "where nothing would be lost:"
        )
        _attempt_losses(body, losses)
    else:
        body.append("\nNo other attempt has a worktree left.", "dim")
    return LossConfirm(
        f"Pick attempt #{attempt.number} of {task.task_id}?", body, _yes("Pick", losses)
    )


def drop_window(task: Task, losses: list[Loss]) -> LossConfirm:
    """Before ``x``: every attempt stops and goes where nothing would be lost."""
    body = Text(
        "Every attempt is stopped; its worktree and branch are removed where nothing would be lost:"
    )
    if losses:
        _attempt_losses(body, losses)
    else:
        body.append("\nno attempt has a worktree left", "dim")
    return LossConfirm(f"Drop task {task.task_id}?", body, _yes("Drop", losses))


def clean_window(plan: list[Removal], name: dict[str, str]) -> LossConfirm:
    """Before ``C``: what a dry run of ``clean`` would remove, and what it would keep and
    why (``name``: how each worktree's path is shown)."""
    going = [r for r in plan if r.removed]
    staying = [r for r in plan if not r.removed]
    body = Text()
    if going:
        body.append("Removed, with their branches:", "bold")
        for removal in going:
            body.append(f"\n  {name.get(removal.path, removal.path)}")
            if removal.branch:
                body.append(f"  {removal.branch}", "dim")
    if staying:
        body.append("\n\n" if going else "")
        body.append("Kept:", "bold")
        for removal in staying:
            body.append(f"\n  {name.get(removal.path, removal.path)}: ")
            body.append(removal.reason or "", "yellow")
    count = len(going)
    return LossConfirm(
        f"Remove {count} landed or dropped worktree{'s' * (count != 1)}?", body, "Clean"
    )
