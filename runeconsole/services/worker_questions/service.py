"""``Questions``: reads the question and answer files, asks (under a lock, numbering from
the files), answers, auto-answers at the deadline and waits for an answer."""

from __future__ import annotations

import builtins
import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from runeconsole.adapters.tasks import TaskStore
from runeconsole.core.config import TALISMAN
from runeconsole.core.dir_cache import DirCache
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile, WriteFailed
from runeconsole.core.files import create_exclusive, dump_json, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.project import Project
from runeconsole.services.worker_questions.locations import (
    BACKGROUND,
    FILE_NAME,
    QUESTION,
    Locations,
)
from runeconsole.services.worker_questions.records import (
    ASKED_BY,
    AUTO_TIMEOUT,
    CAP_EXCEEDED,
    PENDING,
    RUNECONSOLE,
    USER,
    AlreadyAnswered,
    Answer,
    AskRequest,
    OpenCount,
    Question,
    RelayDisabled,
    TaskCheck,
)
from runeconsole.services.worker_questions.settings import RelaySettings
from runeconsole.services.worker_questions.task_status import task_check

FILE_MODE = 0o600
DIR_MODE = 0o700
FALLBACK_POLL_SECONDS = 0.5
CAP_ANSWER = (
    "Question cap exceeded (max {cap} per worker). Make best-effort decision and mark as "
    '"assumed — needs review" in your Seal.'
)


