"""The soak: a console open for half an hour under a working fleet, staying flat.

200 Claude Code sessions send their events through the installed hook (``/bin/sh -c`` the
command ``claude install`` wrote, the event's JSON on stdin) at 20 hook processes a second
in all; now and then one asks a permission or an AskUserQuestion, which the console
relays and a scripted operator answers through the CLI (one in five is left to run out);
every 30 s a branch is queued and the merge queue processed. The console runs for real in
a tmux pane (``runeconsole --root R``); every ``--sample`` seconds its RSS, open files and
threads are read from ``/proc``.

Goals: after the first ``--warmup`` minutes (5; 1 with ``--quick``) RSS, open files and
threads grow by 5 % at most; every event accounted for; every question and request ends
with exactly one outcome (the one its hook printed); every branch lands once; no update
lost (each agent's last_seen and activity are its last event's); no lock timeout.

    python benchmarks/soak.py [--quick] [--minutes 30] [--agents 200] [--rate 20]
        [--warmup MIN] [--sample 10] [--queue-every 30]

``--quick`` is the 5-minute variant. The hook's latency under this load is printed too
(``hook_load.py`` is that figure's own run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _accounting import account, quiet_runs
from _common import CpuMeter, end_cleanly_on_sigterm, load, percentile, process_memory, scratch
from _console import ConsolePane
from _fleet_load import Fleet
from _workday import Operator

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge import presence

GROWTH_GOAL = 5.0


@dataclass
class Sample:
    at: float  # seconds since the fleet started
    rss: float  # MB
    fds: int
    threads: int
    cpu: float  # % of a core since the last sample


def sample(pid: int, started: float, meter: CpuMeter) -> Sample:
    cpu = meter.percent()
    meter.start()
    return Sample(
        time.monotonic() - started,
        process_memory(pid)["rss"],
        len(os.listdir(f"/proc/{pid}/fd")),
        len(os.listdir(f"/proc/{pid}/task")),
        cpu,
    )


def sampling(pid: int, every: float, started: float, out: list[Sample], stop: threading.Event):
    meter = CpuMeter(pid, children=False)
    while not stop.wait(every):
        try:
            out.append(sample(pid, started, meter))
        except OSError:  # the console is gone: the run says so
            return


def growth(samples: list[Sample], warmup: float, window: float = 60.0) -> list[str]:
    """Each figure just after the warmup and at the end (the median of a minute's samples
    each: a worker thread or a git pipe caught by one sample is not growth), the growth
    between, and the highest sample after the warmup."""
    after = [s for s in samples if s.at >= warmup]
    if len(after) < 2:
        return ["not enough samples after the warmup to say"]
    first = [s for s in after if s.at < after[0].at + window]
    last = [s for s in after if s.at > after[-1].at - window]
    lines = []
    for name, unit in (("rss", "MB"), ("fds", "open files"), ("threads", "threads")):
        base = statistics.median(getattr(s, name) for s in first)
        end = statistics.median(getattr(s, name) for s in last)
        top = max(getattr(s, name) for s in after)
        grew = 100 * (end - base) / base if base else 0.0
        verdict = "ok" if grew <= GROWTH_GOAL else "OVER THE GOAL"
        lines.append(
            f"console {name}: {base:.1f} {unit} after the warmup, {end:.1f} at the end "
            f"(medians of a minute): growth {grew:+.1f} % (goal <= {GROWTH_GOAL:g} %) "
            f"{verdict}; highest sample {top:.1f}"
        )
    return lines


def timeline(samples: list[Sample]) -> list[str]:
    """One line a minute (the last sample of each)."""
    minutes: dict[int, Sample] = {}
    for s in samples:
        minutes[int(s.at // 60)] = s
    return [
        f"  {m:>3} min: RSS {s.rss:6.1f} MB  files {s.fds:4d}  threads {s.threads:3d}  "
        f"CPU {s.cpu:5.1f} %"
        for m, s in sorted(minutes.items())
    ]


def run(args: argparse.Namespace) -> int:
    seconds = args.minutes * 60
    warmup = args.warmup * 60
    print(
        f"{args.agents} agents, {args.rate:g} hook processes/s, {args.minutes:g} min "
        f"(warmup {args.warmup:g} min); {load()}",
        flush=True,
    )
    with scratch("soak") as base:
        fleet = Fleet(
            base, args.agents, rate=args.rate, wait_seconds=args.wait,
            ask_share=args.ask_share, permission_share=args.permission_share,
            max_in_flight=args.in_flight,
        )  # fmt: skip
        with ConsolePane(fleet.root, monitor=True) as pane:
            pane.start_console()
            paths = ProjectPaths(fleet.root)
            deadline = time.monotonic() + 60
            while not presence.console_open(paths) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert pane.pid is not None
            samples: list[Sample] = []
            stop = threading.Event()
            started = time.monotonic()
            sampler = threading.Thread(
                target=sampling, args=(pane.pid, args.sample, started, samples, stop), daemon=True
            )
            sampler.start()
            operator = Operator(fleet.root)
            operator.start(args.queue_every)
            fleet.drive(seconds)
            fleet.finish()
            operator.stop()
            operator.drain_queue()
            stop.set()
            sampler.join(timeout=30)
            alive = pane.console_alive()
            lines, failures = account(fleet, operator.acts)
        print(f"ran {(time.monotonic() - started) / 60:.1f} min; {load()}", flush=True)
        for line in [*timeline(samples), *growth(samples, warmup), *lines]:
            print(line, flush=True)
        print(f"console still running at the end: {alive}")
        over = [line for line in growth(samples, warmup) if "OVER" in line]
        if args.p95_goal:
            millis = [r.seconds * 1000 for r in quiet_runs(fleet.runs)]
            p95 = percentile(millis, 95) if millis else 0.0
            verdict = "ok" if p95 <= args.p95_goal else "OVER THE GOAL"
            print(f"hook p95 {p95:.0f} ms (goal <= {args.p95_goal:g} ms) {verdict}")
            over += [verdict] if p95 > args.p95_goal else []
        for failure in failures[:40]:
            print(f"FAILED: {failure}")
        if len(failures) > 40:
            print(f"FAILED: … and {len(failures) - 40} more")
        ok = alive and not failures and not over
        print("all goals held" if ok else "NOT all goals held", flush=True)
        return 0 if ok else 1


def parser(description: str, *, agents: int, minutes: float) -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(description=description)
    made.add_argument("--minutes", type=float, default=minutes)
    made.add_argument("--quick", action="store_true", help="the 5-minute variant")
    made.add_argument("--agents", type=int, default=agents)
    made.add_argument("--rate", type=float, default=20.0, help="hook processes a second")
    made.add_argument("--warmup", type=float, default=None, help="minutes (5; --quick: 1)")
    made.add_argument("--sample", type=float, default=10.0, help="seconds between samples")
    made.add_argument("--queue-every", type=float, default=30.0, help="seconds")
    made.add_argument("--wait", type=float, default=20.0, help="a hook's wait for the operator")
    made.add_argument("--ask-share", type=float, default=0.005, help="of tool calls: a question")
    made.add_argument("--permission-share", type=float, default=0.03, help="…: a permission")
    made.add_argument("--in-flight", type=int, default=8, help="hook processes at once, at most")
    made.add_argument("--p95-goal", type=float, default=0.0, help="ms; a goal for the hook's p95")
    return made


def main() -> int:
    end_cleanly_on_sigterm()
    args = parser(__doc__.splitlines()[0], agents=200, minutes=30).parse_args()
    if args.quick:
        args.minutes = 5.0
    if args.warmup is None:
        args.warmup = 1.0 if args.minutes <= 10 else 5.0
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
