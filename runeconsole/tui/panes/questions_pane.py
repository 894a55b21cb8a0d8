"""The Questions pane: open worker questions with a live countdown to the auto-answer.

``QuestionsPane`` is what both consoles show: the open questions, blocking first, a
relayed Claude Code call's twin shown once (as the call), and the answer window on enter
or ``a``; each console hands the window its ``decide`` (``QuestionsPane.answering``).

``LocalQuestionsPane`` is the project console's, fed by the files: a ``.question`` appearing
adds a row (a blocking one rings the bell), its ``.answer`` removes it. When a deadline
passes the pane writes the auto-answer itself, so a question left by a crashed
orchestrator is still decided; if an ``ask`` process is also waiting, the exclusive
create lets exactly one of them win and the other reads the result.

A question already past its deadline when the pane first sees it was left by an
orchestrator that is gone (compaction, crash): nobody has had a chance to answer it,
so it is re-surfaced with a fresh timeout instead of being decided at once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from textual.binding import Binding

from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.core.validate import ID_PATTERN
from runeconsole.services.claude.questions import answers, elicitation
from runeconsole.services.worker_questions import (
    AUTO_TIMEOUT,
    PENDING,
    Answer,
    Question,
    Questions,
    format_left,
)
from runeconsole.services.worker_questions.locations import BACKGROUND_DIR
from runeconsole.tui.modals.elicitation_modal import ElicitationModal
from runeconsole.tui.modals.question_modal import Decide, QuestionModal, local_answers
from runeconsole.tui.panes.pane import QUESTIONS, FilePane, Pane
from runeconsole.tui.panes.question_rows import (
    COLUMNS,
    EMPTY,
    TIMES,
    countdown,
    row_values,
    search_fields,
)
from runeconsole.tui.support.workers import background


class QuestionsPane(Pane[Question]):
    ENTER = "answer"
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
    COLUMNS = COLUMNS
    SORT = ("urgency",)
    MOVING = TIMES
    EMPTY = EMPTY
    SOURCE_AT = 1

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.twins: set[str] = set()  # shown as the relayed call that stands for them
        self.modal: QuestionModal | None = None

    # -- rows ------------------------------------------------------------------------------

    def cells(self, key: str, record: Question) -> tuple[object, ...]:
        return row_values(record, self.now())

    def search_fields(self, key: str, record: Question) -> tuple[str, ...]:
        return search_fields(record)

    def hidden(self, key: str, record: Question) -> bool:
        return key in self.twins

    def moving(self, key: str, record: Question) -> dict[str, object]:
        now = self.now()
        return {"age": format_age(record.age(now)), "left": countdown(record, now)}

    def figures(self) -> dict[str, int]:
        return {"questions": len(self.records) - len(self.twins)}

    def source_of(self, key: str) -> str:
        return self.sources.of(key) if self.sources is not None else ""

    def finish(self) -> None:
        """A question a relayed Claude Code call stands for (its twin) is shown once, as
        the call's: its own row is hidden while the call is open."""
        twins = self._twins()
        moved, self.twins = twins ^ self.twins, twins
        for key in moved:
            self.redraw(key)
        super().finish()

    def _twins(self) -> set[str]:
        by_source: dict[str, dict[str, str]] = {}  # source -> question id -> key
        for key, question in self.records.items():
            by_source.setdefault(self.source_of(key), {})[question.id] = key
        twins: set[str] = set()
        for keys in by_source.values():
            questions = [self.records[key] for key in keys.values()]
            twins |= {keys[i] for i in answers.hidden_twins(questions) if i in keys}
        return twins

    # -- answering -------------------------------------------------------------------------

    def answering(self, key: str) -> tuple[Decide, Callable[[Question], bool]]:
        """``decide`` and ``settled`` for the answer window of the question at ``key``."""
        raise NotImplementedError

    def action_answer(self) -> None:
        chosen = self.selected()
        if chosen is not None:
            self.open_modal(chosen[1], chosen[0])

    def open_modal(self, question: Question, key: str | None = None) -> None:
        """The answer window for ``question`` and the rest of its call, if it is one."""
        if self.modal is not None:
            return
        key = key or question.id
        source = self.source_of(key)
        same = [q for k, q in self.records.items() if self.source_of(k) == source]
        call = [q for q in answers.call_of(question, same) if q.open] or [question]
        decide, settled = self.answering(key)
        shown = source if self.sources is not None else None
        if elicitation.is_elicitation(question.fields):  # an MCP server's form
            self.modal = ElicitationModal(question, decide, now=self.now, source=shown)
        else:
            self.modal = QuestionModal(call, decide, now=self.now, settled=settled, source=shown)
        self.app.push_screen(self.modal, self._modal_closed)

    def tell_modal(self, question: Question, answer: Answer | None, why: str | None) -> None:
        """``question`` was answered (``answer``) or went (``why``) elsewhere: the window on
        it, if any, says so and moves on or closes."""
        modal = self.modal
        if modal is None or modal.question.id != question.id:
            return
        if answer is not None:
            modal.answered_elsewhere(answer)
        elif not modal.sending:  # our own answer's outcome is the worker's to tell
            modal.close_with(f"{why or 'The question file is gone'} — closing.")

    def oldest(self) -> tuple[str, Question] | None:
        """The oldest unanswered question, blocking ones first (for the app's ``a``)."""
        records, twins = self.records, self.twins
        waiting = [(k, q) for k, q in records.items() if q.state == PENDING and k not in twins]
        return min(waiting, key=lambda item: item[1].sort_key()) if waiting else None

    def _modal_closed(self, answer: Answer | None) -> None:
        modal, self.modal = self.modal, None
        if answer is not None and modal is not None:
            task = modal.question.task_id
            given = "; ".join(a.answer for a in modal.answered) or answer.answer
            self.notify(f"{task}: {given}", title="Answered", markup=False)
            self.answered(modal.call)

    def answered(self, call: list[Question]) -> None:
        """The window answered these: read them again (the project console's files)."""


