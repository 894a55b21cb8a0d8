"""Answering questions from the console and the CLI, relayed AskUserQuestion calls included.

One entry point for every answer an operator gives: an option (``A``), several options
of a multi-select question (``A``, ``C``) or a free text. A relayed question is answered
under its call's lock, after reading it again: a call that expired meanwhile (Claude
Code asked in its own dialog) refuses the answer rather than record one nobody receives.
Its twin (the same question pending from a Rune orchestrator) gets the same answer, so
one answer settles both. A relayed question whose hook is gone (the agent stopped
waiting: interrupted, killed) is marked expired by ``expire_orphans``. A relayed MCP
elicitation takes only a text that is a valid response to its form (``elicitation``).
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from runeconsole.core.crash_points import pause_point
from runeconsole.core.errors import RuneError, WriteFailed
from runeconsole.core.locks import locked
from runeconsole.core.pids import pid_alive
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.claude.questions import elicitation, relay, relay_files
from runeconsole.services.journal import journaled
from runeconsole.services.worker_questions import AlreadyAnswered, Answer, Question, Questions


class Expired(RuneError):
    """The relayed call expired before the answer: Claude Code asked in its own dialog."""


def is_relay(question: Question) -> bool:
    return relay_files.is_relay(question.fields)


def answer(
    questions: Questions,
    question: Question,
    *,
    options: list[str] | None = None,
    text: str | None = None,
) -> Answer:
    """The operator's answer to ``question`` (``AlreadyAnswered``, ``Expired`` or another
    ``RuneError`` when it cannot be given)."""
    choice = ", ".join(options) if options else repr(text)
    files = [question.answer_path]
    twin = question.fields.get("twin")
    if isinstance(twin, str):
        with contextlib.suppress(RuneError):  # no twin to settle: only the answer is written
            files.append(questions.locations.answer_path(questions.locations.path_of(twin)))
    with journaled(questions.project, "answer", f"answering {question.id} with {choice}", files):
        if not is_relay(question):
            return _write(questions, question, options, text)
        lock = questions.paths.lock_for(relay.lock_name(question.task_id))
        with locked(lock, what=f"question {question.id}"):
            fresh = questions.read_question(question.path)
            if fresh.answer is None and fresh.fields.get("expired"):
                raise Expired(f"{question.id} {fresh.discarded or 'expired'}")
            if elicitation.is_elicitation(fresh.fields):
                if options or text is None:
                    raise RuneError(f"{question.id} is a form: answer it with its fields")
                text = elicitation.checked_answer(fresh.fields, text)
            given = _write(questions, fresh, options, text)
        pause_point("answer-before-twin")
        _settle_twin(questions, fresh, given)
        return given


def _write(
    questions: Questions, question: Question, options: list[str] | None, text: str | None
) -> Answer:
    if text is not None:
        if options:
            raise RuneError("answer with options or a text, not both")
        return questions.answer_question(question, text=text)
    if not options:
        raise RuneError("answer with an option or a text")
    if len(options) > 1 or question.multi_select:
        return questions.answer_choices(question, options)
    return questions.answer_question(question, option=options[0])


def _settle_twin(questions: Questions, question: Question, given: Answer) -> None:
    """The pending twin gets the option whose text is the answer's, else the answer's text."""
    twin_id = question.fields.get("twin")
    if not isinstance(twin_id, str):
        return
    try:
        twin = questions.get(twin_id)  # the id is checked before any path is built
    except RuneError:
        return  # gone, or not a question id: nothing to settle
    if twin.answer is not None or twin.discarded:
        return
    matching = [o for o in twin.options if relay_files.same_text(o.label, given.answer)]
    try:
        if matching:
            questions.answer_question(twin, option=matching[0].key)
        else:
            questions.answer_question(twin, text=given.answer)
    except AlreadyAnswered:
        pass  # its asker decided at the same moment: both answers stand where they are
    except WriteFailed as exc:  # a full disk between the two answers: say which stands
        raise RuneError(
            f"{question.id} is answered ({given.answer}), but not its twin {twin.id}: "
            f"{exc.message}; then answer {twin.id}"
        ) from None


def expires_in(question: Question, now: datetime) -> float | None:
    """Seconds until a relayed call expires (``None`` for any other question)."""
    moment = parse_iso(question.fields.get("expires_at")) if is_relay(question) else None
    return None if moment is None else (moment - now).total_seconds()


def hidden_twins(open_questions: list[Question]) -> set[str]:
    """Ids of pending questions an open relayed question stands for (shown once, as it)."""
    return {
        str(q.fields["twin"])
        for q in open_questions
        if is_relay(q) and isinstance(q.fields.get("twin"), str)
    }


def call_of(question: Question, open_questions: list[Question]) -> list[Question]:
    """The questions asked together with ``question`` (one AskUserQuestion call), in order;
    just ``question`` for any other."""
    if not is_relay(question):
        return [question]
    same = [
        q
        for q in open_questions
        if is_relay(q) and q.signal_dir == question.signal_dir and q.task_id == question.task_id
    ]
    if all(q.id != question.id for q in same):
        same.append(question)
    return sorted(same, key=lambda q: q.seq)


def expire_orphans(
    questions: Questions, open_questions: list[Question], now: datetime
) -> list[str]:
    """Relayed questions whose hook process is gone are marked expired (nobody would get
    the answer); returns their ids."""
    expired = []
    for question in open_questions:
        pid = question.fields.get("hook_pid")
        if not is_relay(question) or question.answer is not None or question.discarded:
            continue
        if not isinstance(pid, int) or pid_alive(pid):
            continue
        lock = questions.paths.lock_for(relay.lock_name(question.task_id))
        with locked(lock, what=f"question {question.id}"):
            fresh = questions.read_question(question.path)
            if fresh.answer is None and not fresh.discarded:
                reason = "expired: the agent stopped waiting for the answer (its hook is gone)"
                relay_files.mark_expired(question.path, reason, now)
                expired.append(question.id)
    return expired
