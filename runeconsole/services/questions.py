"""Worker questions (seed 001): ``tmp/.rune-signals/rune-work-{ts}/{task}.q{seq}.question|answer``.

The orchestrator persists each worker question here and waits for its answer;
the operator answers from the console or the CLI, or the timeout picks option A.
Every answer is created with an exclusive link, so whoever writes first wins and
a later writer (operator, console timer or ``ask`` timer) learns who did; nothing
ever replaces an answer. Sequence numbers come from the files under a lock, so
they survive restarts and two concurrent ``ask`` never collide. Files other tools
wrote are read as they are; a bad one is reported as unreadable, never fatal.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from runeconsole.adapters.tasks import TaskFile, TaskStore
from runeconsole.core.config import TALISMAN, Talisman
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import create_exclusive, dump_json, read_json_object
from runeconsole.core.locks import locked
from runeconsole.core.timeutil import compact_stamp, format_age, iso_z, parse_iso
from runeconsole.core.validate import contained, id_subdirectories, validate_id
from runeconsole.services.project import Project

QUESTION, ANSWER = "question", "answer"
USER, AUTO_TIMEOUT, CAP_EXCEEDED = "user", "auto-timeout", "cap-exceeded"
DECIDERS = (USER, AUTO_TIMEOUT, CAP_EXCEEDED)
BLOCKING, NON_BLOCKING = "blocking", "non-blocking"
URGENCIES = (BLOCKING, NON_BLOCKING)
PENDING, ANSWERED, DISCARDED, UNREADABLE = "pending", "answered", "discarded", "unreadable"
SIGNAL_DIR_PREFIX = "rune-work-"
MAX_OPTIONS = 9
MAX_TEXT = 8000
MAX_TIMEOUT_SECONDS = 7 * 24 * 3600  # a week: beyond that nobody is waiting for the answer
FILE_MODE = 0o600
DIR_MODE = 0o700
FALLBACK_POLL_SECONDS = 0.5
NO_OPTIONS_ANSWER = "proceed with best judgment"
CAP_ANSWER = (
    "Question cap exceeded (max {cap} per worker). Make best-effort decision and mark as "
    '"assumed — needs review" in your Seal.'
)

FILE_NAME = re.compile(r"^([A-Za-z0-9_-]+)\.q([1-9][0-9]{0,8})\.(question|answer)$")
QUESTION_ID = re.compile(r"^([A-Za-z0-9_-]+)/([A-Za-z0-9_-]+)\.q([1-9][0-9]{0,8})$")
LABEL = re.compile(r"^([A-Za-z])\s*[:.)]\s*")
# "A: bcrypt, B: argon2" — the seed stores options as one string and splits on commas.
_OPTION_SPLIT = re.compile(r",\s*(?=[A-Za-z]\s*[:.)]\s)")


@dataclass(frozen=True)
class RelaySettings:
    enabled: bool = True
    timeout_seconds: float = 180.0
    poll_interval_seconds: float = 15.0
    auto_answer_on_timeout: bool = True
    max_questions_per_worker: int = 3

    @classmethod
    def from_talisman(cls, talisman: Talisman) -> RelaySettings:
        section = talisman.section("question_relay")
        settings = cls(
            enabled=section.boolean("enabled", True),
            timeout_seconds=section.number(
                "timeout_seconds", 180.0, minimum=1, maximum=MAX_TIMEOUT_SECONDS
            ),
            poll_interval_seconds=section.number("poll_interval_seconds", 15.0, minimum=1),
            auto_answer_on_timeout=section.boolean("auto_answer_on_timeout", True),
            max_questions_per_worker=section.integer("max_questions_per_worker", 3, minimum=1),
        )
        section.warn_unread()
        return settings


def format_left(seconds: float) -> str:
    """Time left before the auto-answer, rounded up (``0.2`` s left is ``1s``, not ``0s``)."""
    return format_age(math.ceil(seconds))


# -- options ---------------------------------------------------------------------------------


def option_key(index: int) -> str:
    return chr(ord("A") + index)


@dataclass(frozen=True)
class Option:
    key: str
    text: str

    @property
    def label(self) -> str:
        """The text without its ``A:`` prefix, for display beside the key."""
        match = LABEL.match(self.text)
        return (
            self.text[match.end() :] if match and match.group(1).upper() == self.key else self.text
        )


def _option_texts(fields: dict[str, Any]) -> list[str]:
    exact = fields.get("option_list")
    if isinstance(exact, list) and all(isinstance(item, str) for item in exact):
        return exact
    raw = fields.get("options")
    if isinstance(raw, list):
        return [str(item) for item in raw]
    if not isinstance(raw, str):
        return []
    try:
        decoded = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        decoded = None
    if isinstance(decoded, list):
        return [str(item) for item in decoded]
    text = raw.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return _OPTION_SPLIT.split(text)


def parse_options(fields: dict[str, Any]) -> list[Option]:
    """Options as any writer stores them: a list, a JSON-array string or ``A: x, B: y``."""
    texts = [text.strip() for text in _option_texts(fields) if text and text.strip()]
    return [Option(option_key(index), text) for index, text in enumerate(texts[:26])]


def normalise_options(given: list[str]) -> list[str]:
    """Check the asker's options and label them ``A: …``, ``B: …`` in order."""
    texts = [text.strip() for text in given]
    if len(texts) < 2:
        raise InvalidInput("a question needs at least 2 options (--option 'A: …' --option 'B: …')")
    if len(texts) > MAX_OPTIONS:
        raise InvalidInput(f"a question may have at most {MAX_OPTIONS} options")
    labelled = []
    for index, text in enumerate(texts):
        key = option_key(index)
        match = LABEL.match(text)
        body = text[match.end() :].strip() if match else text
        if match and match.group(1).upper() != key:
            raise InvalidInput(
                f"option {index + 1} is labelled {match.group(1)!r}; label them A, B, C… in order"
            )
        if not body:
            raise InvalidInput(f"option {key} is empty")
        if len(body) > MAX_TEXT:
            raise InvalidInput(f"option {key} is longer than {MAX_TEXT} characters")
        labelled.append(f"{key}: {body}")
    return labelled


