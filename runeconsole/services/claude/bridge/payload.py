"""The JSON object Claude Code writes on a hook's stdin, read defensively.

Common fields: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``; per event:
``source`` (SessionStart), ``prompt`` (UserPromptSubmit), ``tool_name`` / ``tool_input`` /
``tool_use_id`` (PreToolUse, PostToolUse; PermissionRequest has no ``tool_use_id``
but ``permission_suggestions``), ``message`` / ``notification_type``
(Notification), ``trigger`` (PreCompact), ``stop_hook_active`` (Stop), ``reason``
(SessionEnd); the newer events' fields are read by ``session_facts`` and
``elicitation``. Unknown fields are ignored; a missing optional one reads as ``None``; a
field of the wrong type reads as missing, never as a crash.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

SESSION_START = "SessionStart"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
NOTIFICATION = "Notification"
PRE_COMPACT = "PreCompact"
STOP = "Stop"
SESSION_END = "SessionEnd"
PERMISSION_REQUEST = "PermissionRequest"
STOP_FAILURE = "StopFailure"
MESSAGE_DISPLAY = "MessageDisplay"
SUBAGENT_START = "SubagentStart"
SUBAGENT_STOP = "SubagentStop"
TASK_CREATED = "TaskCreated"
TASK_COMPLETED = "TaskCompleted"
POST_COMPACT = "PostCompact"
POST_TOOL_USE_FAILURE = "PostToolUseFailure"
PERMISSION_DENIED = "PermissionDenied"
CWD_CHANGED = "CwdChanged"
ELICITATION = "Elicitation"
EVENTS = (
    SESSION_START,
    USER_PROMPT_SUBMIT,
    PRE_TOOL_USE,
    POST_TOOL_USE,
    NOTIFICATION,
    PRE_COMPACT,
    STOP,
    SESSION_END,
    PERMISSION_REQUEST,
    STOP_FAILURE,
    MESSAGE_DISPLAY,
    SUBAGENT_START,
    SUBAGENT_STOP,
    TASK_CREATED,
    TASK_COMPLETED,
    POST_COMPACT,
    POST_TOOL_USE_FAILURE,
    PERMISSION_DENIED,
    CWD_CHANGED,
    ELICITATION,
)
ASK_USER_QUESTION = "AskUserQuestion"
MAX_TEXT = 2000  # a message or question kept in a state file is cut to this


class HookInputError(ValueError):
    """Stdin is not a hook payload (logged; the hook then does nothing)."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class HookPayload:
    """One event as Claude Code sent it; ``data`` is the whole object."""

    __slots__ = ("data", "event")

    def __init__(self, data: dict[str, Any]) -> None:
        event = data.get("hook_event_name")
        if not isinstance(event, str) or not event:
            raise HookInputError("no hook_event_name in the payload")
        self.data = data
        self.event = event

    @classmethod
    def parse(cls, raw: bytes) -> HookPayload:
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise HookInputError("stdin is not UTF-8") from None
        except (ValueError, RecursionError) as exc:
            raise HookInputError(f"stdin is not JSON ({type(exc).__name__})") from None
        if not isinstance(data, dict):
            raise HookInputError(f"stdin is a JSON {type(data).__name__}, not an object")
        return cls(data)

    def text(self, name: str) -> str | None:
        return _text(self.data.get(name))

    @property
    def session_id(self) -> str | None:
        return self.text("session_id")

    @property
    def cwd(self) -> str | None:
        return self.text("cwd")

    @property
    def tool_name(self) -> str | None:
        return self.text("tool_name")

    @property
    def tool_input(self) -> dict[str, Any]:
        value = self.data.get("tool_input")
        return value if isinstance(value, dict) else {}

    @property
    def tool_use_id(self) -> str | None:
        return self.text("tool_use_id")

    @property
    def message(self) -> str | None:
        text = self.text("message")
        return text[:MAX_TEXT] if text else None

    @property
    def notification_type(self) -> str | None:
        return self.text("notification_type")

    @property
    def asks_the_user(self) -> bool:
        return self.event == PRE_TOOL_USE and self.tool_name == ASK_USER_QUESTION
