"""Answer one worker question by keypress: ``A``/``B``/… (capitals) or ``1``/``2``/…,
``t`` for text.

The countdown keeps running while the modal is open; if the timeout (or anyone
else) answers first, the modal says who did and closes by itself. Writing the
answer is one exclusive create, so a key pressed a moment too late is refused
with the answer that stands instead of replacing it.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from runeconsole.core.errors import RuneError
from runeconsole.services.questions import (
    AlreadyAnswered,
    Answer,
    Question,
    Questions,
    format_left,
)
from runeconsole.tui.reveal import reveal

CLOSE_DELAY_SECONDS = 2.0


def _numbers(count: int) -> set[str]:
    return {str(number) for number in range(1, count + 1)}


class QuestionModal(ModalScreen[Answer | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    def __init__(self, questions: Questions, question: Question) -> None:
        super().__init__()
        self.questions = questions
        self.question = question
        self.closing = False

    def compose(self) -> ComposeResult:
        question = self.question
        with VerticalScroll(id="question-modal", classes=question.urgency):
            yield Static(self._title(), id="question-title")
            yield Static(self._body(), id="question-body")
            yield Static(self._options(), id="question-options")
            yield Static(id="question-countdown")
            yield Input(placeholder="your answer, enter sends (esc closes)", id="question-text")
            yield Static(id="question-note")

    def on_mount(self) -> None:
        self.tick()

    def _title(self) -> Text:
        question = self.question
        mark = ("● blocking", "bold red") if question.blocking else ("○ non-blocking", "yellow")
        title = Text.assemble(mark, "  ", (question.task_id, "bold"))
        if question.worker:
            title.append(f"  from {question.worker}")
        title.append(f"\n{question.id}", "dim")
        return title

    def _body(self) -> Text:
        question = self.question
        if question.error:
            return Text(f"unreadable: {question.error}\n{question.path}", "red")
        body = Text(question.text, "bold")
        if question.context:
            body.append(f"\n\n{question.context}", "italic")
        return body

    def _options(self) -> Table | Text:
        options = self.question.options
        if not options:
            return Text("No options to choose from: press t to answer in your own words.")
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for number, option in enumerate(options, start=1):
            grid.add_row(Text(f" {option.key} {number} ", "bold reverse"), Text(option.label))
        grid.add_row("", Text("t for a free-text answer · esc closes without answering", "dim"))
        return grid

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        if self.closing:
            return
        left = self.question.seconds_left(self.questions.clock.now())
        if not self.question.asked_here:
            text = Text(
                "Asked by another tool, which applies its own timeout: nothing here answers "
                "it on its own. Your answer goes to its answer file, where that tool reads it.",
                "dim",
            )
        elif left is None:
            text = Text("No auto-answer: the worker waits until you answer.", "dim")
        elif left <= 0:
            text = Text("Auto-answer due now: option A.", "bold red")
        else:
            style = "bold red" if left <= 30 else "yellow" if left <= 60 else ""
            text = Text.assemble(
                "Auto-answer with option A in ", (format_left(left), style or "bold")
            )
        self.query_one("#question-countdown", Static).update(text)

    def answered_elsewhere(self, answer: Answer) -> None:
        """Someone (usually the timeout) answered first: say so, then close."""
        who = "the timeout" if answer.decided_by == "auto-timeout" else answer.decided_by
        self.close_with(f"Answered by {who}: {answer.answer or answer.error} — closing.")

    def close_with(self, note: str) -> None:
        """Stop taking answers, show ``note``, and close a moment later."""
        if self.closing:
            return
        self.closing = True
        self.query_one("#question-text", Input).display = False
        self._note(note, "bold yellow")
        self.set_timer(CLOSE_DELAY_SECONDS, self._close)

    def _close(self) -> None:
        self.dismiss(None)

    def _note(self, text: str, style: str) -> None:
        note = self.query_one("#question-note", Static)
        note.update(Text(text, style))
        note.display = True

    # -- answering -------------------------------------------------------------------------

    def on_key(self, event: Key) -> None:
        """Option keys answer; every other printable key stays here (no pane switching)."""
        if isinstance(self.focused, Input) or not event.is_printable or not event.character:
            return
        event.stop()
        event.prevent_default()
        if self.closing:
            return
        # Capitals only: `a` opened this window, and a second `a` must not answer A.
        choice = event.character
        count = len(self.question.options)
        if choice in {o.key for o in self.question.options} or choice in _numbers(count):
            self.answer(option=choice)
        elif event.character == "t":
            self.action_free_text()
        elif event.character == "q":
            self.dismiss(None)

    def action_free_text(self) -> None:
        if self.closing:
            return
        box = self.query_one("#question-text", Input)
        reveal(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.answer(text=event.value)

    def answer(self, *, option: str | None = None, text: str | None = None) -> None:
        try:
            answer = self.questions.answer_question(self.question, option=option, text=text)
        except AlreadyAnswered as exc:
            self.answered_elsewhere(exc.answer)
            return
        except RuneError as exc:
            self._note(str(exc), "bold red")
            return
        self.closing = True
        self.dismiss(answer)
