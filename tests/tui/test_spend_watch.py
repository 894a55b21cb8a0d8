"""The top line's spending as the console follows it: agent by agent as they change on the
UI thread, and a whole fleet at once in a worker after its first rows (``catch_up``)."""

from __future__ import annotations

from datetime import UTC, datetime

from runeconsole.services.cost.ledger import local_day
from runeconsole.services.liveness import AgentRecord
from runeconsole.tui.app_base.spend import CATCH_UP_CHUNK, SpendWatch

NOW = datetime(2026, 2, 26, 12, 0, tzinfo=UTC)
TODAY = local_day(NOW)


def agent(n: int, usd: float, state: str = "ok") -> AgentRecord:
    cost: dict[str, object] = {"usd": usd, "today_usd": usd, "day": TODAY}
    if state != "ok":
        cost["budget"] = {"day": TODAY, "state": state, "detail": f"per_day_usd: {state}"}
    return AgentRecord(f"worker-w{n:05d}", "", {"role": "worker", "cost": cost})


def test_catching_up_a_fleet_takes_in_what_following_it_agent_by_agent_would() -> None:
    fleet = {f"worker-w{n:05d}": agent(n, n / 100) for n in range(2 * CATCH_UP_CHUNK + 7)}
    followed, caught_up = SpendWatch(), SpendWatch()
    followed.follow(dict(fleet), NOW)
    assert caught_up.catch_up(fleet, fleet.get, NOW) == []  # first seen: no toast
    assert caught_up.totals.usd() == followed.totals.usd() > 0
    assert caught_up.text(NOW)[0].plain == followed.text(NOW)[0].plain


def test_a_budget_crossed_since_an_agent_was_followed_is_a_toast_when_caught_up() -> None:
    watch = SpendWatch()
    watch.follow({"worker-w00001": agent(1, 0.5)}, NOW)
    fleet = {"worker-w00001": agent(1, 1.5, "held"), "worker-w00002": agent(2, 9, "held")}
    toasts = watch.catch_up(fleet, fleet.get, NOW)
    assert [severity for _, severity in toasts] == ["error"]  # w00002 is new: its row says it
    assert toasts[0][0].startswith("worker-w00001 is held")


def test_the_top_line_is_worked_out_again_only_when_the_totals_move_or_the_minute_turns() -> None:
    watch = SpendWatch()
    watch.follow({"worker-w00001": agent(1, 0.5)}, NOW)
    shown = watch.text(NOW)
    # A heartbeat: the same cost in a record read again.
    watch.follow({"worker-w00001": agent(1, 0.5)}, NOW.replace(second=30))
    assert watch.text(NOW.replace(second=30)) is shown
    watch.follow({"worker-w00001": agent(1, 0.75)}, NOW.replace(second=40))
    spent_more = watch.text(NOW.replace(second=40))
    assert spent_more is not shown and "$0.75" in spent_more[0].plain
    assert watch.text(NOW.replace(minute=1)) is not spent_more  # a minute on: asked again


def test_rate_limits_reported_anew_move_the_totals() -> None:
    watch = SpendWatch()
    limits = {"reported_at": "2026-02-26T11:59:00Z", "five_hour": {"used_percentage": 42}}
    record = AgentRecord("worker-w00001", "", {"role": "worker", "rate_limits": limits})
    watch.follow({"worker-w00001": record}, NOW)
    assert "5h 42%" in watch.text(NOW)[1].plain
    later = dict(limits, five_hour={"used_percentage": 81}, reported_at="2026-02-26T11:59:30Z")
    record = AgentRecord("worker-w00001", "", {"role": "worker", "rate_limits": later})
    watch.follow({"worker-w00001": record}, NOW)
    assert "5h 81%" in watch.text(NOW)[1].plain
