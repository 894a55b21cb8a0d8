"""Claude Code's AskUserQuestion calls as worker-question files (the format of
docs/protocols.md#worker-questions).

One call becomes one question file a question, in ``tmp/.rune-signals/claude-code/``:
``ask-{tool_use_id}.q{n}.question`` (task id ``ask-{tool_use_id}``, sequence ``n``),
written complete in one step and never replaced while open. Beside a worker question's fields
(``task_id``, ``question``, ``urgency``, ``options``, ``context``, ``seq``) each carries
the call's own: ``header``, ``option_list`` (the labels), ``option_descriptions``,
``multi_select``, ``call_size``, ``expires_at``, the agent (``worker_name``), the
``session_id``, ``tool_use_id`` and the pid of the hook waiting for it (``hook_pid``).
``auto_answer_at`` is null: nothing ever answers for the operator; a call nobody answers
in time is marked ``expired`` (with ``discarded`` saying why), never answered.

Answers are ordinary ``.answer`` files: an option key (``B``), several keys for a
multi-select question (``A,C``; the answer text is the labels joined by ", "), or a free
text. A pending question of another asker (a Rune orchestrator) with the same text is
the call's *twin*: it is named in ``twin`` and one answer settles both.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from runeconsole.core.files import (
    atomic_write_json,
    create_exclusive,
    dump_json,
    parse_json_object,
    read_bytes,
)
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import ID_PATTERN

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

SOURCE = "claude-code"
QUESTION, ANSWER = ".question", ".answer"
FILE_MODE, DIR_MODE = 0o600, 0o700
MAX_QUESTIONS, MAX_OPTIONS, MAX_TEXT = 4, 9, 8000


def option_key(index: int) -> str:
    return chr(ord("A") + index)


def same_text(one: object, other: object) -> bool:
    """Two questions ask the same thing (spacing and case aside)."""
    if not isinstance(one, str) or not isinstance(other, str):
        return False
    return " ".join(one.split()).casefold() == " ".join(other.split()).casefold()


def is_relay(fields: dict[str, Any]) -> bool:
    return fields.get("source") == SOURCE


def task_id_for(tool_use_id: str | None, session_id: str | None, now: datetime) -> str:
    """``ask-{tool_use_id}`` (characters outside ``[A-Za-z0-9_-]`` dropped)."""
    raw = tool_use_id or f"{session_id or 'session'}-{now:%Y%m%dT%H%M%S%fZ}"
    cleaned = "".join(c for c in raw if c.isascii() and (c.isalnum() or c in "_-"))[:100]
    return f"ask-{cleaned or 'call'}"


class QuestionSpec:
    """One question of a call, as checked from the tool input."""

    __slots__ = ("descriptions", "header", "labels", "multi_select", "text")

    def __init__(self, raw: object) -> None:
        if not isinstance(raw, dict):
            raise ValueError("a question is not an object")
        text = raw.get("question")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
            raise ValueError("a question has no text (or too much)")
        options = raw.get("options")
        if not isinstance(options, list) or not 1 <= len(options) <= MAX_OPTIONS:
            raise ValueError(f"a question needs 1 to {MAX_OPTIONS} options")
        self.labels: list[str] = []
        self.descriptions: list[str] = []
        for option in options:
            label = option.get("label") if isinstance(option, dict) else None
            if not isinstance(label, str) or not label.strip() or len(label) > MAX_TEXT:
                raise ValueError("an option has no label")
            description = option.get("description")
            self.labels.append(label)
            self.descriptions.append(description if isinstance(description, str) else "")
        header = raw.get("header")
        self.text = text
        self.header = header if isinstance(header, str) else ""
        self.multi_select = raw.get("multiSelect") is True


def parse_call(tool_input: dict[str, Any]) -> list[QuestionSpec]:
    """The call's questions (``ValueError`` saying what is wrong with them)."""
    questions = tool_input.get("questions")
    if not isinstance(questions, list) or not 1 <= len(questions) <= MAX_QUESTIONS:
        raise ValueError(f"AskUserQuestion needs 1 to {MAX_QUESTIONS} questions")
    return [QuestionSpec(raw) for raw in questions]


