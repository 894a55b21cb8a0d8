"""Each agent's spending, kept across its sessions and days: ``.claude/state/cost/``.

``agents/{key}.json`` (one per agent key, kept when the agent is re-spawned)::

    {"key": "claude-web-1a2b3c4d", "role": "claude", "usd": 3.41,
     "days": {"2026-11-24": 3.41},
     "sessions": {"<session id>": {"usd": 3.41, "estimated": false, "at": 1795636793.2}},
     "allowance": {"usd": 5.0, "from_usd": 12.3, "day": "2026-11-24", "at": "…Z"}}

``days.json`` is the fleet's spending by day (``{"days": {"2026-11-24": 12.9}}``), so a
fleet budget is checked with one small read.

What comes in is a session's running total (Claude Code's ``cost.total_cost_usd``, or an
estimate from the transcript's tokens); the ledger adds the change since the figure it
last kept for that session to the agent, to the day (the writer's local date) and to the
fleet. A session's real figure replaces its estimate (the difference is booked), and an
estimate never replaces a real figure. A real total lower than the last one kept is a
session counting again from zero (a resumed session). Each change is a read-modify-write
under the agent's lock, then the fleet's, with atomic replaces; an unreadable ledger is
left as it is (the change is refused with the reason, never written over it).
"""

from __future__ import annotations

import os

from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.locks import flocked
from runeconsole.core.paths import ProjectPaths

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

AGENTS = "agents"
FLEET_NAME = "days.json"
KEEP_SESSIONS = 50
KEEP_DAYS = 400
EPSILON = 1e-9


def local_day(moment: Any) -> str:
    """The writer's local date of an aware ``datetime`` (``2026-11-24``): "today"."""
    return str(moment.astimezone().date().isoformat())


def agent_path(paths: ProjectPaths, key: str) -> str:
    return os.fspath(paths.inside(paths.cost / AGENTS / f"{key}.json"))


def fleet_path(paths: ProjectPaths) -> str:
    return os.fspath(paths.inside(paths.cost / FLEET_NAME))


def _amount(value: object) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return 0.0
    return float(value) if value == value and abs(value) < 1e12 else 0.0  # NaN: not a figure


def _read(path: str) -> dict[str, Any]:
    """The file's object; ``{}`` when there is none (``UnreadableFile`` when it is bad)."""
    if not os.path.lexists(path):
        return {}
    return read_json_object(path)


def read(paths: ProjectPaths, key: str) -> dict[str, Any]:
    return _read(agent_path(paths, key))


def days_of(data: dict[str, Any]) -> dict[str, float]:
    days = data.get("days")
    found = days if isinstance(days, dict) else {}
    return {day: _amount(usd) for day, usd in found.items() if isinstance(day, str)}


def fleet_days(paths: ProjectPaths) -> dict[str, float]:
    """The fleet's spending by day (``{}`` when nothing was spent or the file is bad)."""
    try:
        return days_of(_read(fleet_path(paths)))
    except Exception:
        return {}


class Spent:
    """An agent's dollars so far and on ``day``, and the fleet's on ``day``."""

    __slots__ = ("allowance", "day", "estimated", "fleet_today_usd", "today_usd", "usd")

    def __init__(
        self,
        usd: float = 0.0,
        today_usd: float = 0.0,
        fleet_today_usd: float = 0.0,
        estimated: bool = False,
        day: str = "",
        allowance: dict[str, Any] | None = None,
    ) -> None:
        self.usd, self.today_usd, self.fleet_today_usd = usd, today_usd, fleet_today_usd
        self.estimated, self.day, self.allowance = estimated, day, allowance

    @classmethod
    def of(cls, data: dict[str, Any], day: str, fleet_today_usd: float) -> Spent:
        sessions = data.get("sessions")
        estimated = isinstance(sessions, dict) and any(
            isinstance(s, dict) and s.get("estimated") is True for s in sessions.values()
        )
        allowance = data.get("allowance")
        return cls(
            _amount(data.get("usd")),
            days_of(data).get(day, 0.0),
            fleet_today_usd,
            estimated,
            day,
            allowance if isinstance(allowance, dict) else None,
        )


def spent(paths: ProjectPaths, key: str, day: str) -> Spent:
    """What the agent and the fleet have spent (read without a lock: writes are atomic)."""
    return Spent.of(read(paths, key), day, fleet_days(paths).get(day, 0.0))


