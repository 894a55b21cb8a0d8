"""Budgets through the installed hook and status line: past 80 % a problem and a
notification; at 100 % every tool call denied with the budget named, until the operator
lets the agent go on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.problems import find_problems
from tests.support.claude import KEY, Bridge
from tests.support.cli import CliResult
from tests.support.hook_runner import decision
from tests.support.polling import wait_until

pytestmark = pytest.mark.timeout(120)


def budgets(made: Bridge, **limits: float) -> Path:
    """The budgets, and a notify command that writes what it is told into a file."""
    told = made.project.parent / "told.txt"
    lines = "".join(f"    {name}: {value}\n" for name, value in limits.items())
    (made.project / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  budgets:\n" + lines + "  notify:\n"
        f'    command: [sh, -c, \'echo "$0|$1" >> {told}\', "{{title}}", "{{body}}"]\n'
    )
    return told


def problems(made: Bridge) -> list[tuple[str, str]]:
    records = Registry(Project(made.project)).list()
    return [(p.kind, p.detail) for p in find_problems(records, {})]


def spend(made: Bridge, usd: float) -> None:
    data = made.status_input("after-a-turn")
    made.status_line({**data, "cost": {**data["cost"], "total_cost_usd": usd}})


@pytest.mark.e2e
def test_past_80_percent_the_agent_is_a_problem_and_the_operator_is_told(
    hooked: Bridge,
) -> None:
    told = budgets(hooked, per_day_usd=1)
    hooked.send("SessionStart")
    spend(hooked, 0.5)
    assert problems(hooked) == []
    spend(hooked, 0.85)
    assert problems(hooked) == [("budget", "per_day_usd: $0.85 of $1.00 today (85%)")]
    wait_until(lambda: told.exists() and told.read_text().strip(), 10)
    assert told.read_text() == (
        f"{KEY} is at 85% of its budget|per_day_usd: $0.85 of $1.00 today (85%)\n"
    )
    result = hooked.send("PreToolUse-Bash")
    assert (result.exit_code, result.stdout) == (0, "")  # not held yet


@pytest.mark.e2e
def test_at_100_percent_every_tool_call_is_denied_naming_the_budget(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    budgets(hooked, per_agent_usd=2)
    hooked.send("SessionStart")
    spend(hooked, 2.2)
    for name in ("PreToolUse-Bash", "PreToolUse-AskUserQuestion"):
        results = hooked.runner.send(hooked.payload(name))
        assert [r.errors for r in results] == [[]]
        assert decision(results).permission == "deny"
        reason = results[0].output["hookSpecificOutput"]["permissionDecisionReason"]
        assert "per_agent_usd: $2.20 of $2.00 so far (110%)" in reason
        assert f"runeconsole budget allow {KEY}" in reason
    assert problems(hooked) == [("budget", "held: per_agent_usd: $2.20 of $2.00 so far (110%)")]
    result = cli("budget", "allow", KEY, "--usd", "1", "--root", str(hooked.project))
    assert result.code == 0 and "was held" in result.out
    quiet = hooked.send("PreToolUse-Bash")
    assert (quiet.exit_code, quiet.stdout) == (0, "")
    assert problems(hooked) == []
    spend(hooked, 3.3)  # the dollar allowed, spent: held again
    assert decision(hooked.runner.send(hooked.payload("PreToolUse-Bash"))).permission == "deny"


@pytest.mark.e2e
def test_the_fleets_day_holds_every_agent(hooked: Bridge) -> None:
    budgets(hooked, fleet_day_usd=1)
    hooked.send("SessionStart")
    spend(hooked, 0.6)
    other = Bridge(hooked.project, hooked.runner, hooked.transcript, "77777777-cccc")
    other.send("SessionStart")
    spend(other, 0.6)  # the fleet has now spent $1.20 today
    for made in (hooked, other):
        assert decision(made.runner.send(made.payload("PreToolUse-Bash"))).permission == "deny"


@pytest.mark.e2e
def test_a_session_without_a_status_line_is_held_on_its_estimate(hooked: Bridge) -> None:
    budgets(hooked, per_day_usd=0.01)
    hooked.write_usage("msg_1", input=1200, output=40, cache_read=16000, cache_creation=3000)
    hooked.send("SessionStart")
    assert hooked.identity()["cost"]["estimated"] is True
    results = hooked.runner.send(hooked.payload("PreToolUse-Bash"))
    assert decision(results).permission == "deny"
    assert "$0.02 of $0.01 today" in json.dumps(results[0].output)
