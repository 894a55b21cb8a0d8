"""What each hook event says the agent is doing (``activity``) and waiting for.

| event | activity | ``waiting_for`` |
| --- | --- | --- |
| SessionStart | ``idle`` (``busy`` after an automatic compaction: the turn goes on) | |
| UserPromptSubmit, PreToolUse, PostToolUse | ``busy`` | |
| PreToolUse of AskUserQuestion | ``waiting`` | the question |
| PermissionRequest | ``waiting`` | ``permission: {tool} {command or path}`` |
| Notification | ``waiting`` | the message |
| PreCompact | ``compacting`` | |
| Stop | ``idle`` | |
| StopFailure | ``stopped`` (the turn ended on an API error: ``session_facts``) | |
| PostToolUseFailure, PermissionDenied | ``busy`` | |
| Elicitation | ``waiting`` | ``input: {server}: {message}`` |
| SessionEnd | ``ended`` (``idle`` for ``/clear``: the session goes on) | |

A stopped agent stays stopped until its next sign of work (``session_facts.CLEARS_STOP``),
which makes it ``busy`` unless the event says more. Any other event only says the agent
is alive.
"""

from __future__ import annotations

from runeconsole.services.claude.bridge import payload as events
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.session.session_facts import CLEARS_STOP

BUSY, IDLE, WAITING, COMPACTING, ENDED = "busy", "idle", "waiting", "compacting", "ended"
STOPPED = "stopped"
ACTIVITIES = (BUSY, IDLE, WAITING, COMPACTING, ENDED, STOPPED)
CLEAR = "clear"
AUTO = "auto"
_QUESTION_CHARS = 200


def asked(payload: HookPayload) -> str:
    """An AskUserQuestion call in one line: its first question, and how many follow."""
    questions = payload.tool_input.get("questions")
    questions = [q for q in questions if isinstance(q, dict)] if isinstance(questions, list) else []
    first = questions[0].get("question") if questions else None
    text = " ".join(str(first).split())[:_QUESTION_CHARS] if first else "a question"
    return text + (f" (+{len(questions) - 1} more)" if len(questions) > 1 else "")


def permission(payload: HookPayload) -> str:
    """A permission request in one line: the tool and what it would run or touch."""
    tool_input = payload.tool_input
    what = next(
        (
            tool_input[f]
            for f in ("command", "file_path", "url")
            if isinstance(tool_input.get(f), str)
        ),
        "",
    )
    line = " ".join(f"permission: {payload.tool_name or 'a tool'} {what}".split())
    return line[:_QUESTION_CHARS]


def elicited(payload: HookPayload) -> str:
    """An MCP server's request for input in one line: the server and its message."""
    server = payload.text("mcp_server_name") or "an MCP server"
    message = " ".join((payload.message or "input").split())
    return f"input: {server}: {message}"[:_QUESTION_CHARS]


def transition(
    payload: HookPayload, compact_trigger: object, current: object = None
) -> tuple[str, str | None] | None:
    """``(activity, waiting_for)`` after the event, or ``None`` when it says nothing of that.

    ``compact_trigger`` is what the last PreCompact said (``auto`` | ``manual``);
    ``current`` the activity before the event."""
    if current == STOPPED and payload.event not in CLEARS_STOP:
        return None  # Claude Code's reminders that it waits: still the failed turn's stop
    found = _transition(payload, compact_trigger)
    if found is None and current == STOPPED:
        return BUSY, None
    return found


def _transition(payload: HookPayload, compact_trigger: object) -> tuple[str, str | None] | None:
    event = payload.event
    if event == events.SESSION_START:
        compacted = payload.text("source") == "compact" and compact_trigger == AUTO
        return (BUSY if compacted else IDLE), None
    if event in (
        events.USER_PROMPT_SUBMIT,
        events.POST_TOOL_USE,
        events.POST_TOOL_USE_FAILURE,
        events.PERMISSION_DENIED,
    ):
        return BUSY, None
    if event == events.PRE_TOOL_USE:
        return (WAITING, asked(payload)) if payload.asks_the_user else (BUSY, None)
    if event == events.PERMISSION_REQUEST:
        return WAITING, permission(payload)
    if event == events.NOTIFICATION:
        return WAITING, payload.message or payload.notification_type or "input"
    if event == events.PRE_COMPACT:
        return COMPACTING, None
    if event == events.STOP:
        return IDLE, None
    if event == events.STOP_FAILURE:
        return STOPPED, None
    if event == events.ELICITATION:
        return WAITING, elicited(payload)
    if event == events.SESSION_END:
        return (IDLE if payload.text("reason") == CLEAR else ENDED), None
    return None


def ends_session(payload: HookPayload) -> bool:
    return payload.event == events.SESSION_END and payload.text("reason") != CLEAR
