"""``runeconsole agents --fleet [FILE]``: every agent of every source, from one snapshot of
the merged ``events`` stream (the same rows the fleet console draws)."""

from __future__ import annotations

import sys
from typing import Any

from runeconsole.cli.agents_table import COLUMNS, table_row
from runeconsole.cli.common import print_json, print_table
from runeconsole.core.control import printable
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.events.sections import AGENT
from runeconsole.services.liveness import RED, AgentRecord
from runeconsole.services.sources import UP
from runeconsole.services.sources.fleet import SOURCE, FleetFeed


def fleet_snapshot(
    specs: list[SourceSpec],
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Agent rows by merged key (each with its ``source``), and each source's state."""
    agents: dict[str, dict[str, Any]] = {}
    states: dict[str, dict[str, Any]] = {}

    def take(events: list[dict[str, Any]]) -> None:
        for event in events:
            kind, key = event.get("kind"), str(event.get("key"))
            if event.get("event") == "upsert" and kind == SOURCE:
                states[key] = event["data"]
            elif event.get("event") == "upsert" and kind == AGENT:
                agents[key] = {**event["data"], "key": key, "source": event["source"]}
            elif event.get("event") == "remove" and kind == AGENT:
                agents.pop(key, None)

    FleetFeed(specs).run(take, follow_changes=False)
    return agents, states


def list_fleet_agents(
    specs: list[SourceSpec],
    as_json: bool,
    stale_only: bool,
) -> int:
    agents, states = fleet_snapshot(specs)
    down = 0
    for name, state in sorted(states.items()):
        if state.get("state") != UP:
            down += 1
            reason = state.get("reason") or "no answer"
            print(
                printable(f"warning: source {name} is {state.get('state')}: {reason}"),
                file=sys.stderr,
            )
    status = 1 if down else 0  # the rows of the sources that answered are printed all the same
    rows = [agents[key] for key in sorted(agents)]
    if stale_only:
        # As ``agents --stale-only`` on one root: still marked active, heartbeat past the
        # stale threshold (red); a yellow agent is late, not stale.
        rows = [
            r
            for r in rows
            if not r.get("error") and r.get("status") == "active" and r.get("liveness") == RED
        ]
    if as_json:
        print_json(rows)
        return status
    records = [AgentRecord.from_json(row, row["key"]) for row in rows]
    if not records:
        print("no agents in any source of the fleet")
        return status
    print_table(COLUMNS, [table_row(r) for r in records], [r.liveness for r in records])
    return status
