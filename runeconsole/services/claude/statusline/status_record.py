"""A status line's JSON recorded in its agent's identity, and the short line we show when
the user has none.

The agent is found as the hook finds it (``locate``: ``$RUNECONSOLE_AGENT``, else the
project directory and the session). Nothing is recorded for an agent not registered yet
or no longer active (its SessionStart hook registers it; the totals are running ones, so
nothing is lost meanwhile). The identity is rewritten only when something the console
shows changed (the context left, the cost, the rate limits, the model or its window):
Claude Code redraws its status line far more often than those change.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from runeconsole.core.files import atomic_write_json
from runeconsole.core.locks import flocked
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.bridge import locate
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.hooks.agent_state import read_identity
from runeconsole.services.claude.session import meter
from runeconsole.services.identity_fields import ACTIVE

TYPE_CHECKING = False  # typing itself is not imported: the line starts faster
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SHOWN = ("context_left_percent", "cost", "rate_limits")
SHOWN_CLAUDE = ("model", "context_window")


def _shown(fields: dict[str, Any]) -> tuple[Any, ...]:
    claude = fields.get("claude")
    claude = claude if isinstance(claude, dict) else {}
    return (
        *(fields.get(name) for name in SHOWN),
        *(claude.get(name) for name in SHOWN_CLAUDE),
    )


def record(
    payload: HookPayload, status: meter.StatusInput, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    """The agent's fields after recording (``None``: no active agent to record for)."""
    if status.project_dir and not environ.get("CLAUDE_PROJECT_DIR"):
        environ = {**environ, "CLAUDE_PROJECT_DIR": status.project_dir}
    root = locate.project_root(status.cwd, environ)
    if root is None:
        return None
    paths = ProjectPaths(root)
    role, name = locate.agent_key(payload, environ, paths)
    key = f"{role}-{name}"
    path = os.fspath(paths.identities / f"{key}.json")
    fields = read_identity(path)
    if fields is None or fields.get("status") != ACTIVE:
        return fields
    now = datetime.now(UTC)
    with flocked(os.fspath(paths.lock_for(f"identity-{key}")), what=f"agent {key}"):
        fields = read_identity(path)
        if fields is None or fields.get("status") != ACTIVE:
            return fields
        before = _shown(fields)
        claude = fields.get("claude")
        claude = dict(claude) if isinstance(claude, dict) else {}
        meter.from_status_line(meter.Entry(paths, key, fields, claude), status, now)
        fields["claude"] = claude
        if _shown(fields) == before:
            return fields
        fields["last_seen"] = fields["last_heartbeat"] = iso_z(now)
        claude["written_at"] = now.timestamp()
        atomic_write_json(paths.inside(paths.identities / f"{key}.json"), fields)
    return fields


def summary(status: meter.StatusInput, fields: dict[str, Any] | None) -> str:
    """``Opus 5.5 · 98% context left · $0.05 · 5h 42%``: the line we show when the user has
    no status line of their own (the budget's state when it holds the agent or nears it)."""
    parts = [status.model_name or "Claude"]
    left = (fields or {}).get("context_left_percent")
    if not isinstance(left, int):
        left = status.remaining_percent
    if isinstance(left, int):
        parts.append(f"{left}% context left")
    if status.cost_usd is not None:
        parts.append(f"${status.cost_usd:,.2f}")
    limits = status.rate_limits
    for name, label in (("five_hour", "5h"), ("seven_day", "7d")):
        if name in limits:
            parts.append(f"{label} {limits[name]['used_percentage']:.0f}%")
    cost = (fields or {}).get("cost")
    budget = cost.get("budget") if isinstance(cost, dict) else None
    if isinstance(budget, dict) and budget.get("state") in ("warn", "held"):
        word = "HELD" if budget["state"] == "held" else "budget"
        parts.append(f"{word}: {budget.get('detail') or ''}".strip())
    return " ".join(" · ".join(parts).split())  # one line, whatever the names held
