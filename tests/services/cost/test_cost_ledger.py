"""An agent's spending kept across sessions and days: what a session's running total
books, estimates replaced by real figures, the fleet's day, and a ledger that cannot be
read left as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.errors import UnreadableFile
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.budgets import booking
from runeconsole.services.cost import ledger, prices
from runeconsole.services.cost.totals import Totals
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry

DAY, NEXT = "2026-11-24", "2026-11-25"


@pytest.fixture
def paths(project: Path) -> ProjectPaths:
    return ProjectPaths(project)


def book(paths: ProjectPaths, key: str, session: str, usd: float, *, estimated: bool = False,
         day: str = DAY) -> ledger.Spent | None:  # fmt: skip
    return ledger.record(paths, key, key.split("-")[0], session, usd, estimated, day, 0.0)


def test_a_running_total_books_only_what_it_grew_by(paths: ProjectPaths) -> None:
    book(paths, "claude-a", "s1", 0.5)
    spent = book(paths, "claude-a", "s1", 1.25)
    assert spent is not None and (spent.usd, spent.today_usd) == (1.25, 1.25)
    assert book(paths, "claude-a", "s1", 1.25) is None  # the same figure again: nothing
    spent = book(paths, "claude-a", "s2", 2.0, day=NEXT)  # the agent's next session
    assert spent is not None and (spent.usd, spent.today_usd) == (3.25, 2.0)
    assert ledger.read(paths, "claude-a")["days"] == {DAY: 1.25, NEXT: 2.0}
    assert ledger.fleet_days(paths) == {DAY: 1.25, NEXT: 2.0}


def test_the_real_figure_replaces_an_estimate_and_is_never_replaced_by_one(
    paths: ProjectPaths,
) -> None:
    book(paths, "claude-a", "s1", 3.0, estimated=True)
    spent = book(paths, "claude-a", "s1", 2.4)  # the status line's own figure: lower
    assert spent is not None and spent.usd == pytest.approx(2.4) and not spent.estimated
    assert book(paths, "claude-a", "s1", 9.0, estimated=True) is None
    assert ledger.fleet_days(paths)[DAY] == pytest.approx(2.4)


def test_a_session_counting_again_from_zero_adds_its_new_spending(paths: ProjectPaths) -> None:
    book(paths, "claude-a", "s1", 5.0)
    spent = book(paths, "claude-a", "s1", 0.75)  # resumed: Claude Code counts from zero
    assert spent is not None and spent.usd == pytest.approx(5.75)


def test_the_fleet_day_adds_every_agent_and_is_rebuilt_when_unreadable(
    paths: ProjectPaths,
) -> None:
    book(paths, "claude-a", "s1", 1.0)
    book(paths, "worker-b", "s2", 2.5)
    (paths.cost / "days.json").write_text("{torn")
    spent = book(paths, "worker-b", "s2", 3.0)
    assert spent is not None and spent.fleet_today_usd == pytest.approx(4.0)
    assert json.loads((paths.cost / "days.json").read_text())["days"] == {DAY: 4.0}


def test_an_unreadable_ledger_is_refused_and_left_as_it_is(paths: ProjectPaths) -> None:
    book(paths, "claude-a", "s1", 1.0)
    path = paths.cost / "agents" / "claude-a.json"
    path.write_text('["not an object"]')
    with pytest.raises(UnreadableFile, match="expected a JSON object"):
        book(paths, "claude-a", "s1", 2.0)
    assert path.read_text() == '["not an object"]'
    assert [(key, data, why) for key, data, why in ledger.ledgers(paths)] == [
        ("claude-a", None, "expected a JSON object, found list")
    ]


def test_prices_find_a_model_by_its_id_or_its_family() -> None:
    assert prices.price("claude-opus-5-5")["input"] == 4.0
    assert prices.price("claude-sonnet-4-5-20250929")["output"] == 15.0
    assert prices.price("some-future-model") == prices.PRICES["default"]
    assert prices.window("claude-opus-5-5") == 1_000_000
    assert prices.window("claude-sonnet-4-5[1m]") == 1_000_000
    assert prices.window("claude-haiku-4-5", {"claude-haiku-4-5": 64_000}) == 64_000
    assert prices.window("unknown") is None
    # The stand-in's usage on the default model: Claude Code itself says $0.0238.
    tokens = {"input": 1200, "output": 40, "cache_creation": 3000, "cache_read": 16000}
    assert prices.estimate(tokens, prices.price("claude-opus-5-5")) == pytest.approx(0.0238)


def test_a_talisman_table_keeps_its_good_entries_and_names_the_bad_ones() -> None:
    good, wrong = prices.checked_prices(
        {"My-Model": {"input": 1, "output": 2}, "bad": {"input": -1}, "odd": "cheap"}
    )
    assert good == {
        "my-model": {"input": 1.0, "output": 2.0, "cache_write": 0.0, "cache_read": 0.0}
    }
    assert len(wrong) == 2
    windows, wrong = prices.checked_windows({"m": 500_000, "tiny": 10, "x": True})
    assert windows == {"m": 500_000} and len(wrong) == 2


def test_a_successor_keeps_its_keys_spending_so_the_day_never_falls(
    project: Path, clock: ManualClock
) -> None:
    """A re-spawn or a handoff registers the key again: the identity's ``cost`` (the key's
    ledger, which outlives its sessions) stays, and the new session's spending adds to it."""
    registry = Registry(Project(project, clock))
    registry.register("claude", "web")
    now = clock.now()
    day = ledger.local_day(now)

    def status_line(session: str, total: float) -> None:  # what the status line books
        fields = dict(registry.get("claude-web").fields)
        entry = booking.Entry(registry.paths, "claude-web", fields, {})
        booking.book(entry, session, total, False, now, {})
        registry.update("claude-web", {"cost": fields["cost"]})

    def today() -> float:
        totals = Totals()
        for record in registry.list():
            totals.update(record.key, record.fields)
        return totals.today_usd(day)

    status_line("s1", 2.5)
    assert today() == 2.5
    before = registry.get("claude-web").get("agent_id")
    registry.register("claude", "web", predecessor_id=before)  # the successor, same key
    assert today() == 2.5
    assert registry.get("claude-web").get("cost")["usd"] == 2.5
    status_line("s2", 0.75)  # its own session counts from zero: added, not replacing
    assert today() == 3.25
