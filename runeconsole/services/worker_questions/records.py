"""Questions and answers as read from their files, what an asker asks, and the outcomes a
caller is told about (already answered, relay disabled, the task's status)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.timeutil import format_age, iso_exact, parse_iso
from runeconsole.core.validate import validate_id
from runeconsole.services.worker_questions.locations import ANSWER, BACKGROUND, SIGNALS, Where
from runeconsole.services.worker_questions.options import (
    MAX_TEXT,
    Option,
    normalise_options,
    parse_options,
)
from runeconsole.services.worker_questions.settings import validate_timeout

USER, AUTO_TIMEOUT, CAP_EXCEEDED = "user", "auto-timeout", "cap-exceeded"
NO_OPTIONS_ANSWER = "proceed with best judgment"  # the timeout's answer when there are none
DECIDERS = (USER, AUTO_TIMEOUT, CAP_EXCEEDED)
BLOCKING, NON_BLOCKING = "blocking", "non-blocking"
URGENCIES = (BLOCKING, NON_BLOCKING)
PENDING, ANSWERED, DISCARDED, UNREADABLE = "pending", "answered", "discarded", "unreadable"
# Who asked: runeconsole marks the questions it asks (``ask``); its files before the mark
# all carry ``auto_answer_at``, which no other writer sets.
ASKED_BY, RUNECONSOLE = "asked_by", "runeconsole"
ANOTHER_TOOL = "another tool"


def format_left(seconds: float) -> str:
    """Time left before the auto-answer, rounded up (``0.2`` s left is ``1s``, not ``0s``)."""
    return format_age(math.ceil(seconds))


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

    @classmethod
    def from_body(cls, path: Path, task_id: str, seq: int, body: dict[str, Any]) -> Answer:
        """An answer file's object (as read, or as archived)."""
        option, answered_at = body.get("option"), body.get("answered_at")
        return cls(
            path,
            task_id,
            seq,
            answer=str(body.get("answer") or ""),
            decided_by=str(body.get("decided_by") or ""),
            option=option if isinstance(option, str) else None,
            answered_at=answered_at if isinstance(answered_at, str) else None,
        )

    def relay_block(self) -> str:
        """What the orchestrator sends back to the worker (``ANSWER``, ``TASK``,
        ``DECIDED_BY``)."""
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

    @classmethod
    def from_json(cls, data: dict[str, Any], path: Path) -> Answer:
        """As ``to_json`` wrote it (another source's stream); a field of another shape reads
        as missing."""
        seq = data.get("seq")
        option = data.get("option")
        return cls(
            path,
            _text(data.get("task_id")),
            seq if isinstance(seq, int) and not isinstance(seq, bool) else 1,
            _text(data.get("answer")),
            _text(data.get("decided_by")),
            option if isinstance(option, str) else None,
            _text(data.get("answered_at")) or None,
            _text(data.get("error")) or None,
        )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


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
    layout: str = SIGNALS  # or BACKGROUND: a background worker's own file

    @property
    def id(self) -> str:
        return Where(self.signal_dir, self.task_id, self.seq, self.layout).question_id

    @property
    def answer_path(self) -> Path:
        return self.path.with_suffix(f".{ANSWER}")

    @property
    def asked_here(self) -> bool:
        """Asked through runeconsole, which then keeps the timeout. A question another tool
        asked (Rune's orchestrator, a background worker) is that tool's to time out."""
        return self.fields.get(ASKED_BY) == RUNECONSOLE or "auto_answer_at" in self.fields

    @property
    def asker(self) -> str:
        return RUNECONSOLE if self.asked_here else ANOTHER_TOOL

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
    def timeout_answer(self) -> tuple[Option | None, str]:
        """What the timeout answers, where runeconsole keeps it: option A (its text), or
        for a question without options a word to go on."""
        options = self.options
        return (options[0], options[0].text) if options else (None, NO_OPTIONS_ANSWER)

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

    @property
    def multi_select(self) -> bool:
        """Several options may be chosen together (Claude Code's AskUserQuestion)."""
        return self.fields.get("multi_select") is True

    def sort_key(self) -> tuple[int, float, str, int]:
        rank = {PENDING: 0 if self.blocking else 1, UNREADABLE: 2}.get(self.state, 3)
        asked = self.asked.timestamp() if self.asked else 0.0
        return (rank, asked, self.signal_dir, self.seq)

    def relay_json(self, answer: Answer | None) -> dict[str, Any]:
        """What ``ask`` and ``wait`` print with ``--json``: the relay block's fields (and
        why the question was discarded, when it was)."""
        data: dict[str, Any] = {
            "id": self.id,
            "task_id": self.task_id,
            "seq": self.seq,
            "answer": answer.answer if answer else None,
            "decided_by": answer.decided_by if answer else None,
        }
        if self.discarded:
            data["discarded"] = self.discarded
        return data

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
            "asked_by": None if self.error else self.asker,
            "layout": self.layout,
            "asked": iso_exact(self.asked) if self.asked else None,
            "deadline": iso_exact(self.deadline) if self.deadline else None,
            "path": str(self.path),
            "fields": self.fields,  # the file as read: a reader elsewhere sees what we see
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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Question:
        """A question as ``to_json`` wrote it (a row of another source's stream): its file's
        fields, its answer and its moments as that source read them. A row from an older
        source, without the file's fields, is read from the row's own; anything of another
        shape reads as missing, never raises."""
        seq = data.get("seq")
        layout = data.get("layout")
        fields = data.get("fields")
        if not isinstance(fields, dict):
            fields = {name: data[name] for name in ROW_FIELDS if data.get(name) is not None}
        question = cls(
            _text(data.get("signal_dir")),
            _text(data.get("task_id")),
            seq if isinstance(seq, int) and not isinstance(seq, bool) else 1,
            Path(_text(data.get("path")) or _text(data.get("id")) or "?"),
            dict(fields),
            _text(data.get("error")) or None,
            layout=layout if layout in (SIGNALS, BACKGROUND) else SIGNALS,
        )
        answer = data.get("answer")
        if isinstance(answer, dict):
            question.answer = Answer.from_json(answer, question.answer_path)
        question.asked = parse_iso(data.get("asked")) or parse_iso(fields.get("asked_at"))
        question.deadline = parse_iso(data.get("deadline"))
        return question


# What a row says of its question file, when it does not carry the file's fields.
ROW_FIELDS = (
    *("question", "urgency", "worker_name", "options", "context", "asked_at"),
    *("discarded", ASKED_BY),
)


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
        """Everything checked before any path is built or file written."""
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
    """Surface the question (its task is still in progress), or discard it with ``reason``."""

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

    def __init__(self, message: str, task_id: str) -> None:
        super().__init__(message)
        self.task_id = task_id

    def to_json(self) -> dict[str, Any]:
        """What ``ask --json`` prints, so a script reading stdout learns it too."""
        return {"task_id": self.task_id, "answer": None, "decided_by": None, "disabled": True}


@dataclass(frozen=True)
class OpenCount:
    """The open questions at a glance (a tmux status line): how many, how many block."""

    total: int
    blocking: int

    def line(self) -> str:
        """``⚡2 questions``; empty when none is open."""
        return f"⚡{self.total} question{'s' if self.total != 1 else ''}" if self.total else ""

    def to_json(self) -> dict[str, Any]:
        return {"questions": self.total, "blocking": self.blocking}
