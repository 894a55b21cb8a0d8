"""``runeconsole checkpoint list|resume``: arc checkpoints and ``--resume``."""

from __future__ import annotations

import argparse
import sys

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.services.checkpoints import COMPLETED, SCHEMA_VERSION, Checkpoints, ResumePlan

EXIT_RESUME = 0
EXIT_FRESH_START = 3  # scripts tell "start over" from "resume" without parsing output
ACTION_TINT = {
    "resume": "yellow",
    "complete": "green",
    "active": "yellow",
    "newer": "cyan",
    "blocked": "red",
    "fresh_start": "red",
}


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = subparsers.add_parser("checkpoint", help="arc checkpoints: list and resume")
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", parents=[common], help="every checkpoint, newest first, as resume would see it"
    )
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=run_list)
    resume = actions.add_parser(
        "resume", parents=[common],
        help=f"validate, migrate to v{SCHEMA_VERSION}, clean up; report the phase",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "exit status:\n"
            f"  {EXIT_RESUME} resume (or nothing left to resume): go on from the phase named\n"
            "  1 refused: a live owner, another config dir, a bad nonce, a newer schema,\n"
            "    an artifact outside the root (nothing written)\n"
            "  2 usage error (a bad id, a path outside the root)\n"
            f"  {EXIT_FRESH_START} fresh start: the checkpoint is corrupt; "
            "run the arc again without --resume"
        ),
    )  # fmt: skip
    resume.add_argument("checkpoint_id", nargs="?", metavar="ID", help="default: the newest")
    resume.add_argument("--dry-run", action="store_true", help="print what would change")
    resume.add_argument(
        "--session-pid", type=int, metavar="PID",
        help="the resuming Claude Code session's pid, recorded as owner_pid (default: the "
        "nearest claude process above this command, else its parent)",
    )  # fmt: skip
    resume.add_argument(
        "--team", metavar="TEAM",
        help="the team whose task files the suspended tasks' resume updates (default: the "
        "context's or the work phase's, if its list survives orphan cleanup)",
    )  # fmt: skip
    resume.add_argument("--json", action="store_true")
    resume.set_defaults(func=run_resume)


def _phase_summary(plan: ResumePlan) -> str:
    views = [v for v in plan.phases() if v.tracked]
    done = sum(1 for v in views if v.status == COMPLETED)
    demoted = f", {len(plan.demoted)} demoted" if plan.demoted else ""
    unknown = [v.name for v in views if not v.known and not v.retired]
    extra = f", not in PHASE_ORDER: {', '.join(unknown)}" if unknown else ""
    return f"{done}/{len(views)} completed{demoted}{extra}"


def run_list(args: argparse.Namespace) -> int:
    service = Checkpoints(open_project(args))
    plans = service.list()
    if args.json:
        print_json([plan.to_json() for plan in plans])
        return 0
    if not plans:
        print(f"no checkpoints under {service.paths.arc}")
        return 0
    print_table(
        ("ACTION", "ID", "VERSION", "PHASES", "RESUME FROM / REASON"),
        [
            (
                plan.action,
                plan.checkpoint_id or plan.path.parent.name,
                f"v{plan.from_version}" if plan.from_version else "?",
                _phase_summary(plan) if plan.checkpoint else "-",
                plan.resume_from or plan.fresh_start or plan.blocked or "-",
            )
            for plan in plans
        ],
        [ACTION_TINT[plan.action] for plan in plans],
    )
    return 0


def run_resume(args: argparse.Namespace) -> int:
    service = Checkpoints(open_project(args), session_pid=args.session_pid)
    plan = service.resume(args.checkpoint_id, dry_run=args.dry_run, team=args.team)
    code = EXIT_FRESH_START if plan.fresh_start else EXIT_RESUME
    if args.json:
        print_json(plan.to_json())
        return code
    for warning in plan.warnings:
        print(warning, file=sys.stderr)
    if plan.changes:
        print("would change:" if args.dry_run else "changed:")
        for change in plan.changes:
            print(f"  {change}")
    for task in plan.task_writes:
        print(f"task metadata: {task.describe()}", file=sys.stderr)
    for task_id, injection in plan.injections.items():
        print(f"--- resume injection for task #{task_id} ---")
        sys.stdout.write(injection)
    print(plan.message)
    return code