# -- records ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    path: Path
    task_id: str
    seq: int
    answer: str = ""
    decided_by: str = ""
    option: str | None = None
    answered_at: str | None = None
    error: str | None = None

    def relay_block(self) -> str:
        """What the orchestrator sends back to the worker (seed 001)."""
        # One line per field, whatever the answer text holds: it cannot add a field.
        answer = " ".join(self.answer.splitlines())
        return f"ANSWER: {answer}\nTASK: {self.task_id}\nDECIDED_BY: {self.decided_by}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "task_id": self.task_id,
            "seq": self.seq,
            "answer": self.answer,
            "decided_by": self.decided_by,
            "option": self.option,
            "answered_at": self.answered_at,
        }
        if self.error:
            data["error"] = self.error
        return data


@dataclass
class Question:
    signal_dir: str
    task_id: str
    seq: int
    path: Path
    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    answer: Answer | None = None
    asked: datetime | None = None
    deadline: datetime | None = None

    @property
    def id(self) -> str:
        return f"{self.signal_dir}/{self.task_id}.q{self.seq}"

    @property
    def answer_path(self) -> Path:
        return self.path.with_name(f"{self.task_id}.q{self.seq}.{ANSWER}")

    @property
    def text(self) -> str:
        return str(self.fields.get("question") or "")

    @property
    def first_line(self) -> str:
        lines = self.text.strip().splitlines()
        return lines[0] if lines else ""

    @property
    def context(self) -> str:
        return str(self.fields.get("context") or "")

    @property
    def urgency(self) -> str:
        value = self.fields.get("urgency")
        return NON_BLOCKING if value == NON_BLOCKING else BLOCKING

    @property
    def blocking(self) -> bool:
        return self.urgency == BLOCKING

    @property
    def worker(self) -> str | None:
        value = self.fields.get("worker_name")
        return value if isinstance(value, str) and value else None

    @property
    def options(self) -> list[Option]:
        return parse_options(self.fields)

    @property
    def discarded(self) -> str | None:
        value = self.fields.get("discarded")
        return str(value) if value else None

    @property
    def state(self) -> str:
        if self.answer is not None:
            return ANSWERED
        if self.error:
            return UNREADABLE
        return DISCARDED if self.discarded else PENDING

    @property
    def open(self) -> bool:
        """Waiting for an answer (an unreadable file without an answer counts)."""
        return self.state in (PENDING, UNREADABLE)

    def age(self, now: datetime) -> float | None:
        return None if self.asked is None else (now - self.asked).total_seconds()

    def seconds_left(self, now: datetime) -> float | None:
        """Seconds until the auto-answer; ``None`` when it waits indefinitely."""
        return None if self.deadline is None else (self.deadline - now).total_seconds()

    def option(self, choice: str) -> Option:
        """An option by key (``A``) or number (``1``)."""
        options = self.options
        wanted = choice.strip().upper()
        if wanted.isdigit() and 1 <= int(wanted) <= len(options):
            return options[int(wanted) - 1]
        for option in options:
            if option.key == wanted:
                return option
        keys = ", ".join(o.key for o in options) or "none"
        raise InvalidInput(f"{self.id} has no option {choice!r} (options: {keys})")

    def sort_key(self) -> tuple[int, float, str, int]:
        rank = {PENDING: 0 if self.blocking else 1, UNREADABLE: 2}.get(self.state, 3)
        asked = self.asked.timestamp() if self.asked else 0.0
        return (rank, asked, self.signal_dir, self.seq)

    def to_json(self, now: datetime) -> dict[str, Any]:
        left = self.seconds_left(now)
        age = self.age(now)
        data: dict[str, Any] = {
            "id": self.id,
            "state": self.state,
            "task_id": self.task_id,
            "seq": self.seq,
            "signal_dir": self.signal_dir,
            "age_seconds": None if age is None else round(age, 1),
            "seconds_left": None if left is None or not self.open else round(max(0.0, left), 1),
            "answer": self.answer.to_json() if self.answer else None,
        }
        if self.error:
            data["error"] = self.error
        else:
            data.update(
                question=self.text,
                urgency=self.urgency,
                worker_name=self.worker,
                options=[o.text for o in self.options],
                context=self.context,
                asked_at=self.fields.get("asked_at"),
                discarded=self.discarded,
            )
        return data


