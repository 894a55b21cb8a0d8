"""The Elicitation relay, hook side: an MCP server's request for input goes to the console.

Claude Code runs the Elicitation hook before it shows its own dialog. With a console
open on the project, the request becomes one worker question
(``tmp/.rune-signals/claude-code/elicit-{session}-{stamp}.q1.question``) carrying the
server's name and its schema under ``elicitation``; the Questions pane shows it and its
window is a form built from the schema (``elicit_form``). The answer file's text is the
response (``{"action": "accept", "content": {…}}``, or ``decline`` / ``cancel``); the
hook prints it as Claude Code documents it, ``{"hookSpecificOutput": {"hookEventName":
"Elicitation", "action": …, "content": …}}``, and Claude Code hands it to the server.

Nothing is ever answered for the operator. With no console open, the relay disabled, a
schema the form cannot show, a URL request, or nobody answering within
``runeconsole.claude.ask_wait_seconds`` (the question is then marked expired), the hook
prints nothing and Claude Code shows its own dialog. The wait and its end are the
AskUserQuestion relay's (``waiting``: under the call's lock, so an answer given at that
very moment either reaches the server or is refused).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from runeconsole.core.errors import InvalidInput
from runeconsole.core.files import create_exclusive, dump_json
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.bridge import presence, waiting
from runeconsole.services.claude.bridge import settings as claude_settings
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.questions import elicit_form, relay, relay_files

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

FIELD = "elicitation"  # the question file's object: {server, schema, mode}
PREFIX = "elicit-"


def is_elicitation(fields: dict[str, Any]) -> bool:
    return relay_files.is_relay(fields) and isinstance(fields.get(FIELD), dict)


def form_of(fields: dict[str, Any]) -> elicit_form.Form:
    """The form of a relayed elicitation's question file (``Unsupported`` if it has none)."""
    request = fields.get(FIELD)
    if not isinstance(request, dict):
        raise elicit_form.Unsupported("not an elicitation")
    return elicit_form.Form(request.get("schema"))


def server_of(fields: dict[str, Any]) -> str:
    request = fields.get(FIELD)
    server = request.get("server") if isinstance(request, dict) else None
    return server if isinstance(server, str) and server else "an MCP server"


def checked_answer(fields: dict[str, Any], text: str) -> str:
    """``text`` if it is a valid response to the question's form (``InvalidInput`` saying
    what is wrong, or that the question takes no such answer)."""
    try:
        form = form_of(fields)
    except elicit_form.Unsupported as exc:
        raise InvalidInput(f"this form cannot be answered here: {exc}") from None
    form.response(text)
    return text


def typed_answer(fields: dict[str, Any], action: str, typed: dict[str, str]) -> str:
    """The answer text for ``action`` with the values a person typed per field."""
    if action != elicit_form.ACCEPT:
        if typed:
            raise InvalidInput(f"a form that is {action}d takes no field values")
        return elicit_form.answer_text(action)
    try:
        form = form_of(fields)
    except elicit_form.Unsupported as exc:
        raise InvalidInput(f"this question is not a form: {exc}") from None
    return elicit_form.answer_text(action, form.content_of(typed))


def task_id_for(session_id: str | None, now: datetime) -> str:
    session = "".join(c for c in (session_id or "") if c.isascii() and c.isalnum())[:8]
    return f"{PREFIX}{session or 'session'}-{now:%Y%m%dT%H%M%S%f}"


def ask(
    paths: ProjectPaths,
    key: str,
    payload: HookPayload,
    now: datetime,
    written: Callable[[], None] | None = None,
) -> str:
    """The hook's stdout for an Elicitation: the operator's response, or ``""`` (Claude
    Code's own dialog). ``written`` runs once the request is where the console sees it."""
    settings = claude_settings.load(paths)
    relayable = payload.text("mode") in (None, "form")
    try:
        form = elicit_form.Form(payload.data.get("requested_schema"))
    except elicit_form.Unsupported:
        relayable = False
    if not relayable or not settings.relay_enabled or not presence.console_open(paths):
        if written is not None:
            written()  # the agent waits all the same, in Claude Code's own dialog
        return ""
    task_id = task_id_for(payload.session_id, now)
    path = write_request(paths, key, payload, task_id, now, settings.ask_wait_seconds)
    if written is not None:
        written()
    found = waiting.wait_for(
        paths,
        relay.lock_name(task_id),
        lambda: _response(path, form),
        lambda why: _expire(path, why),
        settings.ask_wait_seconds,
    )
    if found is None or found[0] is None:
        return ""
    return elicit_form.hook_output(found[0], found[1])


def write_request(
    paths: ProjectPaths,
    key: str,
    payload: HookPayload,
    task_id: str,
    now: datetime,
    wait_seconds: float,
) -> Path:
    """The request as a question file (written once, complete, never replaced)."""
    directory = paths.inside(paths.claude_questions)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, relay_files.DIR_MODE)
    server = payload.text("mcp_server_name") or "an MCP server"
    fields = {
        "task_id": task_id,
        "question": payload.message or f"{server} asks for input",
        "urgency": "blocking",
        "options": "",
        "context": f"Asked by {key} for the MCP server {server} (an elicitation: a form)",
        "seq": 1,
        "asked_at": iso_z(now),
        "auto_answer_at": None,
        "worker_name": key,
        "call_size": 1,
        "source": relay_files.SOURCE,
        "expires_at": relay_files.ms(now + timedelta(seconds=wait_seconds)),
        "session_id": payload.session_id,
        "hook_pid": os.getpid(),
        FIELD: {"server": server, "schema": payload.data.get("requested_schema")},
    }
    path = directory / f"{task_id}.q1{relay_files.QUESTION}"
    with contextlib.suppress(FileExistsError):
        create_exclusive(path, dump_json(fields), relay_files.FILE_MODE)
    return path


def _answer_path(path: Path) -> Path:
    return path.with_name(path.name[: -len(relay_files.QUESTION)] + relay_files.ANSWER)


def _response(
    path: Path, form: elicit_form.Form
) -> tuple[str | None, dict[str, Any] | None] | None:
    """The answer's action and content once it is written (``(None, None)`` for an answer
    that is no valid response: Claude Code then asks in its own dialog)."""
    answer = relay_files.read_fields(_answer_path(path))
    if answer is None:
        return None
    try:
        return form.response(str(answer.get("answer") or ""))
    except InvalidInput:  # written by hand around the checks
        return None, None


def _expire(path: Path, why: str) -> None:
    reason = f"expired: {why}; Claude Code asked in its own dialog"
    relay_files.mark_expired(path, reason, datetime.now().astimezone())
