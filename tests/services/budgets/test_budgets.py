"""Budgets: where an agent stands (ok, 80 %, held, allowed), and the operator's allowance."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.budgets import hold
from runeconsole.services.budgets.judge import (
    ALLOWED,
    HELD,
    OK,
    WARN,
    checked_limits,
    judge,
)
from runeconsole.services.cost import ledger
from runeconsole.services.cost.ledger import Spent

DAY = "2026-11-24"
LIMITS = {"per_agent_usd": 50.0, "per_day_usd": 10.0, "fleet_day_usd": 100.0}


def spent(usd: float, today: float, fleet: float, allowance: dict | None = None) -> Spent:
    return Spent(usd, today, fleet, day=DAY, allowance=allowance)


@pytest.mark.parametrize(
    ("figures", "state", "budget"),
    [
        ((1.0, 1.0, 1.0), OK, "per_day_usd"),
        ((8.0, 8.0, 20.0), WARN, "per_day_usd"),
        ((45.0, 2.0, 20.0), WARN, "per_agent_usd"),
        ((12.0, 10.5, 20.0), HELD, "per_day_usd"),
        ((3.0, 3.0, 100.0), HELD, "fleet_day_usd"),
    ],
)
def test_the_budget_nearest_its_limit_names_the_state(
    figures: tuple[float, float, float], state: str, budget: str
) -> None:
    verdict = judge(spent(*figures), LIMITS)
    assert (verdict.state, verdict.budget) == (state, budget)
    if state != OK:
        assert verdict.detail.startswith(f"{budget}: $")


def test_no_budget_set_is_always_ok() -> None:
    assert judge(spent(1e6, 1e6, 1e6), {}).state == OK


def test_an_allowance_lasts_its_dollars_or_the_rest_of_its_day() -> None:
    dollars = {"usd": 5.0, "from_usd": 12.0, "day": "2026-11-01"}
    assert judge(spent(15.0, 15.0, 15.0, dollars), LIMITS).state == ALLOWED
    assert "$2.00 more" in judge(spent(15.0, 15.0, 15.0, dollars), LIMITS).detail
    assert judge(spent(17.0, 17.0, 17.0, dollars), LIMITS).state == HELD  # spent: held again
    today = {"usd": None, "from_usd": 12.0, "day": DAY}
    assert judge(spent(99.0, 99.0, 99.0, today), LIMITS).state == ALLOWED
    yesterday = {**today, "day": "2026-11-23"}
    assert judge(spent(99.0, 99.0, 99.0, yesterday), LIMITS).state == HELD


def test_bad_limits_are_named_and_left_unset() -> None:
    limits, wrong = checked_limits({"per_day_usd": "ten", "per_week_usd": 5, "fleet_day_usd": 0})
    assert limits == {"per_agent_usd": None, "per_day_usd": None, "fleet_day_usd": None}
    assert len(wrong) == 3 and any("per_week_usd is not a budget" in w for w in wrong)


def test_a_held_agent_is_denied_until_the_operator_allows_it(project: Path) -> None:
    paths = ProjectPaths(project)
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    day = ledger.local_day(now)
    ledger.record(paths, "claude-a", "claude", "s1", 11.0, False, day, 0.0)
    denied = hold.denial(paths, "claude-a", now, LIMITS)
    assert denied is not None
    output, verdict = denied
    assert verdict.state == HELD and "per_day_usd: $11.00 of $10.00 today" in output
    assert '"permissionDecision": "deny"' in output
    allowed = hold.allow(paths, "claude-a", 2.0, now, LIMITS)
    assert (allowed.before.state, allowed.after.state) == (HELD, ALLOWED)
    assert hold.denial(paths, "claude-a", now, LIMITS) is None
    ledger.record(paths, "claude-a", "claude", "s1", 13.5, False, day, 0.0)  # spent the $2
    assert hold.denial(paths, "claude-a", now, LIMITS) is not None
