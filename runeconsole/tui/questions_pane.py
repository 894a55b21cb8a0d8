"""The Questions pane: open worker questions with a live countdown to the auto-answer.

Rows are keyed by question id and follow the files: a ``.question`` appearing adds
a row (a blocking one rings the bell), its ``.answer`` removes it. When a deadline
passes the pane writes the auto-answer itself, so a question left by a crashed
orchestrator is still decided; if an ``ask`` process is also waiting, the exclusive
create lets exactly one of them win and the other reads the result.

A question already past its deadline when the pane first sees it was left by an
orchestrator that is gone (compaction, crash): nobody has had a chance to answer it,
so it is re-surfaced with a fresh timeout instead of being decided at once.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.core.validate import ID_PATTERN
from runeconsole.services.claude import answers, elicitation
from runeconsole.services.questions import (
    AUTO_TIMEOUT,
    PENDING,
    Answer,
    Question,
    Questions,
    format_left,
)
from runeconsole.services.questions.locations import BACKGROUND_DIR
from runeconsole.tui.elicitation_modal import ElicitationModal
from runeconsole.tui.keyed_table import KeyedTable
from runeconsole.tui.pane import QUESTIONS, LivePane
from runeconsole.tui.question_modal import QuestionModal
from runeconsole.tui.question_rows import (
    COLUMNS,
    EMPTY,
    TIMES,
    countdown,
    row_values,
    search_fields,
)


class QuestionsPane(LivePane):
    DEFAULT_CSS = """
    QuestionsPane {
        layers: table note;
    }
    #questions-empty {
        layer: note;
        height: auto;
        margin-top: 2;
        padding: 0 2;
        color: $text-muted;
    }
    """
    WRITES = frozenset({"answer"})
    BINDINGS = [
        Binding("a", "answer", "Answer"),
        Binding("enter", "answer", "Answer", show=False),
    ]
    PANE_ID = QUESTIONS
    TITLE = "Questions"
    HELP_KEYS = (
        ("enter / a", "answer the selected question (a in any other pane: the oldest)"),
        ("A B … / 1 2 …", "in the answer window: choose that option at once (capitals)"),
        ("space, enter", "multi-select: toggle the highlighted option (↑ ↓); send the choice"),
        ("t", "in the answer window: answer in your own words"),
        ("esc / q", "close the answer window without answering"),
    )

    def __init__(self, questions: Questions, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.questions = questions
        self.open: dict[str, Question] = {}
        self.modal: QuestionModal | None = None
        self._loaded = False
        self._settling: set[str] = set()
        self._resurfaced: dict[str, datetime] = {}  # question id -> its fresh deadline
        self.hidden: set[str] = set()  # twins shown as the relayed call that stands for them

    def compose(self) -> ComposeResult:
        yield KeyedTable(COLUMNS, id="questions-table")
        yield Static(EMPTY, id="questions-empty")

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def on_mount(self) -> None:
        self.sync(self.questions.list())
        self._loaded = True

    def watch_dirs(self) -> list[Path]:
        return self.questions.locations.watch_dirs()

    # -- applying changes --------------------------------------------------------------------

    def upsert(self, question: Question) -> None:
        key = question.id
        if not question.open:
            self.remove(key, question.answer, question.discarded)
            return
        is_new = key not in self.open
        if is_new and question.state == PENDING:
            self._resurface_if_overdue(question)
        if key in self._resurfaced:
            question.deadline = self._resurfaced[key]
        self.open[key] = question
        self.place(
            self.table,
            key,
            search_fields(question),
            lambda: row_values(question, self.now()),
            moving=TIMES,
            hidden=key in self.hidden,
        )
        if is_new and self._loaded and question.blocking and question.state == PENDING:
            self.app.bell()
            who = f"{question.task_id} ({question.worker or 'worker'})"
            self.notify(
                f"{who}: {question.first_line} — press a to answer",
                title="Blocking question",
                severity="warning",
                timeout=8,
                markup=False,
            )
            self.post_message(
                self.OperatorWanted(
                    question.worker or question.task_id, f"{who} asks", question.first_line
                )
            )

    def _resurface_if_overdue(self, question: Question) -> None:
        now = self.now()
        left = question.seconds_left(now)
        if left is None or left > 0:
            return
        timeout = timedelta(seconds=self.questions.settings.timeout_seconds)
        self._resurfaced[question.id] = now + timeout
        self.notify(
            f"{question.id} was left unanswered; it is decided in "
            f"{format_left(timeout.total_seconds())} unless you answer",
            title="Question re-surfaced",
            severity="warning",
            markup=False,
        )

    def remove(self, key: str, answer: Answer | None = None, why: str | None = None) -> None:
        self._resurfaced.pop(key, None)
        known = self.open.pop(key, None)
        self.table.drop(key)
        if known is None:
            return
        modal = self.modal if self.modal is not None and self.modal.question.id == key else None
        if modal is not None:
            if answer is not None:
                modal.answered_elsewhere(answer)
            else:
                modal.close_with(f"{why or 'The question file is gone'} — closing.")
        elif answer is not None and answer.decided_by == AUTO_TIMEOUT:
            self.notify(
                f"{key}: no answer in time, chose {answer.answer}",
                title="Auto-answered",
                markup=False,
            )

    def finish_batch(self) -> None:
        self._show_twins_once()
        self.table.reorder("urgency", key=lambda mark: mark.order)
        self.query_one("#questions-empty").display = not self.open
        self.summarise({"questions": len(self.open) - len(self.hidden)})

    def _show_twins_once(self) -> None:
        """A question a relayed Claude Code call stands for (its twin) is shown once, as the
        call's: its own row is hidden while the call is open."""
        hidden = answers.hidden_twins(list(self.open.values()))
        now = self.now()
        for key in self.hidden - hidden:  # its call is settled: back, if still open
            question = self.open.get(key)
            if question is not None:
                self.place(
                    self.table, key, search_fields(question), partial(row_values, question, now)
                )
        for key in hidden:
            self.table.drop(key)
        self.hidden = hidden

    def sync(self, questions: list[Question]) -> None:
        fresh = {question.id for question in questions}
        for key in [k for k in self.open if k not in fresh]:
            self.remove(key, self._answer_of(key))
        for question in questions:
            self.upsert(question)
        self.finish_batch()

    def _answer_of(self, key: str) -> Answer | None:
        question = self.open.get(key)
        return self.questions.answer_for(question) if question else None

    def refresh_path(self, path: Path) -> None:
        """Re-read one ``.question`` file (and its answer)."""
        if path.exists():
            self.upsert(self.questions.read_question(path))
        else:
            self.remove(self.questions.locations.where(path).question_id)

    def apply_changes(self, paths: set[Path]) -> None:
        locations = self.questions.locations
        questions: set[Path] = set()
        for path in paths:
            if path.parent == locations.base:
                questions |= self._directory_changed(path)
            elif path.parent == locations.paths.work:  # a background run: its questions?
                questions |= self._directory_changed(path / BACKGROUND_DIR, vanish=False)
            elif (question := locations.question_for(path)) is not None:
                questions.add(question)
        for path in questions:
            self.refresh_path(path)
        self.finish_batch()

    def _directory_changed(self, directory: Path, *, vanish: bool = True) -> set[Path]:
        """A question directory appeared (watch it; ``read_directory`` reads what it
        already holds) or a signal directory vanished."""
        if not ID_PATTERN.fullmatch(directory.name):
            return set()
        if directory.is_dir():
            self.follow(directory)
            return set()
        if not vanish:
            return set()
        for key in [k for k, q in self.open.items() if q.signal_dir == directory.name]:
            self.remove(key)
        return set()

    def read_directory(self, directory: Path) -> None:
        for path in self.questions.question_files(directory):
            self.refresh_path(path)
        self.finish_batch()

    @work(thread=True, exclusive=True, group="questions-rescan")
    def rescan(self) -> None:
        questions = self.questions.list()
        try:  # relayed calls whose agent stopped waiting: nobody would get the answer
            if answers.expire_orphans(self.questions, questions, self.now()):
                questions = self.questions.list()
        except RuneError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="warning", markup=False)
        self.app.call_from_thread(self.sync, questions)

    # -- time passing ----------------------------------------------------------------------

    def now(self) -> datetime:
        return self.questions.clock.now()

    def tick(self) -> None:
        now = self.now()

        def times(key: str) -> dict[str, object] | None:
            question = self.open.get(key)
            if question is None:
                return None
            return {"age": format_age(question.age(now)), "left": countdown(question, now)}

        self.table.refresh_visible(times)
        if self.modal is not None:
            self.modal.tick()
        due = [
            q
            for q in self.open.values()
            if q.state == PENDING
            and q.id not in self._settling
            and (left := q.seconds_left(now)) is not None
            and left <= 0
        ]
        if due:
            self._settling |= {q.id for q in due}
            self.settle(due)

    @work(thread=True, group="questions-settle")
    def settle(self, due: list[Question]) -> None:
        """Write the auto-answers that are due (off the UI thread: files are fsynced)."""
        try:
            self.questions.settle_due(due)
        except RuneError as exc:  # left marked as settling: no retry every second
            self.app.call_from_thread(
                self.notify, exc.message, title="Auto-answer failed", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self._settled, due)

    def _settled(self, due: list[Question]) -> None:
        for question in due:
            self._settling.discard(question.id)
            self.refresh_path(question.path)
        self.finish_batch()

    # -- interaction -------------------------------------------------------------------------

    def refilter(self) -> None:
        for question in list(self.open.values()):
            self.upsert(question)
        self.finish_batch()

    def select(self, key: str) -> None:
        self.table.move_to(key)

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        if self.writable():
            self.action_answer()

    def action_answer(self) -> None:
        key = self.table.cursor_key()
        question = self.open.get(key) if key else None
        if question is not None:
            self.open_modal(question)

    def open_modal(self, question: Question) -> None:
        """The answer window for ``question`` and the rest of its call, if it is one."""
        if self.modal is not None:
            return
        if elicitation.is_elicitation(question.fields):  # an MCP server's form
            modal: QuestionModal = ElicitationModal(self.questions, question)
        else:
            call = answers.call_of(question, list(self.open.values()))
            modal = QuestionModal(self.questions, [q for q in call if q.open] or [question])
        self.modal = modal
        self.app.push_screen(modal, self._modal_closed)

    def oldest(self) -> Question | None:
        """The oldest unanswered question, blocking ones first (for the app's ``a``)."""
        waiting = [q for q in self.open.values() if q.state == PENDING and q.id not in self.hidden]
        return min(waiting, key=Question.sort_key) if waiting else None

    def _modal_closed(self, answer: Answer | None) -> None:
        modal, self.modal = self.modal, None
        if answer is not None and modal is not None:
            task = modal.question.task_id
            given = "; ".join(a.answer for a in modal.answered) or answer.answer
            self.notify(f"{task}: {given}", title="Answered", markup=False)
            for question in modal.call:
                self.refresh_path(question.path)
            self.finish_batch()
