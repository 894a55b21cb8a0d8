"""Claude Code's permission requests and their decisions, as files beside the questions.

A PermissionRequest hook event becomes ``{id}.permission`` in the relayed questions'
directory (``tmp/.rune-signals/claude-code/``), written complete in one step and never
replaced; id ``perm-{UTC time to the microsecond}-{hook pid}`` (sortable by time). It
carries the agent, the tool, the exact ``subject`` rules match (a Bash command, a file
path; the whole input for other tools), the input itself (capped), a diff summary for
edits, the rules Claude Code suggests, ``asked_at``, ``expires_at`` (null when nobody
waits for a decision) and the waiting hook's pid.

Its decision is ``{id}.decision``, created once and never replaced: ``behavior``
(``allow`` | ``deny`` | null when nobody decided), the ``message`` a deny gives the
model, ``decided_by`` (``operator``, ``rule`` or ``nobody``: Claude Code asked in its own
dialog; ``auto-mode`` for a call Claude Code's auto mode refused, ``denials``), the
``rule`` that applied, the ``reason`` nobody decided, ``decided_at`` and ``via``
(``console`` | ``cli``).

Claude Code shows its own dialog while the hook waits, and does not stop the hook when
the dialog is answered there. So a waiting hook leaves a marker (``waits_dir``), and the
agent's next event (a tool run, a prompt, the turn's end) records that the request was
answered in Claude Code: the waiting hook then stops and the console closes the request.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from runeconsole.core.files import create_exclusive, dump_json, parse_json_object, read_bytes
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.core.validate import ID_PATTERN, MAX_ID_LENGTH

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

REQUEST, DECISION = ".permission", ".decision"
FILE_MODE, DIR_MODE = 0o600, 0o700
PREFIX = "perm-"
WAITS = "permission-waits"
ALLOW, DENY = "allow", "deny"
OPERATOR, RULE, NOBODY, AUTO_MODE = "operator", "rule", "nobody", "auto-mode"
DECIDERS = (OPERATOR, RULE, NOBODY, AUTO_MODE)
MAX_FILE = 256 * 1024
MAX_INPUT = 64 * 1024  # a tool input larger than this is kept as its subject only
MAX_SUBJECT = 16 * 1024
# The input field that is a tool's subject: rules match it exactly.
SUBJECT_FIELDS = {
    "Bash": "command",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "Read": "file_path",
    "NotebookEdit": "notebook_path",
    "WebFetch": "url",
    "WebSearch": "query",
    "Glob": "pattern",
    "Grep": "pattern",
}


def subject(tool: str, tool_input: dict[str, Any]) -> str:
    """What a rule for ``tool`` matches: the command or path, else the whole input."""
    field = SUBJECT_FIELDS.get(tool)
    if field is not None:
        value = tool_input.get(field)
        return value if isinstance(value, str) else ""
    return json.dumps(tool_input, sort_keys=True, ensure_ascii=False)


def _lines(value: object) -> int:
    return len(value.splitlines()) if isinstance(value, str) else 0


def diff_summary(tool: str, tool_input: dict[str, Any]) -> str | None:
    """An edit in a few words (``-3 +5 lines``); ``None`` for a tool that edits nothing."""
    if tool == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        every = " (every occurrence)" if tool_input.get("replace_all") is True else ""
        return f"-{_lines(old)} +{_lines(new)} lines{every}"
    if tool == "MultiEdit":
        edits = tool_input.get("edits")
        edits = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else []
        removed = sum(_lines(e.get("old_string")) for e in edits)
        added = sum(_lines(e.get("new_string")) for e in edits)
        return f"{len(edits)} edits, -{removed} +{added} lines"
    if tool == "Write":
        return f"writes the whole file: {_lines(tool_input.get('content'))} lines"
    if tool == "NotebookEdit":
        mode = tool_input.get("edit_mode")
        return f"{mode if isinstance(mode, str) else 'replace'} a cell"
    return None


def suggestion_text(raw: object) -> str | None:
    """One of Claude Code's ``permission_suggestions`` in words, ``None`` if not one."""
    if not isinstance(raw, dict):
        return None
    kind, where = raw.get("type"), raw.get("destination")
    place = f" ({where})" if isinstance(where, str) else ""
    if kind in ("addRules", "replaceRules", "removeRules"):
        rules = raw.get("rules")
        rules = rules if isinstance(rules, list) else []
        shown = []
        for rule in rules:
            if isinstance(rule, dict) and isinstance(rule.get("toolName"), str):
                content = rule.get("ruleContent")
                shown.append(
                    rule["toolName"] + (f"({content})" if isinstance(content, str) else "")
                )
        verb = {"addRules": "always", "replaceRules": "always", "removeRules": "no longer"}[kind]
        behavior = raw.get("behavior") if isinstance(raw.get("behavior"), str) else "allow"
        return f"{verb} {behavior} {', '.join(shown) or 'this tool'}{place}"
    if kind == "addDirectories":
        dirs = raw.get("directories")
        dirs = dirs if isinstance(dirs, list) else []
        return f"allow access to {', '.join(str(d) for d in dirs) or 'a directory'}{place}"
    if kind == "setMode" and isinstance(raw.get("mode"), str):
        return f"switch to {raw['mode']} mode{place}"
    return None


def new_id(now: datetime) -> str:
    return f"{PREFIX}{now.astimezone(UTC):%Y%m%dT%H%M%S%f}-{os.getpid()}"