class LocalQuestionsPane(QuestionsPane, FilePane[Question]):
    WRITES = frozenset({"answer"})

    def __init__(self, questions: Questions, **kwargs: Any) -> None:
        super().__init__(clock=questions.clock, **kwargs)
        self.questions = questions
        self._loaded = False
        self._auto_answering: set[str] = set()
        self._resurfaced: dict[str, datetime] = {}  # question id -> its fresh deadline

    def on_mount(self) -> None:
        self.load(self.questions.list())
        self._loaded = True

    def watch_dirs(self) -> list[Path]:
        return self.questions.locations.watch_dirs()

    def answering(self, key: str) -> tuple[Decide, Callable[[Question], bool]]:
        return local_answers(self.questions)

    # -- applying changes --------------------------------------------------------------------

    def upsert(self, question: Question) -> None:
        key = question.id
        if not question.open:
            self.forget(key, question.answer, question.discarded)
            return
        is_new = key not in self.records
        if is_new and question.state == PENDING:
            self._resurface_if_overdue(question)
        if key in self._resurfaced:
            question.deadline = self._resurfaced[key]
        self.put(key, question)
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

    def forget(self, key: str, answer: Answer | None = None, why: str | None = None) -> None:
        """The question is answered, discarded or gone: its row goes, and a window on it
        says so."""
        self._resurfaced.pop(key, None)
        known = self.records.get(key)
        self.drop(key)
        if known is None:
            return
        if self.modal is not None and self.modal.question.id == key:
            self.tell_modal(known, answer, why)
        elif answer is not None and answer.decided_by == AUTO_TIMEOUT:
            self.notify(
                f"{key}: no answer in time, chose {answer.answer}",
                title="Auto-answered",
                markup=False,
            )

    def load(self, questions: list[Question]) -> None:
        """Exactly these questions (a full listing)."""
        fresh = {question.id for question in questions}
        for key in [k for k in self.records if k not in fresh]:
            self.forget(key, self._answer_of(key))
        for question in questions:
            self.upsert(question)
        self.finish()

    def _answer_of(self, key: str) -> Answer | None:
        question = self.records.get(key)
        return self.questions.answer_for(question) if question else None

    def refresh_path(self, path: Path) -> None:
        """Re-read one ``.question`` file (and its answer)."""
        if path.exists():
            self.upsert(self.questions.read_question(path))
        else:
            self.forget(self.questions.locations.where(path).question_id)

    def apply_changes(self, paths: set[Path]) -> None:
        locations = self.questions.locations
        questions: set[Path] = set()
        for path in paths:
            if path.parent == locations.base:
                self._directory_changed(path)
            elif path.parent == locations.paths.work:  # a background run: its questions?
                self._directory_changed(path / BACKGROUND_DIR, vanish=False)
            elif (question := locations.question_for(path)) is not None:
                questions.add(question)
        for path in questions:
            self.refresh_path(path)
        self.finish()

    def _directory_changed(self, directory: Path, *, vanish: bool = True) -> None:
        """A question directory appeared (watch it; ``read_directory`` reads what it
        already holds) or a signal directory vanished."""
        if not ID_PATTERN.fullmatch(directory.name):
            return
        if directory.is_dir():
            self.follow(directory)
        elif vanish:
            for key in [k for k, q in self.records.items() if q.signal_dir == directory.name]:
                self.forget(key)

    def read_directory(self, directory: Path) -> None:
        for path in self.questions.question_files(directory):
            self.refresh_path(path)
        self.finish()

    def rescan(self) -> None:
        self.read_all()

    @background("questions-rescan", exclusive=True)
    def read_all(self) -> None:
        questions = self.questions.list()
        try:  # relayed calls whose agent stopped waiting: nobody would get the answer
            if answers.expire_orphans(self.questions, questions, self.now()):
                questions = self.questions.list()
        except RuneError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="warning", markup=False)
        self.app.call_from_thread(self.load, questions)

    # -- time passing ----------------------------------------------------------------------

    def tick(self) -> None:
        super().tick()
        if self.modal is not None:
            self.modal.tick()
        now = self.now()
        due = [
            q
            for q in self.records.values()
            if q.state == PENDING
            and q.id not in self._auto_answering
            and (left := q.seconds_left(now)) is not None
            and left <= 0
        ]
        if due:
            self._auto_answering |= {q.id for q in due}
            self.auto_answer_due(due)

    @background("Auto-answer")
    def auto_answer_due(self, due: list[Question]) -> None:
        """Write the auto-answers that are due (off the UI thread: files are fsynced); a
        failure is shown, and they stay marked as settling: no retry every second."""
        self.questions.auto_answer_due(due)
        self.app.call_from_thread(self._auto_answered, due)

    def _auto_answered(self, due: list[Question]) -> None:
        for question in due:
            self._auto_answering.discard(question.id)
            self.refresh_path(question.path)
        self.finish()

    def answered(self, call: list[Question]) -> None:
        for question in call:
            self.refresh_path(question.path)
        self.finish()
