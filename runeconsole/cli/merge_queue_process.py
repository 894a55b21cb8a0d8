"""``merge-queue process``, ``status`` and ``stats``: processing, watched as it goes, and
what the queue is doing (batches at work, the window, its figures)."""

from __future__ import annotations

import argparse

from runeconsole.cli.common import open_project, print_json
from runeconsole.core.errors import InvalidInput
from runeconsole.core.timeutil import format_age
from runeconsole.services.dispatch.service import tidy_after_landing
from runeconsole.services.merge_queue import (
    PICKED_UP,
    RECOVERED,
    MergeQueue,
    ProcessPlan,
    Progress,
    QueueStats,
)
from runeconsole.services.merge_queue.stats import batch_line


def _queue(args: argparse.Namespace) -> MergeQueue:
    return MergeQueue(open_project(args))


def _print_progress(event: Progress) -> None:
    if event.step == RECOVERED:
        print(f"recovered: {event.message}", flush=True)
    elif event.step == PICKED_UP:
        print(event.message, flush=True)
    elif event.output:
        label = event.entry_id if event.entry_id == event.batch else ""
        print(f"    {label}| {event.message}", flush=True)
    else:
        print(f"[{event.elapsed:6.1f}s] {event.entry_id}: {event.message}", flush=True)


def process_queue(args: argparse.Namespace) -> int:
    queue = _queue(args)
    if args.dry_run:
        return _dry_run(queue, args.json)
    report = queue.process(run_all=args.all, progress=None if args.json else _print_progress)
    removals = tidy_after_landing(queue.project, report)
    if args.json:
        print_json({**report.to_json(), "worktrees": [r.to_json() for r in removals]})
    else:  # recovery and picked-up signals were printed as they happened
        for outcome in report.outcomes:
            if outcome.merged:
                print(f"merged {outcome.branch} ({outcome.entry_id})")
            else:
                files = f" [{', '.join(outcome.conflict_files)}]" if outcome.conflict_files else ""
                print(f"FAILED {outcome.branch} ({outcome.entry_id}): {outcome.reason}{files}")
            for note in outcome.notes:
                print(f"  note: {note}")
        for removal in removals:
            print(f"worktree: {removal.describe()}")
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
    print(f"would process {head.entry_id}: {head.branch} onto {queue.settings.target}")
    if head.get("entry_id") is None:
        print("  predicted: once it is queued (`merge-queue list` then shows it)")
    else:
        print(f"  predicted: {prediction.summary() if prediction else '-'}")
    print(f"  test command: {plan.test_command or '(none configured)'}")
    _print_batches(queue, plan)
    if plan.paused:
        print("  but the queue is paused")
    if plan.busy_pid is not None:
        print(f"  but the queue is being processed by pid {plan.busy_pid}")
    if plan.refused:
        print(f"  but it would be refused: {plan.refused}")
        return 1  # as `process` would
    return 0


def _print_batches(queue: MergeQueue, plan: ProcessPlan) -> None:
    """The batches the waiting entries would form, in order (``process`` takes the first;
    ``--all`` every one, ``window`` of them testing at once)."""
    settings = queue.settings
    count = len(plan.batches)
    print(
        f"  would form {count} batch{'' if count == 1 else 'es'} (batch_max "
        f"{settings.batch_max}; {plan.window} testing at once, parallel_runs "
        f"{settings.parallel_runs}):"
    )
    for number, batch in enumerate(plan.batches, start=1):
        names = ", ".join(
            f"{e.branch}" + ("" if e.priority == "normal" else f" [{e.priority}]") for e in batch
        )
        which = "  <- process" if number == 1 else ""
        print(f"    {number}. {len(batch)}: {names}{which}")


def show_status(args: argparse.Namespace) -> int:
    queue = _queue(args)
    status = queue.status()
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
    batches = queue.stats().batches if status.processing_pid is not None else []
    now = queue.clock.now()
    for batch in batches:
        print(f"batch {batch_line(batch, now)}")
    if not batches and current is not None and current.get("processor_pid") is not None:
        print(f"in progress: {current.entry_id} ({current.branch or '-'}) at {current.step}")
    for held in status.held_by:
        print(f"held by another processor: {held['entry_id']} ({held['branch'] or '-'})")
    if status.held_note:
        print(f"waiting: {status.held_note}")
    if status.head:
        print(f"next: {status.head}")
    return 0


def show_stats(args: argparse.Namespace) -> int:
    queue = _queue(args)
    stats = queue.stats()
    if args.json:
        print_json(stats.to_json())
        return 0
    print(stats_text(stats))
    now = queue.clock.now()
    if queue.settings.remote:
        print(f"  {queue.where().words(now.timestamp())}")
    for batch in stats.batches:
        print(f"  batch {batch_line(batch, now)}")
    return 0


def fetch_remote(args: argparse.Namespace) -> int:
    """``merge-queue fetch``: the remote's main fetched now (the pane's ``f``); exit 1 when
    it cannot be reached, with where main is either way."""
    queue = _queue(args)
    if not queue.settings.remote:
        raise InvalidInput(
            "the queue lands on the local branch: set runeconsole.merge_queue.remote "
            "(e.g. origin) in .claude/talisman.yml"
        )
    error = queue.fetch_now()
    where = queue.where()
    now = queue.clock.now().timestamp()
    if args.json:
        print_json({**where.to_json(now), "error": error})
    else:
        print(where.words(now) if error is None else f"runeconsole: {error}")
    return 1 if error else 0


def stats_text(stats: QueueStats) -> str:
    """The figures in a few lines."""
    rate = "-" if stats.failure_rate is None else f"{stats.failure_rate:.0%}"
    lines = [
        f"depth {stats.depth} ({stats.pending} pending, {stats.in_progress} in progress)",
        f"wait p50 {format_age(stats.wait_p50)}, p95 {format_age(stats.wait_p95)} "
        f"(joined -> outcome, the last 24 h)",
        f"landed {stats.landed} ({stats.landed_per_hour:.1f} an hour), failed {stats.failed} "
        f"(failure rate {rate})",
        f"batches up to {stats.batch_max}; testing at once {stats.window or 1} of "
        f"{stats.parallel_runs}; test timeout {stats.test_timeout}",
    ]
    if stats.remote is not None:
        remote = stats.remote
        lines.append(f"lands on {remote['remote']}/{remote['branch']} ({remote['url']})")
    for command, count in sorted(stats.flaky.items()):
        lines.append(f"flaky: {count} landed on a retry of `{command}`")
    return "\n".join(lines)
