"""``runeconsole agents`` and ``runeconsole agent register|heartbeat|crash|terminate``."""

from __future__ import annotations

import argparse

from runeconsole.cli.agents_table import COLUMNS, table_row
from runeconsole.cli.common import (
    add_fleet_option,
    fleet_sources,
    open_project,
    print_json,
    print_table,
    warn_problems,
)
from runeconsole.core.gc_passes import collector_paused
from runeconsole.services.claude.session.view import AgentView, agent_view
from runeconsole.services.registry import AgentRecord, Registry
from runeconsole.services.supervision.observations import ObservationFile


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    listing = subparsers.add_parser(
        "agents", parents=[common], help="list every agent identity with its liveness"
    )
    listing.add_argument("--json", action="store_true", help="one JSON object per identity")
    listing.add_argument(
        "--stale-only", action="store_true", help="only active agents past the stale threshold"
    )
    add_fleet_option(
        listing,
        "every source of a fleet file (local roots and hosts over ssh); keys become "
        "SOURCE/KEY when there is more than one, and a source that cannot be read is "
        "said on stderr (exit status 1, the other sources listed)",
    )
    listing.set_defaults(func=list_agents)

    agent = subparsers.add_parser("agent", help="change one agent identity")
    actions = agent.add_subparsers(dest="action", metavar="ACTION", required=True)
    reg = actions.add_parser("register", parents=[common], help="create (or replace) an identity")
    reg.add_argument("--role", required=True)
    reg.add_argument("--name", required=True)
    reg.add_argument("--session-id")
    reg.add_argument("--worktree", metavar="PATH")
    reg.add_argument("--tmux-session")
    reg.add_argument("--pid", type=int)
    reg.add_argument("--node-id")
    reg.add_argument("--bead-id")
    reg.add_argument("--predecessor", metavar="AGENT_ID")
    reg.add_argument("--json", action="store_true")
    reg.set_defaults(func=register_agent)
    for action, helptext in (
        ("heartbeat", "record that the agent is alive now"),
        ("crash", "mark the agent crashed (signals AGENT_CRASHED once)"),
        ("terminate", "mark the agent cleanly terminated"),
    ):
        sub = actions.add_parser(action, parents=[common], help=helptext)
        sub.add_argument("key", metavar="KEY", help="{role}-{name}")
        sub.add_argument("--json", action="store_true")
        if action != "heartbeat":
            sub.add_argument("--reason", help="why, recorded in the identity's metadata")
        sub.set_defaults(func=change_agent, action=action)


def open_registry(args: argparse.Namespace) -> Registry:
    """The registry, with any talisman problem said on stderr: a typo in the talisman
    must not stop a fleet's heartbeats, so the defaults are used."""
    project = open_project(args, strict=False)
    registry = Registry(project)
    warn_problems(project)
    return registry


def list_agents(args: argparse.Namespace) -> int:
    with collector_paused():  # every record, view and row stays alive until printed
        return _list_agents(args)


def _list_agents(args: argparse.Namespace) -> int:
    if args.fleet:
        from runeconsole.cli.fleet_agents import list_fleet_agents

        return list_fleet_agents(fleet_sources(args.fleet), args.json, args.stale_only)
    registry = open_registry(args)
    records = registry.stale() if args.stale_only else registry.list()
    observations = ObservationFile.of(registry.paths).load()
    views = [agent_view(r.fields, observations.get(r.key)) for r in records]
    if args.json:
        states = _review_states(registry, records, views)
        rows = [_json_row(r, view) for r, view in zip(records, views, strict=True)]
        for row, record in zip(rows, records, strict=True):
            row["review_state"] = states[record.key]
        print_json(rows)
        return 0
    if not records:
        if args.stale_only:
            print("no stale agents (active, with no heartbeat past the stale threshold)")
        else:
            print(f"no agents registered under {registry.paths.identities}")
        return 0
    print_table(
        COLUMNS,
        [table_row(record, view) for record, view in zip(records, views, strict=True)],
        [record.liveness for record in records],
    )
    return 0


def _json_row(record: AgentRecord, view: AgentView) -> dict[str, object]:
    """Every field read, plus what the agent is doing (hook-fed, else from its pane)."""
    row = record.to_json()
    if not record.error:
        row.update(view.to_json())
    return row


def _review_states(
    registry: Registry, records: list[AgentRecord], views: list[AgentView]
) -> dict[str, str]:
    """Where each agent's work stands for a reviewer (``review_state``): most are settled
    by what they are doing; git and the merge queue are brought in only for the others."""
    from runeconsole.services.review.states import settled_states

    found = settled_states(records, views)
    if all(found.values()):
        return {key: state for key, state in found.items() if state}
    from runeconsole.services.review.service import Reviews

    return Reviews(registry.project, registry=registry).states(records, views, found)


def register_agent(args: argparse.Namespace) -> int:
    record = open_registry(args).register(
        args.role,
        args.name,
        session_id=args.session_id,
        worktree=args.worktree,
        tmux_session=args.tmux_session,
        pid=args.pid,
        node_id=args.node_id,
        bead_id=args.bead_id,
        predecessor_id=args.predecessor,
    )
    return _report(args, record, f"registered {record.key} as {record.get('agent_id')}")


def change_agent(args: argparse.Namespace) -> int:
    registry = open_registry(args)
    if args.action == "heartbeat":
        record = registry.heartbeat(args.key)
        return _report(args, record, f"{record.key}: heartbeat at {record.get('last_seen')}")
    mark = registry.mark_crashed if args.action == "crash" else registry.mark_terminated
    record, changed = mark(args.key, args.reason)
    note = "" if changed else " (already; nothing changed)"
    return _report(args, record, f"{record.key}: {record.status}{note}")


def _report(args: argparse.Namespace, record: AgentRecord, message: str) -> int:
    if args.json:
        print_json(record.to_json())
    else:
        print(message)
    return 0
