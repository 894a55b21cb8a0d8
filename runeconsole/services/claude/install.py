"""Our hook entries in a Claude Code settings file: merged in, found, taken out.

``HOOK_EVENTS`` is every event we hook, with its matcher and timeout; each gets one entry
``{"matcher": …, "hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": S}]}``.
The command is this installation's interpreter by absolute path (``python -P -m
runeconsole claude hook``), so it works whatever ``PATH`` Claude Code runs it with, and
``-P`` keeps a project's own files from shadowing ours. An entry is ours when its command
ends in ``claude hook`` and runs ``runeconsole``; everything else in the file (other keys,
other hooks, other entries of the same event) is kept as it is and where it is. A second
install changes nothing; uninstall takes out exactly ours. The status line is chained the
same way (``statusline_install``). When what uninstall leaves is what the file held before
an install (its backup beside it, unchanged since), that file comes back byte for byte.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

from runeconsole.adapters.claude_settings import SettingsFile, dump
from runeconsole.core.errors import InvalidInput
from runeconsole.services.claude import statusline_install

# (event, matcher, timeout in seconds). PreToolUse waits for the console's answer to an
# AskUserQuestion call (at most runeconsole.claude.ask_wait_seconds, <= 3540 s), and
# PermissionRequest for its decision (runeconsole.claude.permission_wait_seconds, as long).
HOOK_EVENTS: tuple[tuple[str, str | None, int], ...] = (
    ("SessionStart", None, 60),
    ("UserPromptSubmit", None, 30),
    ("PreToolUse", "*", 3600),
    ("PostToolUse", "*", 30),
    ("PermissionRequest", "*", 3600),
    ("Notification", None, 30),
    ("PreCompact", None, 120),
    ("Stop", None, 30),
    ("SessionEnd", None, 60),
    # The newer events (``session_facts``); Elicitation waits for the console's form as
    # long as an AskUserQuestion call does.
    ("StopFailure", None, 30),
    ("MessageDisplay", None, 30),
    ("SubagentStart", None, 30),
    ("SubagentStop", None, 30),
    ("TaskCreated", None, 30),
    ("TaskCompleted", None, 30),
    ("PostCompact", None, 60),
    ("PostToolUseFailure", "*", 30),
    ("PermissionDenied", "*", 30),
    ("CwdChanged", None, 30),
    ("Elicitation", None, 3600),
)


def hook_command(python: str | None = None) -> str:
    return shlex.join([python or sys.executable, "-P", "-m", "runeconsole", "claude", "hook"])


def is_ours(command: object) -> bool:
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return words[-2:] == ["claude", "hook"] and any(
        os.path.basename(word) == "runeconsole" for word in words[:-2]
    )


def entry(matcher: str | None, command: str, timeout: int) -> dict[str, Any]:
    hook = {"type": "command", "command": command, "timeout": timeout}
    return {"hooks": [hook]} if matcher is None else {"matcher": matcher, "hooks": [hook]}


def _hooks_of(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f'{path}: "hooks" is not an object; fix it by hand, nothing was changed')
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InvalidInput(
                f"{path}: hooks.{event} is not a list; fix it by hand, nothing was changed"
            )
    return hooks


def _without_ours(groups: list[Any]) -> tuple[list[Any], int | None]:
    """The event's entries with our hooks taken out (entries left empty dropped), and the
    place the first of ours was at."""
    kept: list[Any] = []
    first: int | None = None
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(
            isinstance(h, dict) and is_ours(h.get("command")) for h in inner
        ):
            kept.append(group)
            continue
        first = len(kept) if first is None else first
        rest = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command")))]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, first


def merged(data: dict[str, Any], path: Path, command: str) -> dict[str, Any]:
    """``data`` with our entries in (an entry already as wanted is left where it is)."""
    result = dict(data)
    hooks = dict(_hooks_of(data, path))
    wanted = {event: entry(matcher, command, timeout) for event, matcher, timeout in HOOK_EVENTS}
    for event in list(hooks) + [e for e in wanted if e not in hooks]:
        groups = hooks.get(event, [])
        if event in wanted and groups.count(wanted[event]) == 1 and _ours_count(groups) == 1:
            continue  # installed exactly so: untouched, in its place
        kept, first = _without_ours(groups)
        if event in wanted:
            kept.insert(len(kept) if first is None else first, wanted[event])
        elif first is None:
            continue  # none of ours here: the user's entries stay exactly as they are
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event)
    result["hooks"] = hooks
    return result


def _ours_count(groups: list[Any]) -> int:
    hooks = [group.get("hooks") for group in groups if isinstance(group, dict)]
    return sum(
        1
        for listed in hooks
        if isinstance(listed, list)
        for hook in listed
        if isinstance(hook, dict) and is_ours(hook.get("command"))
    )


def removed(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """``data`` without any of our entries (an event left with none is dropped, and
    ``hooks`` too when nothing is left in it)."""
    result = dict(data)
    known = _hooks_of(data, path)
    if not installed(data):
        return result
    hooks = {}
    for event, groups in known.items():
        kept, _ = _without_ours(groups)
        if kept or not groups:
            hooks[event] = kept
    if hooks:
        result["hooks"] = hooks
    else:
        result.pop("hooks")
    return result


def installed(data: dict[str, Any]) -> dict[str, list[str]]:
    """Event -> the commands of ours configured for it (malformed parts are skipped)."""
    hooks = data.get("hooks")
    found: dict[str, list[str]] = {}
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                if isinstance(hook, dict) and is_ours(hook.get("command")):
                    found.setdefault(event, []).append(hook["command"])
    return found


class Change:
    """What an install or uninstall did (or, with ``--dry-run``, would do) to one file."""

    def __init__(
        self, settings: SettingsFile, after: dict[str, Any], restored: bytes | None = None
    ) -> None:
        self.path = settings.path
        self.before = settings.data
        self.after = after
        self.changed = (settings.raw is None and bool(after)) or after != settings.data
        self.backup: Path | None = None
        self.restored = restored if self.changed else None  # the file's bytes before install
        self._settings = settings

    @property
    def text(self) -> str:
        if self.restored is not None:
            return self.restored.decode("utf-8", "replace")
        return dump(self.after).decode("utf-8")

    def apply(self) -> None:
        if self.changed:
            self.backup = self._settings.write(self.after, self.restored)

    @property
    def events(self) -> list[str]:
        """The events our hook is installed for, after the change."""
        return sorted(installed(self.after))

    @property
    def status_line(self) -> str | None:
        return statusline_install.describe(self.after)

    def to_json(self, scope: str) -> dict[str, Any]:
        return {
            "scope": scope,
            "path": str(self.path),
            "changed": self.changed,
            "backup": str(self.backup) if self.backup else None,
            "events": self.events,
            "status_line": self.status_line,
            "restored": self.restored is not None,
        }


def plan_install(
    path: Path,
    command: str | None = None,
    beneath: dict[str, Any] | None = None,
    python: str = "",
) -> Change:
    """Our hooks and status line merged in; ``beneath``: the status line in effect from a
    less specific settings file (carried when this file has none)."""
    settings = SettingsFile.read(path)
    with_hooks = merged(settings.data, path, command or hook_command(python or None))
    return Change(settings, statusline_install.merged(with_hooks, path, beneath, python))


def plan_uninstall(path: Path) -> Change:
    settings = SettingsFile.read(path)
    if settings.raw is None:
        return Change(settings, {})
    after = statusline_install.removed(removed(settings.data, path), path)
    return Change(settings, after, settings.backup_holding(after))
