"""PermissionDenied: a tool call Claude Code's auto mode refused, kept in the Permissions
history beside the operator's decisions.

Claude Code fires PermissionDenied when its auto-mode classifier refuses a call (the
model is told, and goes on). The call is recorded as a permission request nobody waited
for (``expires_at`` null) with its decision already made: ``deny``, ``decided_by``
``auto-mode`` and the classifier's reason as the message. ``runeconsole permissions
history``, the Permissions pane and the agent's detail show it like any other.
"""

from __future__ import annotations

from datetime import datetime

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.permissions import files

REASON = "refused by Claude Code's auto mode"


def record(paths: ProjectPaths, key: str, payload: HookPayload, now: datetime) -> str:
    """The refused call and its decision, written once; returns the request id."""
    request_id = files.new_id(now)
    reason = payload.text("reason") or REASON
    fields = files.request_fields(
        key,
        payload.tool_name or "?",
        payload.tool_input,
        None,
        request_id=request_id,
        now=now,
        wait_seconds=None,
        session_id=payload.session_id,
        tool_use_id=payload.tool_use_id,
    )
    path = files.write_request(paths, fields)
    decision = files.decision_fields(
        request_id, files.DENY, files.AUTO_MODE, message=reason[:2000], now=now
    )
    try:
        files.write_decision(path, decision)
    except OSError:  # a full disk: no request is left without its decision
        files.withdraw(path)
        raise
    return request_id