class Questions:
    def __init__(
        self,
        project: Project,
        settings: RelaySettings | None = None,
        tasks: TaskStore | None = None,
    ) -> None:
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.settings = settings or project.settings(RelaySettings)
        self.tasks = tasks or TaskStore()
        self.locations = Locations(project.paths)
        self._unanswered_by_dir: DirCache[list[Question]] = DirCache()

    @property
    def base(self) -> Path:
        return self.paths.question_signals

    # -- reading -------------------------------------------------------------------------

    def signal_dirs(self) -> list[Path]:
        return self.locations.signal_dirs()

    def read_answer(self, path: Path, task_id: str, seq: int) -> Answer:
        try:
            body = read_json_object(path)
        except UnreadableFile as exc:
            return Answer(path, task_id, seq, error=exc.reason)
        return Answer.from_body(path, task_id, seq, body)

    def answer_for(self, question: Question) -> Answer | None:
        path = question.answer_path
        if not path.exists():
            return None
        return self.read_answer(path, question.task_id, question.seq)

    def read_question(self, path: Path) -> Question:
        """One ``.question`` file (either layout) and its answer, if any. Never raises for
        bad content."""
        where = self.locations.where(path)
        if not path.name.endswith(".question"):
            raise InvalidInput(f"{path.name} is not a question file")
        question = Question(where.directory, where.task_id, where.seq, path, layout=where.layout)
        try:
            question.fields = read_json_object(path)
        except UnreadableFile as exc:
            question.error = exc.reason
        seq = question.fields.get("seq")
        if where.layout == BACKGROUND and isinstance(seq, int) and not isinstance(seq, bool):
            question.seq = max(seq, 1)  # its name has none: the file says which question
        question.answer = self.answer_for(question)
        question.asked = parse_iso(question.fields.get("asked_at")) or _mtime(path)
        question.deadline = self._deadline(question)
        return question

    def _deadline(self, question: Question) -> datetime | None:
        """When the timeout answers; only for questions runeconsole asked: the tool that
        asked any other applies its own timeout (``None``: nothing here answers it)."""
        if question.error or not question.asked_here:
            return None
        written = question.fields.get("auto_answer_at", ...)
        if written is None:  # ``ask`` writes null for "wait indefinitely"
            return None
        # A deadline we cannot read is no reason to wait forever: use the configured one.
        deadline = parse_iso(written)
        if deadline is not None:
            return deadline
        if not self.settings.auto_answer_on_timeout or question.asked is None:
            return None
        return question.asked + timedelta(seconds=self.settings.timeout_seconds)

    def question_files(self, directory: Path) -> list[Path]:
        return self.locations.question_files(directory)

    def list(self, *, include_closed: bool = False) -> list[Question]:
        """Open questions first (blocking, then non-blocking, oldest first), from both
        layouts (``locations``)."""
        if include_closed:
            found = [self.read_question(p) for p in self.locations.all_question_files()]
        else:  # an answered question is closed: not read (its answer's name says so)
            found = [q for d in self.locations.question_dirs() for q in self._unanswered(d)]
        shown = found if include_closed else [q for q in found if q.open]
        return sorted(shown, key=Question.sort_key)

    def _unanswered(self, directory: Path) -> builtins.list[Question]:
        """The questions of ``directory`` without an answer, read again only once it has
        changed (``core/dir_cache.py``)."""

        def read() -> builtins.list[Question]:
            paths = self.locations.question_files(directory, unanswered=True)
            return [self.read_question(path) for path in paths]

        return self._unanswered_by_dir.get(directory, read, [])

    def open_count(self) -> OpenCount:
        open_questions = self.list()
        return OpenCount(len(open_questions), sum(q.blocking for q in open_questions))

    def get(self, question_id: str) -> Question:
        path = self.locations.path_of(question_id)
        if not path.exists():
            raise RuneError(f"no question {question_id} under {self.base}")
        return self.read_question(path)

    # -- asking ----------------------------------------------------------------------------

    def resolve_signal_dir(self, given: str | None) -> Path:
        """``--signal-dir`` (a name or a path under ``tmp/.rune-signals``), else the newest one."""
        return self.locations.resolve_signal_dir(given, self.clock.now())

    def ask(self, request: AskRequest) -> tuple[Question, TaskCheck]:
        """Persist a question; answered at once if over the cap, discarded if the task ended."""
        request = request.validated()
        if not self.settings.enabled:
            raise RelayDisabled(
                f"question relay is disabled (question_relay.enabled in {self.root / TALISMAN}): "
                "nothing was surfaced; the worker decides on its own",
                request.task_id,
            )
        # Choosing (and creating) the directory is one step, or two first questions a
        # second apart could each start a signal directory of their own.
        with locked(self.paths.lock_for("questions-signal-dir"), what="the signal directories"):
            directory = self.resolve_signal_dir(request.signal_dir)
            _make_private_dir(self.paths.inside(directory))
        check = task_check(self.tasks, request.task_id, request.team, directory)
        now = self.clock.now()
        # An explicit timeout is a request for one, even with auto-answer off in the config.
        timeout = request.timeout_seconds or self.settings.timeout_seconds
        auto = request.timeout_seconds is not None or self.settings.auto_answer_on_timeout
        auto_at = now + timedelta(seconds=timeout) if auto else None
        fields: dict[str, Any] = {
            "task_id": request.task_id,
            "question": request.question,
            "urgency": request.urgency,
            "options": ", ".join(request.options),
            "context": request.context,
            "seq": 0,
            "asked_at": iso_z(now),
            "option_list": request.options,
            "auto_answer_at": _iso_ms(auto_at) if auto_at else None,
            ASKED_BY: RUNECONSOLE,  # the asker keeps the timeout
        }
        # Written where known, not as nulls: other readers take a null for a value.
        fields.update(
            {k: v for k, v in (("worker_name", request.worker), ("team", request.team)) if v}
        )
        if not check.surface:
            fields.update(discarded=check.reason, discarded_at=iso_z(now))
        with locked(self.paths.lock_for(f"questions-{directory.name}"), what="the question files"):
            asked_before = self._asked_before(directory, request.task_id, request.worker)
            path = self._create_question(directory, request.task_id, fields)
            question = self.read_question(path)
            if check.surface and asked_before >= self.settings.max_questions_per_worker:
                text = CAP_ANSWER.format(cap=self.settings.max_questions_per_worker)
                self._write_answer(question, text, CAP_EXCEEDED, None)
                question = self.read_question(path)
        return question, check

    def _task_questions(self, directory: Path, task_id: str) -> builtins.list[Question]:
        paths = self.question_files(directory)
        return [self.read_question(p) for p in paths if p.name.startswith(f"{task_id}.q")]

    def _asked_before(self, directory: Path, task_id: str, worker: str | None) -> int:
        """Questions this worker already asked on this task, not counting capped ones (the
        cap counts what a worker asked, not the answers the cap gave it)."""
        return sum(
            1
            for q in self._task_questions(directory, task_id)
            if not q.error
            and q.worker == worker
            and not (q.answer and q.answer.decided_by == CAP_EXCEEDED)
        )

    def _next_seq(self, directory: Path, task_id: str) -> int:
        seqs = [0]
        for entry in os.scandir(directory):
            match = FILE_NAME.fullmatch(entry.name)
            if match and match.group(1) == task_id:
                seqs.append(int(match.group(2)))
        return max(seqs) + 1

    def _create_question(self, directory: Path, task_id: str, fields: dict[str, Any]) -> Path:
        # The lock keeps our own writers apart; the exclusive create also guards
        # against writers that take no lock.
        for _ in range(100):
            seq = self._next_seq(directory, task_id)
            path = directory / f"{task_id}.q{seq}.{QUESTION}"
            try:
                create_exclusive(path, dump_json({**fields, "seq": seq}), FILE_MODE)
            except FileExistsError:
                continue
            except OSError as exc:
                raise _cannot_write(path, exc) from None
            return path
        raise RuneError(f"could not find a free sequence number for {task_id} in {directory}")

    # -- answering ---------------------------------------------------------------------------

    def _write_answer(
        self, question: Question, text: str, decided_by: str, option: str | None
    ) -> Answer:
        answered_at = iso_z(self.clock.now())
        body = {
            "task_id": question.task_id,
            "answer": text,
            "decided_by": decided_by,
            "seq": question.seq,
            "option": option,
            "answered_at": answered_at,
        }
        path = self.paths.inside(question.answer_path)
        try:
            create_exclusive(path, dump_json(body), FILE_MODE)
        except FileExistsError:
            raise AlreadyAnswered(
                question.id, self.read_answer(path, question.task_id, question.seq)
            ) from None
        except OSError as exc:
            raise _cannot_write(path, exc) from None
        return Answer(path, question.task_id, question.seq, text, decided_by, option, answered_at)

    def answer(
        self, question_id: str, *, option: str | None = None, text: str | None = None
    ) -> Answer:
        """The operator's answer; ``AlreadyAnswered`` if anyone answered first."""
        question = self.get(question_id)
        return self.answer_question(question, option=option, text=text)

    def answer_question(
        self, question: Question, *, option: str | None = None, text: str | None = None
    ) -> Answer:
        if (option is None) == (text is None):
            raise InvalidInput("answer with exactly one of an option or a free text")
        if question.answer is not None:
            raise AlreadyAnswered(question.id, question.answer)
        if question.discarded:
            raise RuneError(
                f"{question.id} was discarded ({question.discarded}); nobody waits for it"
            )
        if text is not None:
            text = text.strip()
            if not text:
                raise InvalidInput("the answer text is empty")
            return self._write_answer(question, text, USER, None)
        if question.error:
            raise InvalidInput(
                f"{question.id} is unreadable ({question.error}): answer with a text"
            )
        chosen = question.option(option or "")
        return self._write_answer(question, chosen.text, USER, chosen.key)

    def answer_choices(self, question: Question, choices: builtins.list[str]) -> Answer:
        """The operator's choice of several options (a multi-select question): the answer
        is their texts joined by ", " and ``option`` their keys (``A,C``), in order."""
        if question.answer is not None:
            raise AlreadyAnswered(question.id, question.answer)
        if question.discarded:
            raise RuneError(
                f"{question.id} was discarded ({question.discarded}); nobody waits for it"
            )
        if not choices:
            raise InvalidInput("choose at least one option")
        if len(choices) > 1 and not question.multi_select:
            raise InvalidInput(f"{question.id} takes one option, not {len(choices)}")
        picked = {option.key: option for option in map(question.option, choices)}
        chosen = [picked[key] for key in sorted(picked)]
        text = ", ".join(option.text for option in chosen)
        return self._write_answer(question, text, USER, ",".join(o.key for o in chosen))

    def auto_answer(self, question: Question) -> Answer:
        """Option A on timeout; ``AlreadyAnswered`` if someone was faster."""
        option, text = question.timeout_answer
        return self._write_answer(question, text, AUTO_TIMEOUT, option.key if option else None)

    def auto_answer_due(self, questions: builtins.list[Question]) -> builtins.list[Answer]:
        """Auto-answer those past their deadline; returns the answers that now stand."""
        now = self.clock.now()
        answers = []
        for question in questions:
            left = question.seconds_left(now)
            if question.state != PENDING or left is None or left > 0:
                continue
            try:
                answers.append(self.auto_answer(question))
            except AlreadyAnswered as exc:
                answers.append(exc.answer)
        return answers

    def wait(self, question: Question) -> Answer:
        """Block until answered; auto-answer at the deadline. Wakes on file events."""
        from runeconsole.adapters.fswatch import DirWatcher  # watchdog only when waiting

        wake = threading.Event()
        name = question.answer_path.name
        watcher = DirWatcher(
            [question.path.parent], lambda path: wake.set() if path.name == name else None
        )
        nap = self.settings.poll_interval_seconds if watcher.start() else FALLBACK_POLL_SECONDS
        try:
            while True:
                wake.clear()
                answer = self.answer_for(question)
                if answer is not None:
                    return answer
                left = question.seconds_left(self.clock.now())
                if left is not None and left <= 0:
                    try:
                        return self.auto_answer(question)
                    except AlreadyAnswered as exc:
                        return exc.answer
                wake.wait(nap if left is None else min(nap, left))
        finally:
            watcher.stop()


def _iso_ms(moment: datetime) -> str:
    """Like ``iso_z`` but to the millisecond, so a short timeout is not cut short."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return None


def _make_private_dir(directory: Path) -> None:
    """The signal directory is created 0700, private to its owner (an existing one is left
    as it is)."""
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(directory, DIR_MODE)
    except FileExistsError:
        if not directory.is_dir():
            raise RuneError(f"{directory} exists and is not a directory") from None
    except OSError as exc:
        raise _cannot_write(directory, exc) from None


def _cannot_write(path: Path, exc: OSError) -> RuneError:
    if isinstance(exc, WriteFailed):  # a full disk, a read-only root: it says so already
        return exc
    return RuneError(f"cannot write {path}: {exc.strerror or exc}")
