"""``runeconsole cost`` (what the agents cost) and ``runeconsole budget`` (the budgets:
where each agent stands, and ``allow`` to let a held agent go on)."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from runeconsole.cli.common import (
    add_fleet_option,
    fleet_sources,
    open_project,
    print_json,
    print_table,
)
from runeconsole.core.errors import InvalidInput
from runeconsole.core.validate import validate_name
from runeconsole.services.budgets import hold, standing
from runeconsole.services.budgets.judge import HELD, WARN, money
from runeconsole.services.claude.bridge.settings import ClaudeSettings
from runeconsole.services.cost import ledger, summary
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry

TINT = {HELD: "red", WARN: "yellow"}


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    cost = subparsers.add_parser(
        "cost", parents=[common], help="what the agents cost: so far and today, in dollars"
    )
    cost.add_argument(
        "--by",
        choices=summary.BY,
        default="agent",
        help="one line per agent (default), role, day, or source (with --fleet)",
    )
    cost.add_argument("--json", action="store_true")
    add_fleet_option(cost, "every source of a fleet file, from the agents each one shows")
    cost.set_defaults(func=show_cost)

    budget = subparsers.add_parser("budget", help="spending budgets: status, allow")
    actions = budget.add_subparsers(dest="action", metavar="ACTION", required=True)
    status = actions.add_parser(
        "status", parents=[common], help="each agent against the budgets (held, past 80 %%)"
    )
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=show_cost, by="agent", fleet=None, budgets_only=True)
    allow = actions.add_parser(
        "allow",
        parents=[common],
        help="let a held agent go on: for the rest of the day, or for --usd N more dollars",
    )
    allow.add_argument("key", metavar="AGENT", help="the agent's key ({role}-{name})")
    allow.add_argument("--usd", type=float, metavar="N", help="dollars more it may spend")
    allow.add_argument("--json", action="store_true")
    allow.set_defaults(func=allow_agent)


def _today(project: Project) -> str:
    return ledger.local_day(project.clock.now())


def show_cost(args: argparse.Namespace) -> int:
    if args.fleet:
        return _fleet_cost(args)
    if args.by == "source":
        raise InvalidInput("--by source needs --fleet (one root is one source)")
    project = open_project(args)
    day = _today(project)
    limits = project.settings(ClaudeSettings).budgets
    rows = standing.from_ledgers(project.paths, day, limits)
    if getattr(args, "budgets_only", False):
        rows = [row for row in rows if row.error or row.budget != "ok"]
    days = ledger.rebuilt_fleet_days(project.paths) if args.by == "day" else None
    found = summary.report(rows, args.by, day, limits, days)
    registry = Registry(project)
    found.rate_limits = summary.latest_rate_limits(
        (record.fields for record in registry.list()), project.clock.now()
    )
    return _print(found, args.json, getattr(args, "budgets_only", False))


def _fleet_cost(args: argparse.Namespace) -> int:
    from runeconsole.cli.fleet_agents import fleet_snapshot
    from runeconsole.services.sources import UP

    if args.by == "day":
        raise InvalidInput(
            "--by day reads one root's ledgers; with --fleet use --by agent, role or source"
        )
    agents, states = fleet_snapshot(fleet_sources(args.fleet))
    now = datetime.now().astimezone()
    day = ledger.local_day(now)
    rows = [
        found
        for key, row in sorted(agents.items())
        if (found := summary.from_fields(key, row, day, str(row.get("source") or "")))
    ]
    report = summary.report(rows, args.by, day)
    report.rate_limits = summary.latest_rate_limits(agents.values(), now)
    down = [name for name, state in states.items() if state.get("state") != UP]
    for name in sorted(down):
        reason = states[name].get("reason") or "no answer"
        print(f"warning: source {name} is {states[name].get('state')}: {reason}", file=sys.stderr)
    return _print(report, args.json, False) or (1 if down else 0)


def _print(found: summary.CostReport, as_json: bool, budgets_only: bool) -> int:
    if as_json:
        print_json(found.to_json())
        return 0
    mark = "~" if found.estimated else ""
    if not found.groups:
        print("no agent is held or past 80 % of a budget" if budgets_only else "nothing spent")
    else:
        headers = (found.by.upper(), "TODAY", "SO FAR", "AGENTS", "BUDGET")
        rows, tints = [], []
        for group in found.groups:
            if group.error is not None:
                rows.append((group.name, "", "", "", f"unreadable: {group.error}"))
                tints.append("red")
                continue
            tilde = "~" if group.estimated else ""
            rows.append(
                (
                    group.name,
                    tilde + money(group.today_usd),
                    tilde + money(group.usd),
                    str(group.agents) if found.by != "day" else "",
                    group.detail if group.budget != "ok" else "",
                )
            )
            tints.append(TINT.get(group.budget, ""))
        print_table(headers, rows, tints)
    print(f"fleet: {mark}{money(found.today_usd)} today, {mark}{money(found.usd)} so far")
    if found.estimated:
        print("~ estimated from transcripts (no status line yet) at the price table's rates")
    limits = ", ".join(f"{name} {money(v)}" for name, v in found.limits.items() if v)
    if limits:
        print(f"budgets: {limits}")
    if found.rate_limits:
        print(f"plan: {summary.plan_text(found.rate_limits)}")
    return 0


def allow_agent(args: argparse.Namespace) -> int:
    key = validate_name(args.key, "agent key")
    if args.usd is not None and not 0 < args.usd < 1e9:
        raise InvalidInput(f"--usd {args.usd:g}: dollars more, a number > 0")
    project = open_project(args)
    known = (project.paths.identities / f"{key}.json").exists() or (
        project.paths.cost / ledger.AGENTS / f"{key}.json"
    ).exists()
    if not known:
        raise InvalidInput(f"no agent {key} (no identity and no ledger under {project.root})")
    limits = project.settings(ClaudeSettings).budgets
    done = hold.allow(project.paths, key, args.usd, project.clock.now(), limits)
    if args.json:
        print_json(done.to_json())
        return 0
    was = "held" if done.before.state == HELD else f"not held ({done.before.state})"
    print(f"{key} was {was}: {done.after.detail}")
    return 0