class RelayQuestion:
    """A question file of a call (ours), or the pending twin it stands for."""

    __slots__ = ("path", "spec", "twin")

    def __init__(self, path: Path, spec: QuestionSpec, twin: Path | None = None) -> None:
        self.path, self.spec, self.twin = path, spec, twin

    @property
    def answer_path(self) -> Path:
        return self.path.with_name(self.path.name[: -len(QUESTION)] + ANSWER)

    @property
    def twin_answer_path(self) -> Path | None:
        if self.twin is None:
            return None
        return self.twin.with_name(self.twin.name[: -len(QUESTION)] + ANSWER)


def question_fields(
    spec: QuestionSpec, seq: int, size: int, *, task_id: str, key: str, now: datetime, **call: Any
) -> dict[str, Any]:
    keyed = [f"{option_key(i)}: {label}" for i, label in enumerate(spec.labels)]
    where = f" (question {seq} of {size})" if size > 1 else ""
    return {
        "task_id": task_id,
        "question": spec.text,
        "urgency": "blocking",
        "options": ", ".join(keyed),
        "context": f"Asked by {key} through Claude Code's AskUserQuestion{where}",
        "seq": seq,
        "asked_at": iso_z(now),
        "auto_answer_at": None,
        "worker_name": key,
        "option_list": spec.labels,
        "option_descriptions": spec.descriptions,
        "header": spec.header,
        "multi_select": spec.multi_select,
        "call_size": size,
        "source": SOURCE,
        **{name: value for name, value in call.items() if value is not None},
    }


def ms(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_call(
    paths: ProjectPaths,
    specs: list[QuestionSpec],
    *,
    task_id: str,
    key: str,
    now: datetime,
    wait_seconds: float,
    session_id: str | None,
    tool_use_id: str | None,
) -> list[RelayQuestion]:
    """The call's question files (kept as they are if this call was written before)."""
    directory = paths.inside(paths.claude_questions)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, DIR_MODE)
    twins = pending_twins(paths, specs)
    written, created = [], []
    expires = ms(now + timedelta(seconds=wait_seconds))
    try:
        for seq, spec in enumerate(specs, start=1):
            path = directory / f"{task_id}.q{seq}{QUESTION}"
            twin = twins.get(seq)
            fields = question_fields(
                spec,
                seq,
                len(specs),
                task_id=task_id,
                key=key,
                now=now,
                expires_at=expires,
                session_id=session_id,
                tool_use_id=tool_use_id,
                hook_pid=os.getpid(),
                twin=twin_id(twin) if twin else None,
            )
            with contextlib.suppress(FileExistsError):  # the same call again: it stands
                create_exclusive(path, dump_json(fields), FILE_MODE)
                created.append(path)
            written.append(RelayQuestion(path, spec, twin))
    except OSError:  # a full disk: a call is relayed whole or not at all
        for path in created:
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    return written


def twin_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name[: -len(QUESTION)]}"


def pending_twins(paths: ProjectPaths, specs: list[QuestionSpec]) -> dict[int, Path]:
    """For each question (by sequence), a pending question elsewhere with the same text."""
    found: dict[int, Path] = {}
    base = paths.question_signals
    try:
        directories = [e for e in os.scandir(base) if e.is_dir() and ID_PATTERN.fullmatch(e.name)]
    except OSError:
        return found
    for directory in directories:
        if directory.name == paths.claude_questions.name:
            continue
        try:
            names = set(os.listdir(directory.path))
        except OSError:
            continue
        for name in sorted(names):
            stem = name[: -len(QUESTION)]
            if not name.endswith(QUESTION) or name.startswith(".") or stem + ANSWER in names:
                continue
            fields = read_fields(Path(directory.path) / name)
            if fields is None or fields.get("discarded"):
                continue
            for seq, spec in enumerate(specs, start=1):
                if seq not in found and same_text(fields.get("question"), spec.text):
                    found[seq] = Path(directory.path) / name
    return found


def read_fields(path: Path) -> dict[str, Any] | None:
    """A question or answer file's object, ``None`` while missing or unreadable."""
    try:
        return parse_json_object(path, read_bytes(path, limit=1024 * 1024, follow_symlinks=False))
    except Exception:
        return None


def mark_expired(path: Path, reason: str, now: datetime) -> None:
    """Record that nobody answered in time: the question file stays, marked, unanswered.
    (Callers hold the call's lock and have checked that there is no answer.)"""
    fields = read_fields(path)
    if fields is None or fields.get("discarded"):
        return
    fields.update(discarded=reason, expired=True, expired_at=iso_z(now))
    atomic_write_json(path, fields, FILE_MODE)
