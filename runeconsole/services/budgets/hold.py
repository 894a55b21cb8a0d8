"""A held agent, and the operator letting it go on.

An agent at 100 % of a budget is held: its PreToolUse hook denies every tool call, with a
reason that names the budget (the model receives it as the call's result), until the
operator lifts the hold (``runeconsole budget allow KEY [--usd N]``, or ``$`` in the
console). The hold is judged at each call from the ledgers (the agent's and the fleet's
day), so it also falls on an agent the fleet's budget caught, and it is recorded in the
agent's identity (``cost.budget``) for the consoles' Problems panes.
"""

from __future__ import annotations

import json
import os

from runeconsole.core.files import atomic_write_json, read_bytes
from runeconsole.core.locks import flocked
from runeconsole.core.paths import ProjectPaths
from runeconsole.core.timeutil import iso_z
from runeconsole.services.budgets import booking
from runeconsole.services.budgets import judge as budgets
from runeconsole.services.cost import budget_state, ledger

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from runeconsole.services.budgets.booking import NotifierFor


def reason(key: str, verdict: budgets.Verdict) -> str:
    return (
        f"runeconsole: {key} is held: its budget is spent ({verdict.detail}). Every tool "
        f"call is refused until the operator lets it go on (runeconsole budget allow "
        f"{key}). Stop here and tell the user."
    )


def denial(
    paths: ProjectPaths, key: str, now: datetime, limits: dict[str, Any]
) -> tuple[str, budgets.Verdict] | None:
    """The PreToolUse answer for a held agent (its JSON, and the verdict), else ``None``."""
    day = ledger.local_day(now)
    verdict = budgets.judge(ledger.spent(paths, key, day), limits)
    if verdict.state != budgets.HELD:
        return None
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason(key, verdict),
        }
    }
    return json.dumps(output), verdict


def _read(path: str) -> dict[str, Any] | None:
    if not os.path.lexists(path):
        return None
    from runeconsole.core.files import parse_json_object

    return parse_json_object(path, read_bytes(path, follow_symlinks=False))


def note(
    paths: ProjectPaths,
    key: str,
    verdict: budgets.Verdict,
    day: str,
    notifier_for: NotifierFor | None = None,
) -> bool:
    """The identity's ``cost.budget`` set to ``verdict`` (under its lock); True when that
    changed it (the operator is then told of a hold, through ``notifier_for``)."""
    path = os.fspath(paths.identities / f"{key}.json")
    with flocked(os.fspath(paths.lock_for(f"identity-{key}")), what=f"agent {key}"):
        fields = _read(path)
        if fields is None:
            return False
        cost = fields.get("cost")
        cost = dict(cost) if isinstance(cost, dict) else {}
        before = budget_state(cost, day)
        if before == verdict.state:
            return False
        if verdict.state == budgets.OK:
            cost.pop("budget", None)
        else:
            cost["budget"] = verdict.to_json(day)
        fields["cost"] = cost
        atomic_write_json(paths.inside(paths.identities / f"{key}.json"), fields)
    if verdict.state == budgets.HELD and notifier_for is not None:
        booking.tell(paths, key, verdict, notifier_for)
    return True


class Allowed:
    """What ``allow`` did: the state before and after, and the allowance given."""

    def __init__(
        self,
        key: str,
        before: budgets.Verdict,
        after: budgets.Verdict,
        allowance: dict[str, Any],
    ) -> None:
        self.key, self.before, self.after, self.allowance = key, before, after, allowance

    def to_json(self) -> dict[str, Any]:
        day = str(self.allowance.get("day") or "")
        return {
            "key": self.key,
            "was": self.before.to_json(day),
            "now": self.after.to_json(day),
            "allowance": self.allowance,
        }


def allow(
    paths: ProjectPaths,
    key: str,
    usd: float | None,
    now: datetime,
    limits: dict[str, Any],
    by: str = "operator",
) -> Allowed:
    """Let ``key`` go on: for ``usd`` more dollars, or (``None``) for the rest of the day."""
    day = ledger.local_day(now)
    spent = ledger.spent(paths, key, day)
    before = budgets.judge(spent, limits)
    allowance = {"usd": usd, "from_usd": round(spent.usd, 6), "day": day, "at": iso_z(now)}
    allowance["by"] = by
    ledger.set_allowance(paths, key, allowance)
    after = budgets.judge(ledger.spent(paths, key, day), limits)
    note(paths, key, after, day)  # the operator lifted it: nobody else to tell
    return Allowed(key, before, after, allowance)
