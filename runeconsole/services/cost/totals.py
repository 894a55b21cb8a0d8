"""The fleet's spending and the plan's headroom, kept as agents change: what the consoles'
top lines show. Each agent's part is taken out and put back when its record changes, so
an update costs the agent, not the fleet; today is asked for when it is shown (a total
kept for yesterday counts nothing today)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from runeconsole.services.cost.summary import latest_rate_limits


class Totals:
    def __init__(self) -> None:
        self._parts: dict[str, tuple[str, float, str, float, bool]] = {}
        self._usd: dict[str, float] = defaultdict(float)  # by source
        self._days: dict[tuple[str, str], float] = defaultdict(float)  # (source, day)
        self._estimated: dict[str, int] = defaultdict(int)
        self._limits: dict[str, dict[str, Any]] = {}  # key -> its rate_limits
        # Moves when an update changes what the totals hold: a heartbeat (the same cost,
        # the same limits) leaves it, so what is drawn from them need not be drawn again.
        self.version = 0

    def update(self, key: str, fields: dict[str, Any] | None, source: str = "") -> None:
        """The agent's figures now (``None``: it is gone)."""
        before = self._held(key)
        self._put(key, fields, source)
        if self._held(key) != before:
            self.version += 1

    def _held(self, key: str) -> tuple[Any, Any]:
        limits = self._limits.get(key)
        return self._parts.get(key), limits.get("rate_limits") if limits is not None else None

    def _put(self, key: str, fields: dict[str, Any] | None, source: str) -> None:
        self._take_out(key)
        if fields is None:
            return
        limits = fields.get("rate_limits")
        if isinstance(limits, dict):
            self._limits[key] = fields
        cost = fields.get("cost")
        if not isinstance(cost, dict):
            return
        usd, today = _dollars(cost.get("usd")), _dollars(cost.get("today_usd"))
        day = cost.get("day")
        day = day if isinstance(day, str) else ""
        estimated = cost.get("estimated") is True
        self._parts[key] = (source, usd, day, today, estimated)
        self._usd[source] += usd
        self._days[(source, day)] += today
        self._estimated[source] += estimated

    def _take_out(self, key: str) -> None:
        self._limits.pop(key, None)
        part = self._parts.pop(key, None)
        if part is None:
            return
        source, usd, day, today, estimated = part
        self._usd[source] -= usd
        self._days[(source, day)] -= today
        self._estimated[source] -= estimated

    def usd(self, source: str | None = None) -> float:
        """So far (one source's, or every source's)."""
        found = self._usd.values() if source is None else [self._usd.get(source, 0.0)]
        return max(0.0, sum(found))

    def today_usd(self, day: str, source: str | None = None) -> float:
        found = (v for (s, d), v in self._days.items() if d == day and source in (None, s))
        return max(0.0, sum(found))

    def estimated(self, source: str | None = None) -> bool:
        if source is None:
            return any(count > 0 for count in self._estimated.values())
        return self._estimated.get(source, 0) > 0

    def rate_limits(self, now: datetime) -> dict[str, Any] | None:
        return latest_rate_limits(self._limits.values(), now)


def _dollars(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return max(0.0, float(value))
    return 0.0
