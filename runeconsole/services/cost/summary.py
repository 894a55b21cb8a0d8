"""What the agents cost, as the CLI and the consoles show it: per agent, per role, per
source, per day and for the fleet, so far and today.

Two readings of the same figures: the ledgers (``ledger``: every agent key that ever
spent, with its days, judged against the budgets by ``services/budgets/standing.py``;
what ``runeconsole cost`` reads on a root), and the ``cost`` an identity carries (what
the event stream and both consoles have of each agent shown).
``today`` is the reader's local date: figures kept for another day count as nothing today.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from runeconsole.services.cost import ALLOWED, HELD, OK, WARN, budget_state

BY = ("agent", "role", "day", "source")
ORDER = {HELD: 0, WARN: 1, ALLOWED: 2}  # a group shows its most urgent agent's budget


@dataclass(frozen=True)
class AgentCost:
    key: str
    role: str = ""
    source: str = ""
    usd: float = 0.0
    today_usd: float = 0.0
    estimated: bool = False
    budget: str = OK  # ok | warn | held | allowed
    detail: str = ""
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"key": self.key, "role": self.role}
        if self.source:
            row["source"] = self.source
        if self.error is not None:
            return {**row, "error": self.error}
        return {
            **row,
            "usd": round(self.usd, 4),
            "today_usd": round(self.today_usd, 4),
            "estimated": self.estimated,
            "budget": self.budget,
            "detail": self.detail,
        }


def from_fields(key: str, fields: dict[str, Any], day: str, source: str = "") -> AgentCost | None:
    """An identity's ``cost`` as of ``day`` (``None``: nothing spent that we know of)."""
    cost = fields.get("cost")
    if not isinstance(cost, dict):
        return None
    role = fields.get("role")
    budget = cost.get("budget")
    budget = budget if isinstance(budget, dict) else {}
    return AgentCost(
        key,
        role if isinstance(role, str) else "",
        source,
        _dollars(cost.get("usd")),
        _dollars(cost.get("today_usd")) if cost.get("day") == day else 0.0,
        cost.get("estimated") is True,
        budget_state(cost, day),
        str(budget.get("detail") or ""),
    )


def _dollars(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return max(0.0, float(value))
    return 0.0


@dataclass
class Group:
    """One line of a report: an agent, a role, a source or a day, and what it spent."""

    name: str
    usd: float = 0.0
    today_usd: float = 0.0
    estimated: bool = False
    agents: int = 0
    budget: str = OK
    detail: str = ""
    error: str | None = None

    def add(self, row: AgentCost) -> None:
        self.usd += row.usd
        self.today_usd += row.today_usd
        self.estimated |= row.estimated
        self.agents += 1
        if ORDER.get(row.budget, 9) < ORDER.get(self.budget, 9):
            self.budget, self.detail = row.budget, row.detail

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            return {"name": self.name, "error": self.error}
        return {
            "name": self.name,
            "usd": round(self.usd, 4),
            "today_usd": round(self.today_usd, 4),
            "estimated": self.estimated,
            "agents": self.agents,
            "budget": self.budget,
            "detail": self.detail,
        }


@dataclass
class CostReport:
    day: str
    by: str
    groups: list[Group] = field(default_factory=list)
    usd: float = 0.0
    today_usd: float = 0.0
    estimated: bool = False
    limits: dict[str, Any] = field(default_factory=dict)
    rate_limits: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "by": self.by,
            "rows": [group.to_json() for group in self.groups],
            "usd": round(self.usd, 4),
            "today_usd": round(self.today_usd, 4),
            "estimated": self.estimated,
            "budgets": self.limits,
            "rate_limits": self.rate_limits,
        }


def report(
    rows: Iterable[AgentCost],
    by: str,
    day: str,
    limits: dict[str, Any] | None = None,
    days: dict[str, float] | None = None,
) -> CostReport:
    """``rows`` grouped ``by`` agent, role or source; ``by`` day takes ``days`` (the fleet's
    spending by day)."""
    rows = list(rows)
    found = CostReport(day, by, limits=dict(limits or {}))
    groups: dict[str, Group] = {}
    for row in rows:
        if row.error is not None:
            groups[row.key] = Group(row.key, error=row.error)
            continue
        found.usd += row.usd
        found.today_usd += row.today_usd
        found.estimated |= row.estimated
        if by != "day":
            name = {"agent": row.key, "role": row.role, "source": row.source}[by]
            groups.setdefault(name, Group(name or "-")).add(row)
    if by == "day":
        for name, usd in sorted((days or {}).items(), reverse=True):
            groups[name] = Group(name, usd, usd if name == day else 0.0)
    found.groups = sorted(groups.values(), key=lambda g: (-g.today_usd, -g.usd, g.name))
    if by == "day":
        found.groups = [groups[name] for name in sorted(groups, reverse=True)]
    return found


def latest_rate_limits(fields: Iterable[dict[str, Any]], now: datetime) -> dict[str, Any] | None:
    """The plan's headroom as last reported by any agent (windows not yet reset)."""
    best: dict[str, Any] | None = None
    for one in fields:
        limits = one.get("rate_limits")
        if not isinstance(limits, dict) or not isinstance(limits.get("reported_at"), str):
            continue
        if best is None or limits["reported_at"] > best["reported_at"]:
            best = limits
    if best is None:
        return None
    epoch = now.timestamp()
    windows = {
        name: window
        for name, window in best.items()
        if isinstance(window, dict)
        and (not isinstance(window.get("resets_at"), int | float) or window["resets_at"] > epoch)
    }
    return {**windows, "reported_at": best["reported_at"]} if windows else None


def plan_text(limits: dict[str, Any], short: bool = False) -> str:
    """``5h 42% (resets 14:05) · 7d 17% (resets Mon 09:00)``: the plan's headroom in
    words (``short``: ``5h 42% ↻14:05 7d 17%``, for a top line)."""
    parts = []
    for name, label in (("five_hour", "5h"), ("seven_day", "7d")):
        window = limits.get(name)
        if not isinstance(window, dict):
            continue
        used = window.get("used_percentage")
        text = f"{label} {used:.0f}%" if isinstance(used, int | float) else f"{label} ?"
        resets = window.get("resets_at")
        if isinstance(resets, int | float) and (not short or name == "five_hour"):
            at = datetime.fromtimestamp(resets).astimezone()
            when = f"{at:%H:%M}" if name == "five_hour" else f"{at:%a %H:%M}"
            text += f" ↻{when}" if short else f" (resets {when})"
        parts.append(text)
    return (" " if short else " · ").join(parts)
