"""``runeconsole merge-queue list|add|process|status|fetch|stats|retry|remove|pause|resume|move|
priority``: the queue and the operator's changes here, processing and what it shows in
``merge_queue_process``.

``process`` exits 0 when every entry it took merged (or nothing was waiting), 1 when an
entry failed (or the queue could not be processed), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.cli.merge_queue_process import fetch_remote, process_queue, show_stats, show_status
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.merge_queue import (
    COMPLETED,
    FAILED,
    PRIORITIES,
    MergeQueue,
    Prediction,
    QueueEntry,
)

REASONS_HELP = """\
reasons a failed entry gives (its `reason` field):
  conflict        the rebase onto main conflicts; `conflict_files` lists every file
  tests_failed    the test command exited non-zero; `output_tail` has its last lines
  base_moved      main kept moving while the entry was tested (max_rebase_rounds)
  branch_missing  the branch does not exist
  timeout         the test command outlived test_timeout_seconds and was stopped
  interrupted     the processor died mid-entry (kill -9, power loss)
  main_dirty      the checkout of main has uncommitted or untracked files the merge
                  would overwrite; main is left where it was
  git_error       git itself failed (a worktree could not be made, a rebase broke for
                  another reason than a conflict); `error` has git's message
"""
TINT = {"pending": "", "in_progress": "yellow", "completed": "green", "failed": "red"}


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = subparsers.add_parser(
        "merge-queue", help="the merge queue (batches rebased -> tested -> merged)"
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", parents=[common], help="entries in queue order")
    listing.add_argument("--json", action="store_true")
    listing.add_argument(
        "--no-predict", action="store_true", help="skip the predicted-conflict check"
    )
    listing.set_defaults(func=list_entries)

    add = actions.add_parser("add", parents=[common], help="enqueue a branch")
    add.add_argument(
        "--branch", required=True, help="a local branch, or a teammate's: origin/feature-x"
    )
    add.add_argument("--identity", metavar="KEY", help="{role}-{name} of the agent it belongs to")
    add.add_argument("--node-id")
    add.add_argument("--bead-id")
    add.add_argument("--pr", type=int, metavar="N", help="its pull request (kept, shown)")
    add.add_argument(
        "--push",
        action="store_true",
        help="push the branch to the queue's remote first (deleted there once landed)",
    )
    add.add_argument("--worktree", metavar="PATH")
    add.add_argument("--test-command", metavar="CMD", help="override the configured test command")
    add.add_argument(
        "--priority",
        choices=PRIORITIES,
        help="its lane (default normal); waiting aging_minutes raises it one level",
    )
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=add_entry)

    process = actions.add_parser(
        "process",
        parents=[common],
        help="process the head batch",
        description="Rebase the entries at the head of the queue one on the next (up to\n"
        "batch_max) in a worktree of the queue's own, run the test command at the tip,\n"
        "and move main there (compare-and-swap); a red batch is bisected down to its\n"
        "culprits. With --all, batches test speculatively on top of the one ahead\n"
        "(parallel_runs) until the queue is empty.\n"
        "Exit 0: merged, or nothing waiting; 1: an entry failed, or processing could\n"
        "not start (paused, busy, dirty checkout of main); 2: usage error.",
        epilog=REASONS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    process.add_argument("--all", action="store_true", help="keep going until the queue is empty")
    process.add_argument(
        "--dry-run",
        action="store_true",
        help="say what would happen (the batches it would form); change nothing",
    )
    process.add_argument("--json", action="store_true", help="print the outcome as JSON only")
    process.set_defaults(func=process_queue)

    status = actions.add_parser("status", parents=[common], help="paused?, who processes, counts")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=show_status)

    fetch = actions.add_parser(
        "fetch", parents=[common], help="fetch the remote the queue lands on; where main is"
    )
    fetch.add_argument("--json", action="store_true")
    fetch.set_defaults(func=fetch_remote)

    stats = actions.add_parser(
        "stats",
        parents=[common],
        help="depth, wait p50/p95, landed per hour, failure rate, flaky runs, batches at work",
    )
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(func=show_stats)

    for name, helptext in (("retry", "queue a failed entry again"), ("remove", "drop an entry")):
        sub = actions.add_parser(name, parents=[common], help=helptext)
        sub.add_argument("entry_id", metavar="ID")
        sub.set_defaults(func=change_entry, change=name)
    for name, helptext in (("pause", "stop taking entries"), ("resume", "take entries again")):
        sub = actions.add_parser(name, parents=[common], help=helptext)
        sub.set_defaults(func=set_paused, paused=name == "pause")
    move = actions.add_parser("move", parents=[common], help="move a pending entry up or down")
    move.add_argument("entry_id", metavar="ID")
    direction = move.add_mutually_exclusive_group(required=True)
    direction.add_argument("--up", action="store_const", const=-1, dest="offset")
    direction.add_argument("--down", action="store_const", const=1, dest="offset")
    move.set_defaults(func=change_entry, change="move")
    priority = actions.add_parser(
        "priority", parents=[common], help="put a pending entry in another priority lane"
    )
    priority.add_argument("entry_id", metavar="ID")
    priority.add_argument("priority", choices=PRIORITIES)
    priority.set_defaults(func=change_entry, change="priority")


def _queue(args: argparse.Namespace) -> MergeQueue:
    return MergeQueue(open_project(args))


def lane_word(entry: QueueEntry) -> str:
    """``high``, or ``low->high`` when waiting raised it; ``normal`` is left blank."""
    given = entry.priority
    now = PRIORITIES[entry.lane] if entry.status == "pending" else given
    if now != given:
        return f"{given}->{now}"
    return "" if given == "normal" else given


def _age(entry: QueueEntry, now: datetime) -> str:
    queued = entry.queued_at()
    return format_age((now - queued).total_seconds() if queued else None)


def describe(entry: QueueEntry, prediction: Prediction | None) -> str:
    """What an operator needs to know about one entry, in a few words."""
    if entry.status == FAILED:
        return entry.describe()
    if entry.status == COMPLETED:
        merged = entry.get("merged_commit")
        return f"merged {str(merged)[:12]}" if merged else "merged"
    if entry.status == "in_progress":
        return f"{entry.batch_id}: {entry.step}" if entry.batch_id else entry.step
    return prediction.summary() if prediction else ""


def list_entries(args: argparse.Namespace) -> int:
    queue = _queue(args)
    state = queue.read()
    if state.error:
        raise RuneError(f"{queue.path} is unreadable: {state.error}")
    predictions = {}
    if not args.no_predict:
        try:
            predictions = queue.predict(state)
        except RuneError as exc:
            print(f"runeconsole: no conflict predictions: {exc.message}", file=sys.stderr)
    if args.json:
        print_json(state.to_json(predictions))
        return 0
    ordered = state.ordered()
    if not ordered:
        print(f"the merge queue is empty ({queue.path})")
        return 0
    now = queue.clock.now()
    print_table(
        ("#", "STATUS", "PRI", "ID", "BRANCH", "IDENTITY", "AGE", "DETAIL"),
        [
            (
                str(entry.position or ""),
                entry.status,
                lane_word(entry),
                entry.entry_id,
                entry.branch,
                entry.identity or "",
                _age(entry, now),
                describe(entry, predictions.get(entry.entry_id)),
            )
            for entry in ordered
        ],
        [TINT.get(entry.status, "") for entry in ordered],
    )
    if state.paused:
        print("(paused: `runeconsole merge-queue resume` to go on)")
    return 0


def add_entry(args: argparse.Namespace) -> int:
    entry, created = _queue(args).add(
        args.branch,
        identity=args.identity,
        node_id=args.node_id,
        bead_id=args.bead_id,
        pr_number=args.pr,
        worktree=args.worktree,
        test_command=args.test_command,
        priority=args.priority,
        push=args.push,
    )
    if args.json:
        print_json({**entry.to_json(), "created": created})
    elif created:
        print(f"queued {entry.branch} as {entry.entry_id}")
    else:
        print(f"{entry.branch} is already queued as {entry.entry_id} ({entry.status})")
    return 0


def change_entry(args: argparse.Namespace) -> int:
    queue = _queue(args)
    if args.change == "retry":
        entry = queue.retry(args.entry_id)
        print(f"{entry.entry_id}: queued again")
    elif args.change == "remove":
        entry = queue.remove(args.entry_id)
        print(f"{entry.entry_id}: removed ({entry.branch})")
    elif args.change == "priority":
        entry, changed = queue.set_priority(args.entry_id, args.priority)
        said = "now" if changed else "already"
        print(f"{entry.entry_id}: {said} {args.priority}")
    else:
        entry, moved = queue.move(args.entry_id, args.offset)
        if moved:
            print(f"{entry.entry_id}: moved {'up' if args.offset < 0 else 'down'}")
        else:
            end = "first" if args.offset < 0 else "last"
            where = "the queue" if entry.priority == "normal" else f"the {entry.priority} lane"
            print(f"{entry.entry_id}: already {end} in {where}; nothing changed")
    return 0


def set_paused(args: argparse.Namespace) -> int:
    changed = _queue(args).set_paused(args.paused)
    word = "paused" if args.paused else "resumed"
    print(f"merge queue {word}" if changed else f"merge queue was already {word}")
    return 0