def valid_id(value: object) -> bool:
    return (
        isinstance(value, str)
        and value.startswith(PREFIX)
        and len(value) <= MAX_ID_LENGTH
        and ID_PATTERN.fullmatch(value) is not None
    )


def directory(paths: ProjectPaths) -> Path:
    return paths.claude_questions


def request_path(paths: ProjectPaths, request_id: str) -> Path:
    """The request file an id names (the id is checked before the path is built)."""
    if not valid_id(request_id):
        raise ValueError(f"{request_id!r} is not a permission request id (perm-…)")
    return directory(paths) / f"{request_id}{REQUEST}"


def decision_path(request: Path) -> Path:
    return request.with_name(request.name[: -len(REQUEST)] + DECISION)


def waits_dir(paths: ProjectPaths) -> Path:
    """One empty file ``{agent}.{request id}`` for each hook waiting for a decision."""
    return paths.claude_bridge / WAITS


def waiting_on(paths: ProjectPaths, key: str) -> list[str]:
    """The requests a hook of agent ``key`` waits on (one directory read; none mostly)."""
    try:
        names = os.listdir(waits_dir(paths))
    except OSError:
        return []
    found = (name.rsplit(".", 1) for name in names if "." in name)
    return [request for agent, request in found if agent == key and valid_id(request)]


def listing(where: Path, latest: int) -> tuple[list[str], list[str]]:
    """From one listing of the requests' directory, by name alone: the ids of the requests
    without a decision, and of the ``latest`` decided ones (ids sort by when they were
    asked)."""
    try:
        names = set(os.listdir(where))
    except OSError:
        return [], []
    ids = sorted(
        name[: -len(REQUEST)]
        for name in names
        if name.endswith(REQUEST) and valid_id(name[: -len(REQUEST)])
    )
    undecided = [i for i in ids if i + DECISION not in names]
    decided = [i for i in ids if i + DECISION in names]
    return undecided, decided[-latest:] if latest else []


def lock_name(request_id: str) -> str:
    return f"claude-permission-{request_id}"


def request_fields(
    key: str,
    tool: str,
    tool_input: dict[str, Any],
    suggestions: object,
    *,
    request_id: str,
    now: datetime,
    wait_seconds: float | None,
    **more: Any,
) -> dict[str, Any]:
    whole = subject(tool, tool_input)
    text = whole[:MAX_SUBJECT]
    kept_input = tool_input if len(dump_json(tool_input)) <= MAX_INPUT else None
    described = tool_input.get("description")
    offered = [suggestion_text(s) for s in suggestions] if isinstance(suggestions, list) else []
    return {
        "id": request_id,
        "agent": key,
        "tool_name": tool,
        "subject": text,
        "subject_truncated": len(whole) > MAX_SUBJECT,
        "description": described[:2000] if isinstance(described, str) else None,
        "diff_summary": diff_summary(tool, tool_input),
        "tool_input": kept_input,
        "suggestions": [s for s in offered if s],
        "asked_at": iso_z(now),
        "expires_at": iso_z(now + timedelta(seconds=wait_seconds)) if wait_seconds else None,
        "hook_pid": os.getpid(),
        "source": "claude-code",
        **{name: value for name, value in more.items() if value is not None},
    }


def write_request(paths: ProjectPaths, fields: dict[str, Any]) -> Path:
    """The request file, created once (a second request of the same id is refused)."""
    where = paths.inside(directory(paths))
    where.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(where, DIR_MODE)
    path = request_path(paths, fields["id"])
    create_exclusive(path, dump_json(fields), FILE_MODE)
    return path


def decision_fields(
    request_id: str,
    behavior: str | None,
    decided_by: str,
    *,
    message: str | None = None,
    rule: str | None = None,
    reason: str | None = None,
    via: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    return {
        "id": request_id,
        "behavior": behavior,
        "message": message,
        "decided_by": decided_by,
        "rule": rule,
        "reason": reason,
        "via": via,
        "decided_at": iso_z(now or datetime.now(UTC)),
    }


def write_decision(request: Path, fields: dict[str, Any]) -> None:
    """Created once: ``FileExistsError`` when the request is already decided."""
    create_exclusive(decision_path(request), dump_json(fields), FILE_MODE)


def withdraw(request: Path) -> None:
    """A request whose decision could not be recorded (a full disk) is taken back whole:
    Claude Code asks in its own dialog, and no request is left looking undecided."""
    if not os.path.lexists(decision_path(request)):
        with contextlib.suppress(OSError):
            request.unlink()


def read_object(path: Path) -> dict[str, Any]:
    """A request or decision file's object (``RuneError`` saying why it cannot be read)."""
    return parse_json_object(path, read_bytes(path, limit=MAX_FILE, follow_symlinks=False))


def read_decision(request: Path) -> dict[str, Any] | None:
    """The decision, ``None`` while there is none or it cannot be read (the hook polls)."""
    try:
        return read_object(decision_path(request))
    except Exception:
        return None


def hook_output(decision: dict[str, Any]) -> str:
    """What the hook prints for a decision ("" when nobody decided: Claude Code asks)."""
    behavior = decision.get("behavior")
    if behavior == ALLOW:
        chosen: dict[str, Any] = {"behavior": ALLOW}
    elif behavior == DENY:
        message = decision.get("message")
        text = message if isinstance(message, str) and message.strip() else DENIED
        chosen = {"behavior": DENY, "message": text}
    else:
        return ""
    specific = {"hookEventName": "PermissionRequest", "decision": chosen}
    return json.dumps({"hookSpecificOutput": specific}, ensure_ascii=False)


DENIED = "Denied by the operator in runeconsole"
