"""The permission relay, hook side: a PermissionRequest decided by a rule, by the
operator, or by nobody.

Claude Code runs the hook when it is about to ask "Do you want to proceed?". A rule of
the operator's that matches (``rules``) decides at once. Otherwise, with a console open
on the project, the request is written where the console shows it (``files``) and the
hook waits (``waiting``) up to ``runeconsole.claude.permission_wait_seconds`` for the
operator's decision, which it prints. Without a console, or when the wait runs out or
the console closes, it prints nothing and Claude Code shows its own dialog: nothing is
ever decided by default. Every outcome is recorded as the request's decision file, with
who decided (``operator``, ``rule``, ``nobody``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge import presence, waiting
from runeconsole.services.claude.bridge import settings as claude_settings
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.permissions import files, rules

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

NO_CONSOLE = "no console was open; Claude Code asked in its own dialog"
WENT_ON = "answered in Claude Code's own dialog (the agent went on)"


def _rule_for(paths: ProjectPaths, tool: str, subject: str, key: str) -> tuple[Any, str | None]:
    """The deciding rule (or ``None``) and why the rules could not be read, if so."""
    try:
        standing = rules.read(paths)
    except Exception as exc:  # an unreadable rules file decides nothing; the console says why
        return None, str(exc)
    return rules.decide(standing, tool, subject, key), None


def request(
    paths: ProjectPaths,
    key: str,
    payload: HookPayload,
    now: datetime,
    written: Callable[[], None] | None = None,
) -> str:
    """The hook's stdout for a PermissionRequest: the decision, or ``""``."""
    tool = payload.tool_name or ""
    tool_input = payload.tool_input
    subject = files.subject(tool, tool_input)
    rule, rules_error = _rule_for(paths, tool, subject, key)
    settings = claude_settings.load(paths)
    waits = rule is None and presence.console_open(paths)
    fields = files.request_fields(
        key,
        tool,
        tool_input,
        payload.data.get("permission_suggestions"),
        request_id=files.new_id(now),
        now=now,
        wait_seconds=settings.permission_wait_seconds if waits else None,
        session_id=payload.session_id,
        cwd=payload.cwd,
        permission_mode=payload.text("permission_mode"),
        rules_error=rules_error,
    )
    path = files.write_request(paths, fields)
    try:
        if rule is not None:
            decided = files.decision_fields(fields["id"], rule.behavior, files.RULE, rule=rule.id)
            if rule.behavior == files.DENY:
                decided["message"] = (
                    f"Denied by the operator's standing rule {rule.id} (runeconsole)"
                )
            files.write_decision(path, decided)
        elif not waits:
            nobody = files.decision_fields(fields["id"], None, files.NOBODY, reason=NO_CONSOLE)
            files.write_decision(path, nobody)
    except OSError:  # a full disk: no request is left without its decision
        files.withdraw(path)
        raise
    if written is not None:
        written()
    if not waits:
        return files.hook_output(files.read_decision(path) or {})

    def give_up(why: str) -> None:
        reason = f"{why}; Claude Code asked in its own dialog"
        decided = files.decision_fields(fields["id"], None, files.NOBODY, reason=reason)
        files.write_decision(path, decided)

    marker = paths.inside(files.waits_dir(paths)) / f"{key}.{fields['id']}"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    try:
        decision = waiting.wait_for(
            paths,
            files.lock_name(fields["id"]),
            lambda: files.read_decision(path),
            give_up,
            settings.permission_wait_seconds,
        )
    finally:
        with contextlib.suppress(OSError):
            marker.unlink()
    return files.hook_output(decision or {})


def went_on(paths: ProjectPaths, key: str, request_ids: list[str]) -> None:
    """The agent went on past these requests (answered in Claude Code's own dialog): each
    is recorded as decided by nobody, so its waiting hook stops and the console closes it."""
    for request_id in request_ids:
        path = files.request_path(paths, request_id)

        def give_up(why: str, request_id: str = request_id, path: Any = path) -> None:
            decided = files.decision_fields(request_id, None, files.NOBODY, reason=why)
            with contextlib.suppress(FileExistsError):
                files.write_decision(path, decided)

        def look(path: Any = path) -> dict[str, Any] | None:
            return files.read_decision(path)

        waiting.give_up_unless_decided(paths, files.lock_name(request_id), look, give_up, WENT_ON)
        with contextlib.suppress(OSError):
            (files.waits_dir(paths) / f"{key}.{request_id}").unlink()
