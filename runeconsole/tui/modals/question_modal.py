"""Answer questions by keypress: ``A``/``B``/… (capitals) or ``1``/``2``/…, ``t`` for text.

One window answers one question, or every question of one Claude Code AskUserQuestion
call, one after another ("1 of 2"). A multi-select question is answered by choosing
several options: the option keys or ``space`` (on the highlighted one, moved with
``up``/``down``) toggle, ``enter`` sends the choice. ``enter`` never chooses an option on
its own: the ``enter`` that opened the window, pressed twice, must not answer anything.

The countdown keeps running while the window is open: to the auto-answer of a worker's
question, to the moment a relayed call expires (Claude Code then asks in its own dialog).
If anyone else answers first, the window says who did and moves on or closes.

The window is the same in both consoles: it is handed a ``decide`` callback that gives
the answer, a local write (``local_answers``: one exclusive create, under the call's lock
for a relayed question, so a key pressed a moment too late is refused with the answer
that stands) or the question's source's own ``question answer`` over SSH (the fleet
console). ``decide`` runs in a worker: the window keeps counting down meanwhile, takes no
second answer, and handles the outcome when the worker's ``AnswerWritten`` arrives; a
refusal (too late, the source is down) is said in the window, never lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Key
from textual.message import Message
from textual.widgets import Input, Static

from runeconsole.core.errors import RuneError
from runeconsole.services.claude.questions import answers
from runeconsole.services.worker_questions import (
    AlreadyAnswered,
    Answer,
    Question,
    Questions,
    format_left,
)
from runeconsole.tui.modals.decision_modal import DecisionModal
from runeconsole.tui.support.workers import background, cancelled
from runeconsole.tui.widgets.reveal import reveal

CLOSE_DELAY_SECONDS = 2.0
MOVE_KEYS = {"up": -1, "k": -1, "down": 1, "j": 1}

# Gives the answer (options by key, or a text); raises ``AlreadyAnswered``, ``Expired``
# or another ``RuneError`` when it cannot be given.
Decide = Callable[[Question, list[str] | None, str | None], Answer]


def local_answers(questions: Questions) -> tuple[Decide, Callable[[Question], bool]]:
    """``decide`` and ``settled`` for a question of this root: the answer written here,
    and whether a question of the call was answered meanwhile (its files read again)."""

    def decide(question: Question, options: list[str] | None, text: str | None) -> Answer:
        return answers.answer(questions, question, options=options, text=text)

    def settled(question: Question) -> bool:
        return not questions.read_question(question.path).open

    return decide, settled


def _numbers(count: int) -> set[str]:
    return {str(number) for number in range(1, count + 1)}


class QuestionModal(DecisionModal[Answer | None]):
    DEFAULT_CSS = """
    #question-modal.blocking {
        border: round $error;
    }
    """

    class AnswerWritten(Message):
        """The worker's outcome for one answer: the answer written, or why it was not
        (``AlreadyAnswered``, ``answers.Expired``, another error)."""

        def __init__(
            self, question: Question, given: Answer | None, error: Exception | None = None
        ) -> None:
            super().__init__()
            self.question = question
            self.given = given
            self.error = error

    def __init__(
        self,
        call: list[Question] | Question,
        decide: Decide,
        *,
        now: Callable[[], datetime],
        settled: Callable[[Question], bool] | None = None,
        source: str | None = None,
    ) -> None:
        super().__init__()
        self.decide, self.now, self.settled = decide, now, settled
        self.source = source  # the fleet console's: where the question was asked
        self.call = call if isinstance(call, list) else [call]
        self.index = 0
        self.closing = False
        self.chosen: set[int] = set()  # the toggled options of a multi-select question
        self.cursor = 0
        self.answered: list[Answer] = []
        self.sending = False  # an answer is being written: no second one meanwhile

    @property
    def question(self) -> Question:
        """The question on screen now."""
        return self.call[self.index]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="question-modal", classes=f"window {self.question.urgency}"):
            yield Static(id="question-title", classes="part")
            yield Static(id="question-body", classes="part")
            yield Static(id="question-options", classes="part")
            yield Static(id="question-countdown", classes="countdown")
            yield Input(
                placeholder="your answer, enter sends (esc closes)",
                id="question-text",
                classes="typed",
            )
            yield Static(id="question-note", classes="note")

    def on_mount(self) -> None:
        self.show()

    def show(self) -> None:
        self.chosen, self.cursor = set(), 0
        self.query_one("#question-title", Static).update(self._title())
        self.query_one("#question-body", Static).update(self._body())
        self._draw_options()
        self.refresh_taps()
        self.tick()

    def tap_keys(self) -> list[tuple[str, str]]:
        question = self.question
        keys = [(option.key, option.key) for option in question.options]
        if question.multi_select:
            keys.append(("enter", "Send"))
        return [*keys, ("t", "Type an answer"), *super().tap_keys()]

    def _title(self) -> Text:
        question = self.question
        mark = ("● blocking", "bold red") if question.blocking else ("○ non-blocking", "yellow")
        header = question.fields.get("header") if answers.is_relay(question) else None
        name = (header or "Claude Code") if answers.is_relay(question) else question.task_id
        title = Text.assemble(mark, "  ")
        if self.source:
            title.append(f"{self.source} · ", "bold cyan")
        title.append(str(name), "bold cyan" if header else "bold")
        if question.worker:
            title.append(f"  from {question.worker}")
        if len(self.call) > 1:
            title.append(f"  question {self.index + 1} of {len(self.call)}", "bold")
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

    def _draw_options(self) -> None:
        self.query_one("#question-options", Static).update(self._options())

    def _options(self) -> Table | Text:
        question = self.question
        options = question.options
        if not options:
            return Text("No options to choose from: press t to answer in your own words.")
        descriptions = question.fields.get("option_descriptions")
        descriptions = descriptions if isinstance(descriptions, list) else []
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for number, option in enumerate(options, start=1):
            here = question.multi_select and number - 1 == self.cursor
            key = Text(
                f" {option.key} {number} ", "bold reverse" if not here else "bold reverse cyan"
            )
            if question.multi_select:
                key.append(" [x]" if number - 1 in self.chosen else " [ ]", "bold")
            label = Text(option.label, "bold" if here else "")
            described = descriptions[number - 1] if number - 1 < len(descriptions) else ""
            if isinstance(described, str) and described:
                label.append(f"  {described}", "dim")
            grid.add_row(key, label)
        hint = "t for a free-text answer · esc closes without answering"
        if question.multi_select:
            hint = "keys or space toggle · enter sends the choice · " + hint
        grid.add_row("", Text(hint, "dim"))
        return grid

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        if self.closing:
            return
        now = self.now()
        expiry = answers.expires_in(self.question, now)
        left = self.question.seconds_left(now)
        if expiry is not None:
            text = Text.assemble(
                "Claude Code asks in its own dialog in ",
                (format_left(max(expiry, 0)), "bold red" if expiry <= 30 else "bold"),
                " unless you answer",
            )
        elif not self.question.asked_here:
            text = Text(
                "Asked by another tool, which applies its own timeout: nothing here answers "
                "it on its own. Your answer goes to its answer file, where that tool reads it.",
                "dim",
            )
        elif left is None:
            text = Text("No timeout: the worker waits until you answer.", "dim")
        else:
            text = self._timeout_text(left)
        self.query_one("#question-countdown", Static).update(text)

    def _timeout_text(self, left: float) -> Text:
        """What runeconsole's timeout answers, and when (the pane's ON TIMEOUT says the
        same in short: ``A in 2m13s``)."""
        option, answer = self.question.timeout_answer
        text = Text("Asked through runeconsole, which applies the timeout: ")
        if left <= 0:
            text.append("it answers now with ", "bold red")
        else:
            style = "bold red" if left <= 30 else "yellow" if left <= 60 else "bold"
            text.append_text(Text.assemble("in ", (format_left(left), style), " it answers "))
        if option is not None:
            text.append(option.key, "bold")
            text.append(f" ({option.label})")
        else:
            text.append(f"“{answer}”", "bold")
        if left > 0:
            text.append(" unless you answer first")
        return text

    def answered_elsewhere(self, answer: Answer) -> None:
        """Someone (usually the timeout) answered first: say so, then move on or close."""
        if self.sending:  # the worker's outcome says whose answer stands (maybe ours)
            return
        who = "the timeout" if answer.decided_by == "auto-timeout" else answer.decided_by
        note = f"Answered by {who}: {answer.answer or answer.error}"
        if self.index + 1 < len(self.call):
            self._next(note)
        else:
            self.close_with(f"{note} — closing.")

    def close_with(self, note: str) -> None:
        """Stop taking answers, show ``note``, and close a moment later."""
        if self.closing:
            return
        self.closing = True
        self.query_one("#question-text", Input).display = False
        self._note(note, "bold yellow")
        self.set_timer(CLOSE_DELAY_SECONDS, self._close)

    def _close(self) -> None:
        self.dismiss(self.answered[-1] if self.answered else None)

    def _note(self, text: str, style: str) -> None:
        note = self.query_one("#question-note", Static)
        note.update(Text(text, style))
        note.display = bool(text)

    # -- answering -------------------------------------------------------------------------

    def on_key(self, event: Key) -> None:
        """Option keys answer (or toggle); every other printable key stays here."""
        if isinstance(self.focused, Input):
            return
        if event.key in MOVE_KEYS or event.key in ("enter", "space"):
            event.stop()
            event.prevent_default()
            if not (self.closing or self.sending):
                self._move_or_choose(event.key)
            return
        if not event.is_printable or not event.character:
            return
        event.stop()
        event.prevent_default()
        if self.closing or self.sending:
            return
        # Capitals only: `a` opened this window, and a second `a` must not answer A.
        choice = event.character
        options = self.question.options
        if choice in {o.key for o in options} or choice in _numbers(len(options)):
            index = self.question.option(choice)
            self._pick(options.index(index))
        elif choice == "t":
            self.action_free_text()
        elif choice == "q":
            self.dismiss(self.answered[-1] if self.answered else None)

    def _move_or_choose(self, key: str) -> None:
        options = self.question.options
        if not options or not self.question.multi_select:
            return
        if key in MOVE_KEYS:
            self.cursor = (self.cursor + MOVE_KEYS[key]) % len(options)
            self._draw_options()
        elif key == "space" and self.question.multi_select:
            self._pick(self.cursor)
        elif key == "enter" and self.question.multi_select:
            if self.chosen:
                self.answer(options=[options[i].key for i in sorted(self.chosen)])
            else:
                self._note("Choose at least one option (its key, or space), then enter.", "yellow")

    def _pick(self, index: int) -> None:
        """A single-choice question is answered at once; a multi-select one toggles."""
        if not self.question.multi_select:
            self.answer(options=[self.question.options[index].key])
            return
        self.chosen ^= {index}
        self.cursor = index
        self._note("", "")
        self._draw_options()

    def action_free_text(self) -> None:
        if self.closing:
            return
        box = self.query_one("#question-text", Input)
        reveal(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip() and not self.sending:
            self.answer(text=event.value)

    def answer(self, *, options: list[str] | None = None, text: str | None = None) -> None:
        """Write the answer in a worker; ``on_question_modal_answer_written`` takes it on."""
        self.sending = True
        self._note("Sending…", "dim")
        self.write_answer(self.question, options, text)

    @background("answer")
    def write_answer(self, question: Question, options: list[str] | None, text: str | None) -> None:
        if cancelled():
            return
        try:
            given = self.decide(question, options, text)
        except Exception as exc:  # every refusal is the window's to show
            if not cancelled():
                self.post_message(self.AnswerWritten(question, None, exc))
            return
        if not cancelled():
            self.post_message(self.AnswerWritten(question, given))

    def on_question_modal_answer_written(self, message: AnswerWritten) -> None:
        self.sending = False
        error, given = message.error, message.given
        if isinstance(error, AlreadyAnswered):
            self.answered_elsewhere(error.answer)
            return
        if isinstance(error, answers.Expired):
            self.close_with(f"Too late: {error.message}")
            return
        if error is not None:
            reason = error.message if isinstance(error, RuneError) else f"{error}"
            self._note(reason, "bold red")
            return
        assert given is not None
        self.answered.append(given)
        if self.index + 1 < len(self.call):
            self._next(f"Answered: {given.answer}")
            return
        self.closing = True
        self.dismiss(given)

    def _next(self, note: str) -> None:
        """On to the call's next question (one answered here or elsewhere is passed)."""
        self.index += 1
        while self.index < len(self.call) - 1 and self._settled(self.question):
            self.index += 1
        box = self.query_one("#question-text", Input)
        box.value, box.display = "", False
        self.set_focus(None)
        self.show()
        self._note(note, "green")

    def _settled(self, question: Question) -> bool:
        return self.settled is not None and self.settled(question)
