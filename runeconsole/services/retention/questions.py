"""Questions: answered and discarded (expired) ones leave the signal directories for the
archive with their answers; a question still waiting never does.

Both kinds of signal directory are pruned: the relayed AskUserQuestion calls
(``claude-code/``, each call's questions under its lock ``claude-ask-{task}``, which goes
once the call's last question has) and Rune's ``rune-work-*`` (under the directory's
``questions-{dir}`` lock); an old ``rune-work-*`` left empty is removed, except the newest,
where ``question ask`` writes next. A question's age is that of its answer (or of the
question file when it was discarded). Background workers' own question files
(``tmp/work/{run}/questions/``) stay with their run's context files.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runeconsole.core.errors import InvalidInput, UnreadableFile
from runeconsole.core.files import read_json_object
from runeconsole.core.locks import flocked, remove_lock
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.services.claude.questions import answers, relay
from runeconsole.services.retention.archive import Archive, month_of, unique
from runeconsole.services.retention.pruner import Job, Pruner, Record
from runeconsole.services.retention.report import KindReport
from runeconsole.services.worker_questions import (
    ANSWER,
    FILE_NAME,
    QUESTION,
    Answer,
    Question,
    Questions,
)
from runeconsole.services.worker_questions.locations import QUESTION_ID

KIND = "questions"
LOCK_SECONDS = 5.0


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.lstat().st_mtime, UTC)
    except OSError:
        return None


class QuestionPruner(Pruner[Path]):
    kind = KIND

    def __init__(self, job: Job) -> None:
        super().__init__(job)
        self.questions = Questions(job.project)
        self.paths = job.project.paths
        self.emptied: set[Path] = set()

    def closed(self, report: KindReport) -> list[tuple[datetime, Path]]:
        closed: list[tuple[datetime, Path]] = []
        for directory in self.questions.signal_dirs():
            closed += self._closed_in(directory, report)
        return closed

    def prepare(self, report: KindReport) -> None:
        try:
            answers.expire_orphans(self.questions, self.questions.list(), self.job.now)
        except Exception as exc:  # a busy lock: the next prune tries again
            report.notes.append(f"questions of stopped hooks not closed: {exc}")

    def _closed_in(self, directory: Path, report: KindReport) -> list[tuple[datetime, Path]]:
        try:
            names = set(os.listdir(directory))
        except OSError:
            return []
        closed = []
        for name in names:
            if not name.endswith(f".{QUESTION}") or not FILE_NAME.fullmatch(name):
                continue
            path = directory / name
            answer = name[: -len(QUESTION)] + ANSWER
            if answer in names:
                when = _mtime(directory / answer)
            elif self.questions.read_question(path).discarded:
                when = _mtime(path)
            else:
                report.pending += 1
                continue
            closed.append((when or self.job.now, path))
        return closed

    def record(self, path: Path) -> Record:
        question = self.questions.read_question(path)
        answer = None
        with contextlib.suppress(UnreadableFile):
            answer = read_json_object(question.answer_path)
        when = _mtime(question.answer_path) or _mtime(path) or self.job.now
        record: dict[str, Any] = {
            "id": question.id,
            "at": iso_z(when),
            "question": question.fields,
            "answer": answer,
        }
        if question.error:
            record["error"] = question.error
        return question.id, month_of(when), record

    def _lock(self, directory: Path, task_id: str) -> str:
        if directory == self.paths.claude_questions:
            return os.fspath(self.paths.lock_for(relay.lock_name(task_id)))
        return os.fspath(self.paths.lock_for(f"questions-{directory.name}"))

    def remove(self, question_ids: list[str]) -> None:
        for question_id in question_ids:
            self._remove(question_id)

    def _remove(self, question_id: str) -> None:
        """The question and its answer gone, the question first (a lone answer is never
        listed; a lone question would look open)."""
        try:
            path = self.questions.locations.path_of(question_id)
            where = self.questions.locations.where(path)
        except InvalidInput:
            return
        directory = path.parent
        with flocked(self._lock(directory, where.task_id), LOCK_SECONDS):
            for gone in (path, path.with_suffix(f".{ANSWER}")):
                with contextlib.suppress(FileNotFoundError):
                    gone.unlink()
        if directory == self.paths.claude_questions:
            self._drop_call_lock(directory, where.task_id)
        self.emptied.add(directory)

    def _drop_call_lock(self, directory: Path, task_id: str) -> None:
        """A relayed call's lock, once none of its questions is left."""
        prefix = f"{task_id}.q"
        try:
            left = any(name.startswith(prefix) for name in os.listdir(directory))
        except OSError:
            return
        if not left:
            remove_lock(os.fspath(self.paths.lock_for(relay.lock_name(task_id))), LOCK_SECONDS)

    def finish(self, report: KindReport) -> None:
        """Old ``rune-work-*`` directories left empty (never the newest, nor ours)."""
        dirs = [d for d in self.questions.signal_dirs() if d != self.paths.claude_questions]
        newest = max(dirs, key=lambda d: d.name, default=None)
        for directory in self.emptied:
            if directory == newest or directory == self.paths.claude_questions:
                continue
            lock = os.fspath(self.paths.lock_for("questions-signal-dir"))
            with flocked(lock, LOCK_SECONDS), contextlib.suppress(OSError):
                os.rmdir(directory)  # refused while anything is in it
                report.notes.append(f"removed the empty {directory.name}")
                remove_lock(os.fspath(self.paths.lock_for(f"questions-{directory.name}")))


def from_record(record: dict[str, Any], where: Path) -> Question | None:
    """An archived question as ``question list --all`` shows it (``where``: its archive)."""
    place = QUESTION_ID.fullmatch(str(record.get("id")))
    if place is None:
        return None
    directory, task_id, seq = place.group(1), place.group(2), int(place.group(3))
    fields = found if isinstance(found := record.get("question"), dict) else {}
    question = Question(directory, task_id, seq, where, fields)
    error = record.get("error")
    question.error = error if isinstance(error, str) else None
    body = record.get("answer")
    if isinstance(body, dict):
        question.answer = Answer.from_body(where, task_id, seq, body)
    question.asked = parse_iso(fields.get("asked_at")) or parse_iso(record.get("at"))
    return question


def archived(archive: Archive, live_ids: set[str]) -> list[Question]:
    """Every archived question not also live."""
    files = {month: archive.month_path(KIND, month) for month in archive.months(KIND)}
    found = (
        from_record(record, files.get(str(record.get("at"))[:7], archive.kind_dir(KIND)))
        for record in unique(live_ids, archive.records(KIND))
    )
    return [question for question in found if question is not None]
