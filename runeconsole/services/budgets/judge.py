"""Where an agent stands against the budgets: a pure function of what was spent.

| state | when |
| --- | --- |
| ``ok`` | under 80 % of every budget (or no budget set) |
| ``warn`` | 80 % of a budget or more: a problem row and a notification |
| ``held`` | 100 % of a budget or more: every tool call is denied until the operator lifts it |
| ``allowed`` | the operator let it go on (``budget allow``): for the rest of the day, |
| | or for N more dollars |

The budget closest to its limit names the state. An allowance of N dollars lasts until the
agent has spent them (then the budgets apply again: a spent allowance holds it at once);
one without an amount lasts until the day it was given ends.
"""

from __future__ import annotations

# The states are the words of the cost an identity carries (services/cost/__init__.py):
# the judge says them, and its readers find them here too.
from runeconsole.services.cost import ALLOWED as ALLOWED
from runeconsole.services.cost import HELD as HELD
from runeconsole.services.cost import OK as OK
from runeconsole.services.cost import WARN as WARN
from runeconsole.services.cost.ledger import Spent

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

WARN_AT = 0.8
PER_AGENT, PER_DAY, FLEET_DAY = "per_agent_usd", "per_day_usd", "fleet_day_usd"
BUDGETS = (PER_AGENT, PER_DAY, FLEET_DAY)
WHAT = {
    PER_AGENT: "so far",
    PER_DAY: "today",
    FLEET_DAY: "by the fleet today",
}


def money(usd: float) -> str:
    return f"${usd:,.2f}"


class Verdict:
    __slots__ = ("budget", "detail", "limit", "spent", "state")

    def __init__(
        self,
        state: str = OK,
        budget: str | None = None,
        spent: float = 0.0,
        limit: float | None = None,
        detail: str = "",
    ) -> None:
        self.state, self.budget, self.spent, self.limit = state, budget, spent, limit
        self.detail = detail

    @property
    def percent(self) -> int | None:
        return None if not self.limit else int(self.spent * 100 / self.limit)

    def to_json(self, day: str) -> dict[str, Any]:
        return {
            "state": self.state,
            "budget": self.budget,
            "spent_usd": round(self.spent, 6),
            "limit_usd": self.limit,
            "detail": self.detail,
            "day": day,
        }


def allowance_left(allowance: dict[str, Any] | None, spent: Spent) -> float | None:
    """Dollars the operator's allowance still covers (``inf``: the rest of its day;
    ``None``: no allowance in force)."""
    if not isinstance(allowance, dict):
        return None
    usd = allowance.get("usd")
    if usd is None:
        return float("inf") if allowance.get("day") == spent.day else None
    start = allowance.get("from_usd")
    if not isinstance(usd, int | float) or not isinstance(start, int | float):
        return None
    left = float(start) + float(usd) - spent.usd
    return left if left > 0 else None


def judge(spent: Spent, limits: dict[str, Any]) -> Verdict:
    """The agent's state: ``limits`` are the budgets set (dollars; ``None``: none)."""
    left = allowance_left(spent.allowance, spent)
    if left is not None:
        detail = "allowed by the operator for the rest of the day"
        if left != float("inf"):
            detail = f"allowed by the operator: {money(left)} more"
        return Verdict(ALLOWED, detail=detail)
    worst = Verdict()
    worst_share = -1.0
    figures = {PER_AGENT: spent.usd, PER_DAY: spent.today_usd, FLEET_DAY: spent.fleet_today_usd}
    for budget in BUDGETS:
        limit = limits.get(budget)
        if not isinstance(limit, int | float) or isinstance(limit, bool) or limit <= 0:
            continue
        share = figures[budget] / limit
        if share > worst_share:
            worst_share = share
            state = HELD if share >= 1 else WARN if share >= WARN_AT else OK
            worst = Verdict(state, budget, figures[budget], float(limit))
    if worst.budget is not None and worst.state != OK:
        worst.detail = (
            f"{worst.budget}: {money(worst.spent)} of {money(worst.limit or 0)} "
            f"{WHAT[worst.budget]} ({worst.percent}%)"
        )
    return worst


def checked_limits(value: object) -> tuple[dict[str, float | None], list[str]]:
    """The talisman's ``budgets`` mapping, checked: each budget's limit and what was wrong."""
    limits: dict[str, float | None] = dict.fromkeys(BUDGETS)
    wrong: list[str] = []
    found = value if isinstance(value, dict) else {}
    if value is not None and not isinstance(value, dict):
        wrong.append(f"budgets is {value!r}; allowed: a mapping of {', '.join(BUDGETS)}")
    for name, limit in found.items():
        if name not in BUDGETS:
            wrong.append(f"budgets.{name} is not a budget (known: {', '.join(BUDGETS)})")
        elif limit is None:
            continue
        elif isinstance(limit, int | float) and not isinstance(limit, bool) and 0 < limit < 1e9:
            limits[name] = float(limit)
        else:
            wrong.append(f"budgets.{name} is {limit!r}; allowed: dollars, a number > 0")
    return limits, wrong
