"""What Claude Code's newer hook events tell about an agent, kept in its identity.

| event | the identity gains |
| --- | --- |
| MessageDisplay | ``last_message``: the latest assistant message as shown (deltas joined) |
| StopFailure | ``stopped``: ``{error, message, resets, at}``; cleared by the next sign of work |
| SubagentStart / SubagentStop | ``subagents``: ``{running: {id: {type, since}}, done}`` |
| TaskCreated / TaskCompleted | ``tasks``: ``{open: {id: subject}, done, last_done}`` |
| PostToolUseFailure | ``failed_tool``: ``{tool, what, error, interrupted, at}`` |
| CwdChanged | ``cwd``: the directory the session moved to |
| PostCompact | the context figure is dropped until the next answer's usage says it again |
| any event | ``kind`` (``background`` for a ``claude --bg`` session, else ``interactive``), |
| | ``background_id`` (its short id) and ``session_name`` (``--name`` / ``/rename``) |

A new session of the agent (another ``session_id``) starts these afresh. Everything here
is dictionary work on fields already read: it runs on the hook's fast path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from runeconsole.services.claude.bridge import payload as events
from runeconsole.services.claude.bridge.locate import JOB_DIR_ENV
from runeconsole.services.claude.bridge.payload import HookPayload

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

    Fields = dict[str, Any]

# Fields a change of which is worth a write (besides ``agent_state.VISIBLE``).
VISIBLE = (
    "last_message",
    "stopped",
    "subagents",
    "tasks",
    "failed_tool",
    "cwd",
    "kind",
    "background_id",
    "session_name",
)
SESSION_FIELDS = ("last_message", "stopped", "subagents", "tasks", "failed_tool")
MESSAGE_CHARS = 4000  # the last message kept (its beginning; "…" marks a cut)
TEXT_CHARS = 500  # an error, a stop message, a tool's command
MAX_PARTS = 400  # deltas of one message kept before it counts as cut
MAX_RUNNING = 64  # subagents tracked at once
MAX_OPEN_TASKS = 200
DONE_MESSAGES = 8  # messages whose last delta came: a late delta of theirs is ignored
BACKGROUND, INTERACTIVE = "background", "interactive"
_SHORT_ID = re.compile(r"[0-9a-f]{8}")
_RESETS = re.compile(r"\bresets?\s+(?:at\s+)?([^·\n]{1,40}?)\s*(?:$|[·\n])", re.IGNORECASE)

# Events that show the agent at work again: a stop (StopFailure) is over. A notification
# (Claude Code's idle reminder follows a failed turn), a subagent or task finishing in
# the background, a compaction's end or a change of directory do not.
CLEARS_STOP = frozenset(
    {
        events.SESSION_START,
        events.USER_PROMPT_SUBMIT,
        events.PRE_TOOL_USE,
        events.POST_TOOL_USE,
        events.POST_TOOL_USE_FAILURE,
        events.PERMISSION_REQUEST,
        events.MESSAGE_DISPLAY,
        events.STOP,
        events.SUBAGENT_START,
        events.PRE_COMPACT,
        events.ELICITATION,
    }
)


def _cut(text: object, limit: int = TEXT_CHARS) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def resets_of(message: str | None) -> str | None:
    """When a rate limit lifts, as Claude Code words it (``resets 9:06pm (UTC)``)."""
    found = _RESETS.search(message or "")
    return found.group(1).strip() if found else None


def _where(payload: HookPayload) -> str | None:
    tool_input = payload.tool_input
    for name in ("command", "file_path", "url", "pattern", "description"):
        if isinstance(tool_input.get(name), str):
            return _cut(" ".join(tool_input[name].split()), 200)
    return None


def apply(
    fields: dict[str, Any],
    claude: dict[str, Any],
    payload: HookPayload,
    now_iso: str,
    environ: Mapping[str, str],
    new_session: bool,
) -> None:
    """Change ``fields`` (the identity) and ``claude`` (its bookkeeping) for the event."""
    event = payload.event
    if new_session:
        for name in SESSION_FIELDS:
            fields.pop(name, None)
        claude.pop("message", None)
    _identify(fields, claude, payload, environ)
    if event in CLEARS_STOP:
        fields.pop("stopped", None)
    step = _STEPS.get(event)
    if step is not None:
        step(fields, claude, payload, now_iso)


def _identify(
    fields: dict[str, Any],
    claude: dict[str, Any],
    payload: HookPayload,
    environ: Mapping[str, str],
) -> None:
    """Kind, background id and name: from the hook's environment and the payload."""
    job = os.path.basename(environ.get(JOB_DIR_ENV, "").rstrip("/"))
    if _SHORT_ID.fullmatch(job):
        fields["kind"], fields["background_id"] = BACKGROUND, job
    elif "kind" not in fields:
        fields["kind"] = INTERACTIVE
    pid = environ.get("CLAUDE_PID", "")
    if pid.isdigit():
        claude["pid"] = int(pid)
    title = _cut(payload.text("session_title"), 120)
    if title is not None:
        fields["session_name"] = title


