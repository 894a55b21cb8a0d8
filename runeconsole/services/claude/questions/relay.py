"""The AskUserQuestion relay, hook side: the call goes to the console and its answers back.

With no console open on the project (or the relay disabled), the hook prints nothing at
once and Claude Code shows its own dialog. Otherwise the call's questions are written
(``relay_files``) and the hook waits, polling the answer files, until every question is
answered; it then prints the ``allow`` decision with ``updatedInput.answers``, which
Claude Code takes as the user's answers. If nobody answers within
``runeconsole.claude.ask_wait_seconds``, or the console closes and stays closed, it
prints nothing and the questions are marked expired. Expiring and answering take the
call's lock (``claude-ask-{task}``), so an answer given at that very moment either
reaches the agent or is refused; never both, never lost silently.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from datetime import UTC, datetime

from runeconsole.core.files import create_exclusive, dump_json
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.bridge import presence, waiting
from runeconsole.services.claude.bridge import settings as claude_settings
from runeconsole.services.claude.bridge.payload import HookInputError, HookPayload
from runeconsole.services.claude.questions import relay_files
from runeconsole.services.claude.questions.relay_files import (
    QuestionSpec,
    RelayQuestion,
    read_fields,
)

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

DECIDERS = ("user", "auto-timeout", "cap-exceeded")


def lock_name(task_id: str) -> str:
    return f"claude-ask-{task_id}"


def ask(
    paths: ProjectPaths,
    key: str,
    payload: HookPayload,
    now: datetime,
    written: Callable[[], None] | None = None,
) -> str:
    """The hook's stdout for an AskUserQuestion call: the answers, or ``""``. ``written``
    runs once the questions are where the console sees them, before the wait."""
    try:
        specs = relay_files.parse_call(payload.tool_input)
    except ValueError as exc:
        raise HookInputError(f"AskUserQuestion input not relayed: {exc}") from None
    settings = claude_settings.load(paths)
    if not settings.relay_enabled or not presence.console_open(paths):
        if written is not None:
            written()  # the agent waits all the same, in Claude Code's own dialog
        return ""
    task_id = relay_files.task_id_for(payload.tool_use_id, payload.session_id, now)
    questions = relay_files.write_call(
        paths,
        specs,
        task_id=task_id,
        key=key,
        now=now,
        wait_seconds=settings.ask_wait_seconds,
        session_id=payload.session_id,
        tool_use_id=payload.tool_use_id,
    )
    if written is not None:
        written()
    return wait(paths, task_id, questions, payload.tool_input, settings.ask_wait_seconds)


def wait(
    paths: ProjectPaths,
    task_id: str,
    questions: list[RelayQuestion],
    tool_input: dict[str, Any],
    seconds: float,
) -> str:
    answers = waiting.wait_for(
        paths,
        lock_name(task_id),
        lambda: collect(questions),
        lambda why: _mark_expired(questions, why),
        seconds,
    )
    return "" if answers is None else output(tool_input, questions, answers)


def collect(questions: list[RelayQuestion]) -> list[tuple[str, dict[str, Any]]] | None:
    """Each question's answer for Claude Code and the answer file it came from, once all
    are answered (``None`` before)."""
    found = []
    for question in questions:
        answer = read_fields(question.answer_path)
        if answer is not None:
            found.append((claude_answer(question.spec, answer, by_key=True), answer))
            continue
        twin = question.twin_answer_path
        answer = read_fields(twin) if twin is not None else None
        if answer is None:
            return None
        found.append((claude_answer(question.spec, answer, by_key=False), answer))
    return found


def claude_answer(spec: QuestionSpec, answer: dict[str, Any], *, by_key: bool) -> str:
    """What Claude Code is told: the chosen label (labels joined by ", " for several), or
    the text given. A twin's option keys are its own, so only its text is matched."""
    option = answer.get("option")
    if by_key and isinstance(option, str) and option:
        picks = {ord(k) - ord("A") for k in (part.strip() for part in option.split(",")) if k}
        if picks and all(0 <= i < len(spec.labels) for i in picks):
            return ", ".join(spec.labels[i] for i in sorted(picks))
    text = str(answer.get("answer") or "").strip()
    bare = text[3:].strip() if len(text) > 2 and text[1] in ":.)" and text[0].isalpha() else text
    for label in spec.labels:
        if relay_files.same_text(label, text) or relay_files.same_text(label, bare):
            return label
    return text


def output(
    tool_input: dict[str, Any],
    questions: list[RelayQuestion],
    answers: list[tuple[str, dict[str, Any]]],
) -> str:
    """The allow decision with the answers; a question settled through its twin is
    closed here too, so the console does not keep showing it."""
    for question, (_, answer) in zip(questions, answers, strict=True):
        if not question.answer_path.exists():
            _close_from_twin(question, answer)
    chosen = {q.spec.text: text for q, (text, _) in zip(questions, answers, strict=True)}
    decision = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {**tool_input, "answers": chosen},
        }
    }
    return json.dumps(decision, ensure_ascii=False)


def _close_from_twin(question: RelayQuestion, answer: dict[str, Any]) -> None:
    fields = read_fields(question.path) or {}
    decided_by = answer.get("decided_by")
    body = {
        "task_id": fields.get("task_id"),
        "answer": str(answer.get("answer") or ""),
        "decided_by": decided_by if decided_by in DECIDERS else "user",
        "seq": fields.get("seq"),
        "option": None,
        "answered_at": iso_z(datetime.now(UTC)),
        "via": relay_files.twin_id(question.twin) if question.twin else None,
    }
    # Answered directly at that moment: that answer stands. A full disk: the agent gets its
    # answer all the same, and the console closes the question once the hook is gone.
    with contextlib.suppress(OSError):
        create_exclusive(question.answer_path, dump_json(body), relay_files.FILE_MODE)


def _mark_expired(questions: list[RelayQuestion], why: str) -> None:
    now = datetime.now(UTC)
    reason = f"expired: {why}; Claude Code asked in its own dialog"
    for question in questions:
        if not question.answer_path.exists():
            relay_files.mark_expired(question.path, reason, now)
