"""A session's running total booked for its agent: the ledger, then the figures the
identity carries for the consoles (``cost``), judged against the budgets, and the operator
told when a budget is crossed.

The identity's ``cost`` (what ``agents --json``, the event stream and both consoles
read)::

    {"usd": 3.41, "today_usd": 1.2, "day": "2026-11-24", "estimated": false,
     "budget": {"state": "warn", "budget": "per_day_usd", "detail": "…", …}}

``claude.cost_session`` keeps the session's last booked total, so an unchanged figure
(a status line redrawn, an event with no new tokens) costs no ledger read.

Who tells the operator is the caller's (``notifier_for``: Claude Code's meter passes
its settings' ``notifier_for``); without one the crossing is recorded and nobody told.
"""

from __future__ import annotations

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.budgets import judge as budgets
from runeconsole.services.cost import budget_state, ledger

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any

    from runeconsole.services.notify import Notifier

    NotifierFor = Callable[[ProjectPaths], Notifier]

RANK = {budgets.OK: 0, budgets.ALLOWED: 0, budgets.WARN: 1, budgets.HELD: 2}


class Entry:
    """An agent's identity being changed under its lock: the project, the agent's key, its
    fields and their ``claude`` object (put back into the fields by the writer)."""

    __slots__ = ("claude", "fields", "key", "paths")

    def __init__(
        self, paths: ProjectPaths, key: str, fields: dict[str, Any], claude: dict[str, Any]
    ) -> None:
        self.paths, self.key, self.fields, self.claude = paths, key, fields, claude


def figures(spent: ledger.Spent, verdict: budgets.Verdict) -> dict[str, Any]:
    found: dict[str, Any] = {
        "usd": round(spent.usd, 6),
        "today_usd": round(spent.today_usd, 6),
        "day": spent.day,
        "estimated": spent.estimated,
    }
    if verdict.state != budgets.OK:
        found["budget"] = verdict.to_json(spent.day)
    return found


def book(
    entry: Entry,
    session: object,
    total: float,
    estimated: bool,
    now: datetime,
    limits: dict[str, Any],
    notifier_for: NotifierFor | None = None,
) -> bool:
    """Book ``session``'s running ``total`` (an estimate or Claude Code's own figure) and
    put the agent's figures in its fields' ``cost``; True when they changed. A budget
    crossed is told through ``notifier_for`` (none: not told)."""
    paths, key, fields, claude = entry.paths, entry.key, entry.fields, entry.claude
    if not isinstance(session, str) or not session:
        return False
    kept = claude.get("cost_session")
    if (
        isinstance(kept, dict)
        and kept.get("id") == session
        and ledger.change_for(
            (float(kept.get("usd") or 0), kept.get("estimated") is True), total, estimated
        )
        is None
    ):
        return False
    day = ledger.local_day(now)
    role = fields.get("role")
    spent = ledger.record(
        paths, key, role if isinstance(role, str) else "", session, total, estimated,
        day, now.timestamp(),
    )  # fmt: skip
    if spent is None:
        if not estimated:
            claude["cost_session"] = {"id": session, "usd": total, "estimated": False}
        return False
    claude["cost_session"] = {"id": session, "usd": total, "estimated": estimated}
    verdict = budgets.judge(spent, limits)
    before = budget_state(fields.get("cost"), day)
    fields["cost"] = figures(spent, verdict)
    if RANK[verdict.state] > RANK[before] and notifier_for is not None:
        tell(paths, key, verdict, notifier_for)
    return True


def tell(
    paths: ProjectPaths, key: str, verdict: budgets.Verdict, notifier_for: NotifierFor
) -> None:
    """The operator's notify command, for a budget crossed (never raises)."""
    try:
        title = (
            f"{key} is held: budget spent"
            if verdict.state == budgets.HELD
            else (f"{key} is at {verdict.percent}% of its budget")
        )
        notifier_for(paths).notify(key, title, verdict.detail)
    except Exception:
        pass
