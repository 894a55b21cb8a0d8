"""``runeconsole cost`` and ``runeconsole budget``: what the agents cost per agent, role,
day and source, so far and today; a held agent let go on from the shell."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.cost import ledger
from tests.support.cli import CliResult
from tests.support.cost import spend
from tests.support.fleet import fleet_file, project_root

NOW = datetime.now().astimezone()
TODAY, YESTERDAY = ledger.local_day(NOW), ledger.local_day(NOW - timedelta(days=1))


def test_cost_by_agent_role_and_day(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    root = project_root(tmp_path, "shop", "a", "b")
    spend(root, "worker-a", "s1", 1.5, when=NOW - timedelta(days=1))
    spend(root, "worker-a", "s2", 0.25)
    spend(root, "worker-b", "s3", 2.0, estimated=True)
    by_agent = cli("cost", "--json", "--root", str(root)).json()
    assert by_agent["day"] == TODAY  # type: ignore[index]
    assert (by_agent["usd"], by_agent["today_usd"], by_agent["estimated"]) == (3.75, 2.25, True)  # type: ignore[index]
    rows = {row["name"]: row for row in by_agent["rows"]}  # type: ignore[index]
    assert (rows["worker-a"]["usd"], rows["worker-a"]["today_usd"]) == (1.75, 0.25)
    assert rows["worker-b"]["estimated"] is True
    by_role = cli("cost", "--by", "role", "--json", "--root", str(root)).json()
    assert [(r["name"], r["usd"], r["agents"]) for r in by_role["rows"]] == [("worker", 3.75, 2)]  # type: ignore[index]
    by_day = cli("cost", "--by", "day", "--json", "--root", str(root)).json()
    assert [(r["name"], r["usd"]) for r in by_day["rows"]] == [(TODAY, 2.25), (YESTERDAY, 1.5)]  # type: ignore[index]
    table = cli("cost", "--root", str(root)).out
    assert "worker-b  ~$2.00  ~$2.00" in table
    assert "fleet: ~$2.25 today, ~$3.75 so far" in table


def test_an_unreadable_ledger_is_a_row_that_says_why(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    root = project_root(tmp_path, "shop", "a")
    spend(root, "worker-a", "s1", 1.0)
    (ProjectPaths(root).cost / "agents" / "worker-z.json").write_text("{")
    result = cli("cost", "--root", str(root))
    assert result.code == 0
    assert "worker-z" in result.out and "unreadable: not valid JSON" in result.out


def test_budget_status_lists_the_held_and_allow_lets_one_go_on(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    root = project_root(tmp_path, "shop", "a", "b")
    (root / ".claude" / "talisman.yml").write_text("runeconsole:\n  budgets:\n    per_day_usd: 1\n")
    spend(root, "worker-a", "s1", 1.2)
    spend(root, "worker-b", "s2", 0.1)
    status = cli("budget", "status", "--json", "--root", str(root)).json()
    assert [(r["name"], r["budget"]) for r in status["rows"]] == [("worker-a", "held")]  # type: ignore[index]
    allowed = cli("budget", "allow", "worker-a", "--json", "--root", str(root)).json()
    assert (allowed["was"]["state"], allowed["now"]["state"]) == ("held", "allowed")  # type: ignore[index]
    assert allowed["allowance"]["usd"] is None and allowed["allowance"]["day"] == TODAY  # type: ignore[index]
    identity = json.loads((ProjectPaths(root).identities / "worker-a.json").read_text())
    assert identity["cost"]["budget"]["state"] == "allowed"


def test_mistakes_are_refused_with_exit_2(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    root = project_root(tmp_path, "shop", "a")
    for args, said in (
        (("budget", "allow", "worker-nobody"), "no agent worker-nobody"),
        (("budget", "allow", "../etc"), "agent key"),
        (("budget", "allow", "worker-a", "--usd", "-3"), "--usd -3"),
        (("cost", "--by", "source"), "--by source needs --fleet"),
    ):
        result = cli(*args, "--root", str(root))
        assert result.code == 2 and said in result.err, (args, result.err)


def test_cost_of_a_fleet_by_source(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    shop, ml = project_root(tmp_path, "shop", "a", "b"), project_root(tmp_path, "ml", "a")
    spend(shop, "worker-a", "s1", 1.0)
    spend(shop, "worker-b", "s2", 0.5)
    spend(ml, "worker-a", "s3", 4.0, when=NOW - timedelta(days=2))
    fleet = fleet_file(tmp_path, {"name": "shop", "root": shop}, {"name": "ml", "root": ml})
    found = cli("cost", "--fleet", str(fleet), "--by", "source", "--json")
    assert found.code == 0, found.err
    rows = {r["name"]: (r["usd"], r["today_usd"], r["agents"]) for r in found.json()["rows"]}  # type: ignore[index]
    assert rows == {"shop": (1.5, 1.5, 2), "ml": (4.0, 0.0, 1)}
