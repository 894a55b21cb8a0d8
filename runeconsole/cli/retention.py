"""``runeconsole prune [--dry-run] [--json] [--policy]``: old records into the monthly
archive, as ``runeconsole.retention`` in the talisman says (the console does the same once
a day). ``--policy`` prints the table of kinds and their settings."""

from __future__ import annotations

import argparse

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.services.retention import POLICIES, PruneReport, Retention


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    prune = subparsers.add_parser(
        "prune",
        parents=[common],
        help="move old questions, decisions, queue entries, … into the monthly archive",
        description="Move closed records older than their policy (runeconsole.retention in "
        "the talisman) into .claude/state/archive/KIND/YYYY-MM.jsonl.gz; nothing still "
        "waiting is ever moved. `permissions history --all` and `question list --all` read "
        "the archive too.",
    )
    prune.add_argument("--dry-run", action="store_true", help="count only; write nothing")
    prune.add_argument("--policy", action="store_true", help="print the policies and stop")
    prune.add_argument("--json", action="store_true")
    prune.set_defaults(func=run_prune)


def limit(days: float, keep: int) -> str:
    """``7 days, at most 20,000``; ``forever`` when neither limit is set."""
    parts = [f"{days:g} day{'' if days == 1 else 's'}"] if days else []
    parts += [f"at most {keep:,}"] if keep else []
    return ", ".join(parts) or "forever"


def run_prune(args: argparse.Namespace) -> int:
    retention = Retention(open_project(args))
    if args.policy:
        return _policy(retention, args.json)
    report = retention.prune(dry_run=args.dry_run)
    if args.json:
        print_json(report.to_json())
        return 0
    _print(report)
    return 0


def _policy(retention: Retention, as_json: bool) -> int:
    settings = retention.settings
    if as_json:
        print_json(settings.to_json())
        return 0
    rows = []
    for kind in POLICIES:
        policy = settings.policy(kind.name)
        rows.append((kind.name, limit(policy.days, policy.keep), kind.where))
    print_table(("KIND", "KEPT LIVE", "WHERE"), rows, [""] * len(rows))
    months = settings.archive_months
    every = f"every {settings.every_hours:g} h" if settings.every_hours else "never on its own"
    kept = f"{months} months" if months else "kept forever"
    print(f"archive ({retention.archive.directory}): {kept}; the console prunes {every}")
    return 0


def _print(report: PruneReport) -> None:
    rows, tints = [], []
    for kind in report.kinds:
        moved = kind.deleted if not kind.archived and kind.deleted else kind.archived
        rows.append(
            (
                kind.kind,
                limit(kind.policy.days, kind.policy.keep),
                f"{moved:,}",
                f"{kind.kept:,}",
                f"{kind.pending:,}",
                "; ".join(kind.notes),
            )
        )
        tints.append("yellow" if any("not pruned" in n for n in kind.notes) else "")
    verb = "WOULD GO" if report.dry_run else "GONE"
    print_table(("KIND", "KEPT LIVE", verb, "KEPT", "WAITING", "NOTES"), rows, tints)
    print(f"{report.summary()} ({report.seconds:.1f} s)")
