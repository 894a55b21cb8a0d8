"""``runeconsole permissions``: Claude Code's permission requests and the operator's rules.

``pending`` lists the requests waiting for a decision (an agent's hook waits while a
console is open); ``decide ID --allow|--deny [--message TEXT]`` decides one, as the
console does; ``history`` is every decision with who made it. ``list``, ``allow``,
``deny`` and ``remove`` keep the rules that decide at once: exact tool, exact command or
path, for one agent (``--agent KEY``) or all; a deny wins.
"""

from __future__ import annotations

import argparse

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.core.control import printable
from runeconsole.core.errors import InvalidInput
from runeconsole.services.claude.permissions.files import ALLOW, DENY
from runeconsole.services.claude.permissions.service import PermissionRequest, Permissions


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = subparsers.add_parser(
        "permissions", help="Claude Code permission requests: pending, decide, rules"
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    pending = actions.add_parser("pending", parents=[common], help="requests waiting for you")
    pending.add_argument("--json", action="store_true")
    pending.set_defaults(func=show_pending)
    history = actions.add_parser("history", parents=[common], help="every decision, who made it")
    history.add_argument("--agent", help="only this agent's (its key)")
    history.add_argument(
        "--all", action="store_true", help="also the archived ones (runeconsole prune)"
    )
    history.add_argument("--json", action="store_true")
    history.set_defaults(func=show_history)
    decide = actions.add_parser("decide", parents=[common], help="allow or deny a request")
    decide.add_argument("id", help="the request's id (perm-…)")
    choice = decide.add_mutually_exclusive_group(required=True)
    choice.add_argument("--allow", action="store_const", const=ALLOW, dest="behavior")
    choice.add_argument("--deny", action="store_const", const=DENY, dest="behavior")
    decide.add_argument("--message", help="with --deny: the reason the model is told")
    decide.add_argument(
        "--always",
        action="store_true",
        help="also a standing rule for this exact tool and command or path (this agent's)",
    )
    decide.add_argument(
        "--every-agent", action="store_true", help="with --always: the rule is for all agents"
    )
    decide.add_argument("--json", action="store_true")
    decide.set_defaults(func=decide_one)
    listing = actions.add_parser("list", parents=[common], help="the standing rules")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=show_rules)
    for behavior in (ALLOW, DENY):
        rule = actions.add_parser(
            behavior,
            parents=[common],
            help=f"always {behavior} this exact tool and command or path",
        )
        rule.add_argument("tool", help="Bash, Edit, Write, …, exactly as Claude Code names it")
        rule.add_argument("subject", help="the exact command (Bash) or file path (Edit, …)")
        rule.add_argument("--agent", help="only for this agent (its key); default: all agents")
        rule.add_argument("--json", action="store_true")
        rule.set_defaults(func=add_rule, behavior=behavior)
    remove = actions.add_parser("remove", parents=[common], help="take a rule out")
    remove.add_argument("rule", help="the rule's id (r-…, from permissions list)")
    remove.add_argument("--json", action="store_true")
    remove.set_defaults(func=remove_rule)


def _service(args: argparse.Namespace) -> Permissions:
    return Permissions(open_project(args))


def _requests(rows: list[PermissionRequest], as_json: bool, empty: str) -> int:
    if as_json:
        print_json([request.to_json() for request in rows])
    elif not rows:
        print(empty)
    else:
        print_table(
            ("ID", "AGENT", "TOOL", "COMMAND / PATH", "OUTCOME"),
            [(r.id, r.agent, r.tool, r.subject[:80], r.outcome[:80]) for r in rows],
            ["yellow" if r.open else "red" if r.error else "" for r in rows],
        )
    return 0


def show_pending(args: argparse.Namespace) -> int:
    return _requests(_service(args).pending(), args.json, "No permission requests waiting.")


def show_history(args: argparse.Namespace) -> int:
    service = _service(args)
    rows = service.history(args.agent)
    if args.all:
        from runeconsole.cli.common import warn_archive
        from runeconsole.services.retention import Retention

        retention = Retention(service.project)
        old = retention.archived_permissions(service.history())
        rows = [r for r in old if args.agent is None or r.agent == args.agent] + rows
        warn_archive(retention)
    return _requests(rows, args.json, "No permission decisions recorded.")


def decide_one(args: argparse.Namespace) -> int:
    if args.message is not None and args.behavior == ALLOW:
        raise InvalidInput("--message goes with --deny (the model reads it)")
    if args.every_agent and not args.always:
        raise InvalidInput("--every-agent goes with --always (it is the rule's scope)")
    if args.always and args.message is not None:
        raise InvalidInput("--message goes with a single deny, not with a rule")
    report = _service(args).decide_and_report(
        args.id,
        args.behavior,
        message=args.message,
        always=args.always,
        every_agent=args.every_agent,
        via="cli",
    )
    if args.json:
        print_json(report)
    else:
        print(f"{report['id']}: {printable(report['outcome'])}")
    return 0


def show_rules(args: argparse.Namespace) -> int:
    rules = _service(args).rules()
    if args.json:
        print_json([rule.to_json() for rule in rules])
    elif not rules:
        print("No permission rules: every request is asked.")
    else:
        print_table(
            ("ID", "RULE", "TOOL", "COMMAND / PATH", "AGENT"),
            [(r.id, r.behavior, r.tool, r.subject[:80], r.scope) for r in rules],
            ["green" if r.behavior == ALLOW else "red" for r in rules],
        )
    return 0


def add_rule(args: argparse.Namespace) -> int:
    rule = _service(args).add_rule(args.behavior, args.tool, args.subject, args.agent)
    if args.json:
        print_json(rule.to_json())
    else:
        print(
            f"{rule.id}: always {rule.behavior} {rule.tool} {printable(rule.subject)!r} "
            f"for {rule.scope}"
        )
    return 0


def remove_rule(args: argparse.Namespace) -> int:
    rule = _service(args).remove_rule(args.rule)
    if args.json:
        print_json(rule.to_json())
    else:
        print(f"removed {rule.id}: {rule.behavior} {rule.tool} {printable(rule.subject)!r}")
    return 0
