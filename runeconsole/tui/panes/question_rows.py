"""The Questions pane's rows: the urgency mark that orders them, what the timeout does and
when (the auto-answer, or a relayed call's expiry), and the cells."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from runeconsole.core.timeutil import format_age
from runeconsole.services.claude.questions import answers
from runeconsole.services.worker_questions import ANOTHER_TOOL, Question, format_left

COLUMNS = (
    ("urgency", " ", 1),
    ("task", "TASK", 9),
    ("worker", "WORKER", None),  # as wide as the longest name shown, ``WORKER_CELLS`` at most
    ("age", "AGE", 6),
    ("left", "ON TIMEOUT", 12),  # what the timeout does, and when
    ("question", "QUESTION", None),
)
WORKER_CELLS = 24  # a worker-written name longer than this is cut with "…"
TIMES = frozenset({"age", "left"})
EMPTY = "No open questions. Workers' questions appear here the moment they are asked."


class Mark(Text):
    """The urgency mark; carries the row's place, since the table sorts by cell values."""

    def __init__(self, question: Question) -> None:
        if question.error:
            super().__init__("?", style="bold red")
        elif question.blocking:
            super().__init__("●", style="bold red")
        else:
            super().__init__("○", style="yellow")
        self.order = question.sort_key()


def countdown(question: Question, now: datetime) -> Text:
    """What happens on timeout, and when (the ON TIMEOUT column): ``A in 2m13s`` where
    runeconsole answers with option A; ``dialog 4m50s`` for a relayed Claude Code call
    (then Claude Code asks in its own dialog), in italics; ``other tool`` for a question
    another tool asked, which keeps its own timeout; ``no timeout`` when the worker waits."""
    expiry = answers.expires_in(question, now)
    if expiry is not None:
        style = "bold red italic" if expiry <= 30 else "italic"
        return Text(f"dialog {format_left(expiry)}" if expiry > 0 else "dialog now", style)
    left = question.seconds_left(now)
    if not question.error and not question.asked_here:
        return Text("other tool", style="dim")
    if question.error or left is None:
        return Text("no timeout" if not question.error else "-", style="dim")
    option, _ = question.timeout_answer
    choice = option.key if option is not None else "auto"
    if left <= 0:
        return Text(f"{choice} now", style="bold red")
    style = "bold red" if left <= 30 else "yellow" if left <= 60 else ""
    return Text(f"{choice} in {format_left(left)}", style=style)


def row_values(question: Question, now: datetime) -> tuple[object, ...]:
    """Cells; worker-written text goes in as ``Text`` so ``[…]`` is shown, not parsed as markup."""
    summary = (
        Text(f"unreadable: {question.error}", style="red")
        if question.error
        else Text(question.first_line)
    )
    if not question.error and not question.asked_here:
        summary = Text.assemble((f"asked by {ANOTHER_TOOL} · ", "dim"), summary)
    return (
        Mark(question),
        task_label(question),
        worker_cell(question.worker or ""),
        format_age(question.age(now)),
        countdown(question, now),
        summary,
    )


def worker_cell(worker: str) -> Text:
    """The worker's name; a long one does not push the question off the screen."""
    cell = Text(worker)
    cell.truncate(WORKER_CELLS, overflow="ellipsis")
    return cell


def task_label(question: Question) -> str:
    """The task, or for a relayed Claude Code call its header and place (``Index 1/2``)."""
    if answers.is_relay(question):
        header = str(question.fields.get("header") or "ask")[:5]
        size = question.fields.get("call_size")
        return f"{header} {question.seq}/{size}" if isinstance(size, int) else header
    return question.task_id if question.seq == 1 else f"{question.task_id}.q{question.seq}"


def search_fields(question: Question) -> tuple[str, ...]:
    """What the filter looks in."""
    return (question.id, question.worker or "", question.text, question.urgency)