def validate_timeout(seconds: float) -> float:
    if not 0 < seconds <= MAX_TIMEOUT_SECONDS:  # also false for nan
        raise InvalidInput(
            f"--timeout must be more than 0 and at most {MAX_TIMEOUT_SECONDS} seconds"
        )
    return seconds


@dataclass(frozen=True)
class AskRequest:
    task_id: str
    question: str
    options: list[str]
    urgency: str = BLOCKING
    context: str = ""
    worker: str | None = None
    team: str | None = None
    timeout_seconds: float | None = None
    signal_dir: str | None = None

    def validated(self) -> AskRequest:
        """Everything checked before any path is built or file written (SEC-002)."""
        validate_id(self.task_id, "task id")
        if self.worker is not None:
            validate_id(self.worker, "worker name")
        if self.team is not None:
            validate_id(self.team, "team")
        question = self.question.strip()
        if not question:
            raise InvalidInput("the question is empty: say what decision is needed")
        for name, value in (("question", question), ("context", self.context)):
            if len(value) > MAX_TEXT:
                raise InvalidInput(f"the {name} is longer than {MAX_TEXT} characters")
        if self.urgency not in URGENCIES:
            raise InvalidInput(f"urgency {self.urgency!r}: use {' or '.join(URGENCIES)}")
        if self.timeout_seconds is not None:
            validate_timeout(self.timeout_seconds)
        return AskRequest(
            task_id=self.task_id,
            question=question,
            options=normalise_options(self.options),
            urgency=self.urgency,
            context=self.context.strip(),
            worker=self.worker,
            team=self.team,
            timeout_seconds=self.timeout_seconds,
            signal_dir=self.signal_dir,
        )


@dataclass(frozen=True)
class TaskCheck:
    """ASYNC-001: surface the question, or discard it with ``reason``."""

    surface: bool
    reason: str | None = None
    warning: str | None = None


class AlreadyAnswered(RuneError):
    def __init__(self, question_id: str, answer: Answer) -> None:
        who = answer.decided_by or "an unreadable answer"
        detail = (
            f": {answer.answer}" if answer.answer else f" ({answer.error})" if answer.error else ""
        )
        super().__init__(f"{question_id} is already answered by {who}{detail}")
        self.answer = answer


