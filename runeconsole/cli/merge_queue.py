"""``runeconsole merge-queue list|add|process|status|retry|remove|pause|resume|move``.

``process`` exits 0 when the entry merged (or nothing was waiting), 1 when an entry
failed (or the queue could not be processed), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from runeconsole.cli.common import open_project, print_json, print_table
from runeconsole.core.errors import RuneError
from runeconsole.core.timeutil import format_age
from runeconsole.services.merge_queue import (
    COMPLETED,
    FAILED,
    PICKED_UP,
    RECOVERED,
    MergeQueue,
    Prediction,
    Progress,
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
        "merge-queue", help="the sequential merge queue (rebase -> test -> merge)"
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", parents=[common], help="entries in queue order")
    listing.add_argument("--json", action="store_true")
    listing.add_argument(
        "--no-predict", action="store_true", help="skip the predicted-conflict check"
    )
    listing.set_defaults(func=list_entries)

    add = actions.add_parser("add", parents=[common], help="enqueue a branch")
    add.add_argument("--branch", required=True)
    add.add_argument("--identity", metavar="KEY", help="{role}-{name} of the agent it belongs to")
    add.add_argument("--node-id")
    add.add_argument("--bead-id")
    add.add_argument("--pr", type=int, metavar="N")
    add.add_argument("--worktree", metavar="PATH")
    add.add_argument("--test-command", metavar="CMD", help="override the configured test command")
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=add_entry)

    process = actions.add_parser(
        "process",
        parents=[common],
        help="process the head entry",
        description="Rebase the head entry onto main in a worktree of the queue's own, run\n"
        "the test command there, and move main to the tested commit (compare-and-swap).\n"
        "Exit 0: merged, or nothing waiting; 1: an entry failed, or processing could\n"
        "not start (paused, busy, dirty checkout of main); 2: usage error.",
        epilog=REASONS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    process.add_argument("--all", action="store_true", help="keep going until the queue is empty")
    process.add_argument(
        "--dry-run", action="store_true", help="say what would happen; change nothing"
    )
    process.add_argument("--json", action="store_true", help="print the outcome as JSON only")
    process.set_defaults(func=process_queue)

    status = actions.add_parser("status", parents=[common], help="paused?, who processes, counts")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=show_status)

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


def _queue(args: argparse.Namespace) -> MergeQueue:
    return MergeQueue(open_project(args))


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
        return entry.step
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
        ("#", "STATUS", "ID", "BRANCH", "IDENTITY", "AGE", "DETAIL"),
        [
            (
                str(entry.position or ""),
                entry.status,
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
    )
    if args.json:
        print_json({**entry.to_json(), "created": created})
    elif created:
        print(f"queued {entry.branch} as {entry.entry_id}")
    else:
        print(f"{entry.branch} is already queued as {entry.entry_id} ({entry.status})")
    return 0


def _print_progress(event: Progress) -> None:
    if event.step == RECOVERED:
        print(f"recovered: {event.message}", flush=True)
    elif event.step == PICKED_UP:
        print(event.message, flush=True)
    elif event.output:
        print(f"    | {event.message}", flush=True)
    else:
        print(f"[{event.elapsed:6.1f}s] {event.entry_id}: {event.message}", flush=True)


def process_queue(args: argparse.Namespace) -> int:
    queue = _queue(args)
    if args.dry_run:
        return _dry_run(queue, args.json)
    report = queue.process(run_all=args.all, progress=None if args.json else _print_progress)
    if args.json:
        print_json(report.to_json())
    else:  # recovery and picked-up signals were printed as they happened
        for outcome in report.outcomes:
            if outcome.merged:
                print(f"merged {outcome.branch} ({outcome.entry_id})")
            else:
                files = f" [{', '.join(outcome.conflict_files)}]" if outcome.conflict_files else ""
                print(f"FAILED {outcome.branch} ({outcome.entry_id}): {outcome.reason}{files}")
            for note in outcome.notes:
                print(f"  note: {note}")
        if report.stopped:
            print(f"stopped: {report.stopped}")
        elif not report.outcomes:
            print("nothing to process")
    # Stopping because someone paused the queue is not a failure; anything else is.
    stopped_badly = report.stopped is not None and not queue.read().paused
    return 1 if stopped_badly or any(not o.merged for o in report.outcomes) else 0


def _dry_run(queue: MergeQueue, as_json: bool) -> int:
    plan = queue.plan()
    if as_json:
        print_json(plan.to_json())
        return 1 if plan.refused else 0
    head, prediction = plan.head, plan.prediction
    for note in plan.recovered:
        print(f"would recover: {note}")
    for request in plan.picked_up:
        print(f"would pick up MERGE_READY {request['signal']} ({request['branch']})")
    if head is None:
        print("nothing to process")
        return 0
    print(f"would process {head.entry_id}: {head.branch} onto {queue.settings.main_branch}")
    if head.get("entry_id") is None:
        print("  predicted: once it is queued (`merge-queue list` then shows it)")
    else:
        print(f"  predicted: {prediction.summary() if prediction else '-'}")
    print(f"  test command: {plan.test_command or '(none configured)'}")
    if plan.paused:
        print("  but the queue is paused")
    if plan.busy_pid is not None:
        print(f"  but the queue is being processed by pid {plan.busy_pid}")
    if plan.refused:
        print(f"  but it would be refused: {plan.refused}")
        return 1  # as `process` would
    return 0


def show_status(args: argparse.Namespace) -> int:
    status = _queue(args).status()
    if args.json:
        print_json(status.to_json())
        return 0
    counts = ", ".join(f"{n} {name}" for name, n in status.counts.items())
    print(f"merge queue: {'PAUSED' if status.paused else 'running'}; {counts}")
    if status.error:
        print(f"unreadable: {status.error}")
    if status.processing_pid is not None:
        print(f"being processed by pid {status.processing_pid}")
    current = status.current
    if current is not None and current.get("processor_pid") is not None:
        print(f"in progress: {current.entry_id} ({current.branch or '-'}) at {current.step}")
    for held in status.held_by:
        print(f"held by another processor: {held['entry_id']} ({held['branch'] or '-'})")
    if status.held_note:
        print(f"waiting: {status.held_note}")
    if status.head:
        print(f"next: {status.head}")
    return 0


def change_entry(args: argparse.Namespace) -> int:
    queue = _queue(args)
    if args.change == "retry":
        entry = queue.retry(args.entry_id)
        print(f"{entry.entry_id}: queued again")
    elif args.change == "remove":
        entry = queue.remove(args.entry_id)
        print(f"{entry.entry_id}: removed ({entry.branch})")
    else:
        entry, moved = queue.move(args.entry_id, args.offset)
        if moved:
            print(f"{entry.entry_id}: moved {'up' if args.offset < 0 else 'down'}")
        else:
            end = "first" if args.offset < 0 else "last"
            print(f"{entry.entry_id}: already {end} in the queue; nothing changed")
    return 0


def set_paused(args: argparse.Namespace) -> int:
    changed = _queue(args).set_paused(args.paused)
    word = "paused" if args.paused else "resumed"
    print(f"merge queue {word}" if changed else f"merge queue was already {word}")
    return 0
