"""Where every agent of a root stands today, from its ledger: what it spent, judged
against the budgets (the rows of ``runeconsole cost`` and ``budget status``)."""

from __future__ import annotations

from typing import Any

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.budgets.judge import judge
from runeconsole.services.cost import ledger
from runeconsole.services.cost.summary import AgentCost


def from_ledgers(paths: ProjectPaths, day: str, limits: dict[str, Any]) -> list[AgentCost]:
    """Every agent ledger of the root, judged against ``limits`` today."""
    fleet_today = ledger.fleet_days(paths).get(day, 0.0)
    rows = []
    for key, data, error in ledger.ledgers(paths):
        if data is None:
            rows.append(AgentCost(key, error=error))
            continue
        spent = ledger.Spent.of(data, day, fleet_today)
        verdict = judge(spent, limits)
        role = data.get("role")
        rows.append(
            AgentCost(
                key,
                role if isinstance(role, str) else "",
                "",
                spent.usd,
                spent.today_usd,
                spent.estimated,
                verdict.state,
                verdict.detail,
            )
        )
    return rows