class RelayDisabled(RuneError):
    """``question_relay.enabled`` is false: nothing is surfaced (the worker decides)."""

    exit_code = 3


def parse_question_id(question_id: str) -> tuple[str, str, int]:
    match = QUESTION_ID.fullmatch(question_id.strip())
    if not match:
        raise InvalidInput(
            f"question id {question_id!r}: expected SIGNAL_DIR/TASK.qSEQ "
            "(as `runeconsole question list` shows)"
        )
    return match.group(1), match.group(2), int(match.group(3))


# -- the service -----------------------------------------------------------------------------


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

    @property
    def base(self) -> Path:
        return self.paths.question_signals

    # -- reading -------------------------------------------------------------------------

    def signal_dirs(self) -> list[Path]:
        return id_subdirectories(self.base)

    def read_answer(self, path: Path, task_id: str, seq: int) -> Answer:
        try:
            body = read_json_object(path)
        except UnreadableFile as exc:
            return Answer(path, task_id, seq, error=exc.reason)
        option = body.get("option")
        return Answer(
            path,
            task_id,
            seq,
            answer=str(body.get("answer") or ""),
            decided_by=str(body.get("decided_by") or ""),
            option=option if isinstance(option, str) else None,
            answered_at=body.get("answered_at")
            if isinstance(body.get("answered_at"), str)
            else None,
        )

    def answer_for(self, question: Question) -> Answer | None:
        path = question.answer_path
        if not path.exists():
            return None
        return self.read_answer(path, question.task_id, question.seq)

    def read_question(self, path: Path) -> Question:
        """One ``.question`` file and its answer, if any. Never raises for bad content."""
        match = FILE_NAME.fullmatch(path.name)
        if match is None or match.group(3) != QUESTION:
            raise InvalidInput(f"{path.name} is not a question file")
        question = Question(path.parent.name, match.group(1), int(match.group(2)), path)
        try:
            question.fields = read_json_object(path)
        except UnreadableFile as exc:
            question.error = exc.reason
        question.answer = self.answer_for(question)
        question.asked = parse_iso(question.fields.get("asked_at")) or _mtime(path)
        question.deadline = self._deadline(question)
        return question

    def _deadline(self, question: Question) -> datetime | None:
        if question.error:
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
        try:
            names = [e.name for e in os.scandir(directory) if e.name.endswith(f".{QUESTION}")]
        except OSError:
            return []
        return [directory / n for n in names if FILE_NAME.fullmatch(n)]

    def list(self, *, include_closed: bool = False) -> list[Question]:
        """Open questions first (blocking, then non-blocking, oldest first)."""
        found = [
            self.read_question(path)
            for directory in self.signal_dirs()
            for path in self.question_files(directory)
            # an answered question is closed: skip reading it unless asked to
            if include_closed or not path.with_suffix(f".{ANSWER}").exists()
        ]
        shown = found if include_closed else [q for q in found if q.open]
        return sorted(shown, key=Question.sort_key)

    def get(self, question_id: str) -> Question:
        signal_dir, task_id, seq = parse_question_id(question_id)
        path = self.base / signal_dir / f"{task_id}.q{seq}.{QUESTION}"
        if not path.exists():
            raise RuneError(f"no question {question_id} under {self.base}")
        return self.read_question(path)

    # -- asking ----------------------------------------------------------------------------

    def resolve_signal_dir(self, given: str | None) -> Path:
        """``--signal-dir`` (a name or a path under ``tmp/.rune-signals``), else the newest one."""
        if given:
            name = Path(given).name
            validate_id(name, "signal directory name")
            # a path (relative to the project root, as Rune writes it) must end up in ``base``
            if len(Path(given).parts) > 1 and contained(self.root, given).parent != contained(
                self.root, self.base
            ):
                raise InvalidInput(f"--signal-dir {given} must be directly under {self.base}")
            return self.base / name
        existing = [d for d in self.signal_dirs() if d.name.startswith(SIGNAL_DIR_PREFIX)]
        if existing:
            return max(existing, key=lambda d: (d.stat().st_mtime, d.name))
        return self.base / f"{SIGNAL_DIR_PREFIX}{compact_stamp(self.clock.now())}"

    def task_team(self, team: str | None, directory: Path) -> str | None:
        """The team whose task file speaks for this question: the one given, else the team
        named like the signal directory, else the only team there is. Claude Code numbers
        tasks 1, 2, 3… in every team, so another team's ``3.json`` says nothing."""
        if team:
            return team
        teams = self.tasks.teams()
        if directory.name in teams:
            return directory.name
        return teams[0] if len(teams) == 1 else None

    def task_check(self, task_id: str, team: str | None, directory: Path) -> TaskCheck:
        chosen = self.task_team(team, directory)
        if chosen is None:
            others = self.tasks.find(task_id)
            if not others:
                return TaskCheck(True)
            teams = ", ".join(sorted(t.team for t in others))
            return TaskCheck(
                True,
                warning=f"task {task_id} is in several Claude Code teams ({teams}); "
                "pass --team to check its status; surfacing it",
            )
        found: list[TaskFile] = self.tasks.find(task_id, chosen)
        if not found:
            return TaskCheck(True)
        readable = [t for t in found if t.error is None]
        if any(t.in_progress for t in readable):
            return TaskCheck(True)
        if not readable:
            problems = "; ".join(f"{t.path}: {t.error}" for t in found)
            return TaskCheck(True, warning=f"task status unknown ({problems}); surfacing anyway")
        statuses = ", ".join(sorted({str(t.status) for t in readable}))
        where = ", ".join(str(t.path) for t in readable)
        return TaskCheck(
            False, reason=f"task {task_id} is no longer in_progress (status: {statuses}; {where})"
        )

    def ask(self, request: AskRequest) -> tuple[Question, TaskCheck]:
        """Persist a question; answered at once if over the cap, discarded if the task ended."""
        request = request.validated()
        if not self.settings.enabled:
            raise RelayDisabled(
                f"question relay is disabled (question_relay.enabled in {self.root / TALISMAN}): "
                "nothing was surfaced; the worker decides on its own"
            )
        # Choosing (and creating) the directory is one step, or two first questions a
        # second apart could each start a signal directory of their own.
        with locked(self.paths.lock_for("questions-signal-dir"), what="the signal directories"):
            directory = self.resolve_signal_dir(request.signal_dir)
            _make_private_dir(self.paths.inside(directory))
        check = self.task_check(request.task_id, request.team, directory)
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
        }
        # Written where known (DESIGN.md), not as nulls.
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

    def _task_questions(self, directory: Path, task_id: str) -> list[Question]:
        paths = self.question_files(directory)
        return [self.read_question(p) for p in paths if p.name.startswith(f"{task_id}.q")]

    def _asked_before(self, directory: Path, task_id: str, worker: str | None) -> int:
        """Questions this worker already asked on this task, not counting capped ones (SEC-006)."""
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

    def auto_answer(self, question: Question) -> Answer:
        """Option A on timeout (seed 001); ``AlreadyAnswered`` if someone was faster."""
        options = question.options
        text, key = (options[0].text, options[0].key) if options else (NO_OPTIONS_ANSWER, None)
        return self._write_answer(question, text, AUTO_TIMEOUT, key)

    def settle_due(self, questions: list[Question]) -> list[Answer]:
        """Auto-answer those past their deadline; returns the answers that now stand."""
        now = self.clock.now()
        settled = []
        for question in questions:
            left = question.seconds_left(now)
            if question.state != PENDING or left is None or left > 0:
                continue
            try:
                settled.append(self.auto_answer(question))
            except AlreadyAnswered as exc:
                settled.append(exc.answer)
        return settled

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
    """SEC-005: the signal directory is created 0700 (an existing one is left as it is)."""
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(directory, DIR_MODE)
    except FileExistsError:
        if not directory.is_dir():
            raise RuneError(f"{directory} exists and is not a directory") from None
    except OSError as exc:
        raise _cannot_write(directory, exc) from None


def _cannot_write(path: Path, exc: OSError) -> RuneError:
    return RuneError(f"cannot write {path}: {exc.strerror or exc}")