def session_figure(data: dict[str, Any], session: str) -> tuple[float, bool] | None:
    """The total last kept for ``session`` and whether it was an estimate."""
    sessions = data.get("sessions")
    found = sessions.get(session) if isinstance(sessions, dict) else None
    if not isinstance(found, dict):
        return None
    return _amount(found.get("usd")), found.get("estimated") is True


def change_for(kept: tuple[float, bool] | None, total: float, estimated: bool) -> float | None:
    """Dollars to book when ``session``'s running total is now ``total`` (``None``: no change
    to keep, e.g. an estimate after a real figure)."""
    if kept is None:
        return total
    before, was_estimated = kept
    if estimated and not was_estimated:
        return None  # the real figure stands
    if not estimated and not was_estimated and total < before - EPSILON:
        return total  # a session counting again from zero
    if abs(total - before) < EPSILON and was_estimated == estimated:
        return None
    return total - before


def record(
    paths: ProjectPaths,
    key: str,
    role: str,
    session: str,
    total: float,
    estimated: bool,
    day: str,
    at: float,
) -> Spent | None:
    """Book ``session``'s running ``total``; what is spent after it (``None``: unchanged)."""
    with flocked(os.fspath(paths.lock_for(f"cost-{key}")), what=f"the ledger of {key}"):
        path = agent_path(paths, key)
        data = _read(path)
        change = change_for(session_figure(data, session), total, estimated)
        if change is None:
            return None
        sessions = data.get("sessions")
        sessions = dict(sessions) if isinstance(sessions, dict) else {}
        sessions.pop(session, None)
        sessions[session] = {"usd": total, "estimated": estimated, "at": at}
        while len(sessions) > KEEP_SESSIONS:
            sessions.pop(next(iter(sessions)))
        days = _added(days_of(data), day, change)
        data.update(
            key=key,
            role=role,
            usd=max(0.0, _amount(data.get("usd")) + change),
            days=days,
            sessions=sessions,
        )
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write_json(paths.inside(paths.cost / AGENTS / f"{key}.json"), data)
        fleet_today = _book_fleet(paths, day, change)
    return Spent.of(data, day, fleet_today)


def _added(days: dict[str, float], day: str, change: float) -> dict[str, float]:
    days[day] = max(0.0, days.get(day, 0.0) + change)
    while len(days) > KEEP_DAYS:
        days.pop(min(days))
    return dict(sorted(days.items()))


def _book_fleet(paths: ProjectPaths, day: str, change: float) -> float:
    """The change added to the fleet's day; the fleet's total for the day after it."""
    with flocked(os.fspath(paths.lock_for("cost-days")), what="the fleet's spending"):
        path = fleet_path(paths)
        try:
            days = _added(days_of(_read(path)), day, change)
        except Exception:  # a bad fleet file is rebuilt from the agents' ledgers (this
            days = dict(sorted(rebuilt_fleet_days(paths).items()))  # change included)
        atomic_write_json(paths.inside(paths.cost / FLEET_NAME), {"days": days})
    return days.get(day, 0.0)


def rebuilt_fleet_days(paths: ProjectPaths) -> dict[str, float]:
    totals: dict[str, float] = {}
    for _, data in all_ledgers(paths):
        for day, usd in days_of(data).items():
            totals[day] = totals.get(day, 0.0) + usd
    return totals


def all_ledgers(paths: ProjectPaths) -> list[tuple[str, dict[str, Any]]]:
    """Every readable agent ledger, by key."""
    found = []
    for key, data, _ in ledgers(paths):
        if data is not None:
            found.append((key, data))
    return found


def ledgers(paths: ProjectPaths) -> list[tuple[str, dict[str, Any] | None, str | None]]:
    """Every agent ledger by key: its object, or ``None`` and why it cannot be read."""
    directory = paths.cost / AGENTS
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    found: list[tuple[str, dict[str, Any] | None, str | None]] = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            found.append((name[:-5], read_json_object(directory / name), None))
        except Exception as exc:
            found.append((name[:-5], None, getattr(exc, "reason", None) or str(exc)))
    return found


def set_allowance(
    paths: ProjectPaths, key: str, allowance: dict[str, Any] | None
) -> dict[str, Any]:
    """The agent's allowance replaced (``None``: taken away); the ledger after it."""
    with flocked(os.fspath(paths.lock_for(f"cost-{key}")), what=f"the ledger of {key}"):
        path = agent_path(paths, key)
        data = _read(path)
        data["key"] = key
        if allowance is None:
            data.pop("allowance", None)
        else:
            data["allowance"] = allowance
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write_json(paths.inside(paths.cost / AGENTS / f"{key}.json"), data)
    return data
