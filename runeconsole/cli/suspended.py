"""``runeconsole suspend`` and ``runeconsole suspended list|resume`` (context files)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runeconsole.adapters.tasks import TaskWrite
from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.core.errors import InvalidInput, UnreadableFile
from runeconsole.core.files import read_bytes
from runeconsole.core.timeutil import format_age
from runeconsole.core.validate import validate_id
from runeconsole.services.suspension import (
    REASONS,
    ContextRecord,
    ResumeRefused,
    ResumeResult,
    SuspendResult,
    Suspension,
)

BODY_LIMIT = 4 * 1024 * 1024
TEAM_HELP = (
    "the Claude Code team whose task file ${CLAUDE_CONFIG_DIR:-~/.claude}/tasks/TEAM/ID.json "
    "gets Rune's suspend and resume metadata (only if that file exists)"
)
VERDICT_TINT = {"ok": "green", "stale": "yellow", "exhausted": "grey"}


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    suspend = subparsers.add_parser(
        "suspend", parents=[common], help="write a worker's context file before it times out"
    )
    suspend.add_argument("--task", required=True, help="task id")
    suspend.add_argument("--worker", required=True, help="worker name")
    suspend.add_argument("--arc", required=True, metavar="ARC_ID", help="arc checkpoint id")
    suspend.add_argument("--reason", required=True, choices=REASONS)
    suspend.add_argument("--last-action", required=True, help="what was done last (200 chars)")
    suspend.add_argument(
        "--file-target", action="append", default=[], metavar="FILE",
        help="a file the task must change (repeat); those not yet changed become files_pending",
    )  # fmt: skip
    body = suspend.add_mutually_exclusive_group()
    body.add_argument("--body-file", type=Path, metavar="FILE", help="the working-state notes")
    body.add_argument("--body", metavar="TEXT", help="the notes as text; '-' reads stdin")
    suspend.add_argument("--no-stash", action="store_true", help="do not stash partial work")
    suspend.add_argument("--work-stamp", metavar="STAMP", help="tmp/work/STAMP (default: reuse)")
    suspend.add_argument("--team", metavar="TEAM", help=TEAM_HELP)
    suspend.add_argument("--json", action="store_true")
    suspend.set_defaults(func=run_suspend)

    group = subparsers.add_parser("suspended", help="suspended tasks' context files")
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="every context file and verdict")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=run_list)
    resume = actions.add_parser(
        "resume", parents=[common], help="verify, count the resume, print the injection"
    )
    resume.add_argument("target", metavar="TASK_OR_PATH")
    resume.add_argument("--dry-run", action="store_true", help="verify and print; change nothing")
    resume.add_argument("--team", metavar="TEAM", help=TEAM_HELP + " (default: the context's)")
    resume.add_argument("--json", action="store_true")
    resume.set_defaults(func=run_resume)


def _body(args: argparse.Namespace) -> str:
    """The notes, refused whole when over the limit (a cut could split a character)."""
    if args.body_file is not None:
        data = read_bytes(args.body_file, BODY_LIMIT, pipes=True)
    elif args.body == "-":
        data = sys.stdin.buffer.read(BODY_LIMIT + 1)
        if len(data) > BODY_LIMIT:
            raise UnreadableFile("<stdin>", f"larger than {BODY_LIMIT} bytes")
    else:
        return args.body or ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("the body is not UTF-8 text") from None


def _team(args: argparse.Namespace) -> str | None:
    return None if args.team is None else validate_id(args.team, "team")


def _report(args: argparse.Namespace, result: SuspendResult | ResumeResult, plain: str) -> int:
    """A suspend's or resume's warnings and task update on stderr, then its JSON or
    ``plain`` (the path, the injection) on stdout."""
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print_task(result.task)
    if args.json:
        print_json(result.to_json())
    else:
        sys.stdout.write(plain)
    return 0


def print_task(task: TaskWrite | None) -> None:
    """What the task file update did, on stderr (stdout stays the path or injection)."""
    if task is not None:
        print(f"task metadata: {task.describe()}", file=sys.stderr)


def run_suspend(args: argparse.Namespace) -> int:
    team = _team(args)
    result = Suspension(open_project(args)).suspend(
        task_id=args.task,
        worker=args.worker,
        arc_id=args.arc,
        reason=args.reason,
        last_action=args.last_action,
        file_targets=args.file_target,
        body=_body(args),
        stamp=args.work_stamp,
        stash=False if args.no_stash else None,
        team=team,
    )
    return _report(args, result, str(result.path) + "\n")


def _row(record: ContextRecord) -> tuple[str, ...]:
    if not record.meta:
        return (record.verdict, record.task_id, "", record.arc, "", "-", "", record.detail)
    return (
        record.verdict,
        record.task_id,
        record.text("worker"),
        record.arc,
        record.text("timeout_reason"),
        format_age(record.age_seconds),
        str(record.resume_count),
        record.detail,
    )


def run_list(args: argparse.Namespace) -> int:
    service = Suspension(open_project(args))
    records = service.list()
    if args.json:
        print_json([record.to_json() for record in records])
        return 0
    if not records:
        print(f"no context files under {service.paths.work}")
        return 0
    print_table(
        ("VERDICT", "TASK", "WORKER", "ARC", "REASON", "AGE", "RESUMES", "DETAIL"),
        [_row(record) for record in records],
        [VERDICT_TINT.get(record.verdict, "red") for record in records],
    )
    return 0


def run_resume(args: argparse.Namespace) -> int:
    team = _team(args)
    service = Suspension(open_project(args))
    try:
        result = service.resume(service.find(args.target), dry_run=args.dry_run, team=team)
    except ResumeRefused as exc:
        print_task(exc.task)
        raise
    return _report(args, result, result.injection)