def _message(fields: Fields, claude: Fields, payload: HookPayload, _: str) -> None:
    """One flush of an assistant message: its delta joined with the others, by index
    (hooks run in parallel, so deltas may come out of order)."""
    message_id, delta = payload.text("message_id"), payload.data.get("delta")
    index = payload.data.get("index")
    if message_id is None or not isinstance(delta, str):
        return
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        return
    state = _dict(claude.get("message"))
    done = [m for m in state.get("done", []) if isinstance(m, str)][-DONE_MESSAGES:]
    if message_id in done and message_id != state.get("id"):
        return  # a late flush of an earlier message, shown whole before this one
    parts = _dict(state.get("parts")) if state.get("id") == message_id else {}
    if len(parts) < MAX_PARTS:
        parts.setdefault(str(index), delta)  # a flush sent twice counts once
    if payload.data.get("final") is True and message_id not in done:
        done.append(message_id)
    ordered = sorted(parts.items(), key=lambda item: int(item[0]) if item[0].isdigit() else 0)
    text = "".join(part for _, part in ordered if isinstance(part, str)).strip()
    claude["message"] = {"id": message_id, "parts": parts, "done": done}
    if text:
        fields["last_message"] = text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "…"


def _stop_failure(fields: Fields, _: Fields, payload: HookPayload, now: str) -> None:
    message = _cut(payload.text("last_assistant_message")) or _cut(payload.text("error_details"))
    fields["stopped"] = {
        "error": _cut(payload.text("error"), 60) or "unknown",
        "message": message,
        "resets": resets_of(message),
        "at": now,
    }


def _subagent_start(fields: Fields, _: Fields, payload: HookPayload, now: str) -> None:
    agent_id = _cut(payload.text("agent_id"), 80)
    if agent_id is None:
        return
    subagents = _dict(fields.get("subagents"))
    running = _dict(subagents.get("running"))
    if len(running) < MAX_RUNNING:
        running[agent_id] = {"type": _cut(payload.text("agent_type"), 80), "since": now}
    fields["subagents"] = {"running": running, "done": _count(subagents.get("done"))}


def _subagent_stop(fields: Fields, _: Fields, payload: HookPayload, now: str) -> None:
    """A subagent finished. One nobody saw start and of no type is Claude Code's own
    (a compaction's summariser): not counted."""
    subagents = _dict(fields.get("subagents"))
    running = _dict(subagents.get("running"))
    known = running.pop(payload.text("agent_id") or "", None) is not None
    done = _count(subagents.get("done"))
    if known or payload.text("agent_type"):
        done += 1
    fields["subagents"] = {"running": running, "done": done}


def _ended(fields: Fields, _: Fields, payload: HookPayload, now: str) -> None:
    """The session is over: none of its subagents runs any more."""
    subagents = fields.get("subagents")
    if isinstance(subagents, dict) and subagents.get("running"):
        fields["subagents"] = {"running": {}, "done": _count(subagents.get("done"))}


def _task(fields: Fields, _: Fields, payload: HookPayload, now: str) -> None:
    task_id = _cut(payload.text("task_id"), 80)
    if task_id is None:
        return
    subject = _cut(payload.text("task_subject"), 200) or task_id
    tasks = _dict(fields.get("tasks"))
    open_tasks = _dict(tasks.get("open"))
    done, last = _count(tasks.get("done")), tasks.get("last_done")
    if payload.event == events.TASK_CREATED:
        if len(open_tasks) < MAX_OPEN_TASKS:
            open_tasks[task_id] = subject
    else:
        open_tasks.pop(task_id, None)
        done, last = done + 1, subject
    fields["tasks"] = {"open": open_tasks, "done": done, "last_done": last}


def _tool_failed(fields: Fields, _: Fields, payload: HookPayload, now: str) -> None:
    fields["failed_tool"] = {
        "tool": _cut(payload.tool_name, 80) or "a tool",
        "what": _where(payload),
        "error": _cut(payload.text("error")),
        "interrupted": payload.data.get("is_interrupt") is True,
        "at": now,
    }


def _cwd(fields: Fields, claude: Fields, payload: HookPayload, _: str) -> None:
    new = payload.text("new_cwd")
    if new is not None and os.path.isabs(new):
        fields["cwd"] = claude["cwd"] = new


def _compacted(fields: Fields, claude: Fields, _: HookPayload, __: str) -> None:
    """The context was just summarised: the last answer's usage no longer says how full it
    is. The meter shows nothing until the next answer's usage (read from the transcript)."""
    fields.pop("context_left_percent", None)
    transcript = claude.get("transcript")
    if isinstance(transcript, dict):
        claude["transcript"] = {**transcript, "context_tokens": None}


_STEPS = {
    events.MESSAGE_DISPLAY: _message,
    events.STOP_FAILURE: _stop_failure,
    events.SUBAGENT_START: _subagent_start,
    events.SUBAGENT_STOP: _subagent_stop,
    events.SESSION_END: _ended,
    events.TASK_CREATED: _task,
    events.TASK_COMPLETED: _task,
    events.POST_TOOL_USE_FAILURE: _tool_failed,
    events.CWD_CHANGED: _cwd,
    events.POST_COMPACT: _compacted,
}
