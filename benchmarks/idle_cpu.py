"""Console CPU and RSS while nothing changes, in a real 160x45 tmux pane.

For each fleet size, a fresh fleet of identity files, then the console (``runeconsole
--root FLEET``, with the monitor and with ``--no-monitor``) in a pane of a private tmux
server. From the first complete paint (status bar counts every agent, first rows drawn)
the console's CPU is read from ``/proc`` for ``--seconds`` (its threads and the tmux
clients its monitor runs), as a share of one core; CPU seconds over wall seconds is
what contention on a shared machine distorts least. It still distorts it when the
console wants more than it gets: then its passes run late and fewer fit in the window,
so the time its threads waited for a core (run-queue wait, from schedstat) is printed
too; a figure with a large wait is a floor, and ``operations.py`` gives the demand.
Also printed: the CPU in each slice of the window (a start-up tail shows in the first),
RSS at the end and its peak, the bytes the console wrote to its terminal, the tmux
server's CPU, and the load.

Goal (issue 12): 10,000 agents, console CPU < 2 % of one core with the monitor on.

    python benchmarks/idle_cpu.py [AGENTS ...] [--fleet unsupervised|sessions|crashed]
        [--seconds 30] [--settle 0] [--monitor both|on|off] [--py-spy DIR] [--plain]
        [--json PATH]

``--settle S`` starts the window S seconds after the first paint (the steady state,
past the fill and the first looks at the worktrees; issue 35's guard uses 10). The
fleet has every column at work unless ``--plain`` (``_common.make_fleet``: budgets,
costs, worktrees).

``--fleet`` (see ``_common.FLEET_KINDS``): ``unsupervised`` (default) is the quiet fleet,
nothing for the monitor to act on; ``sessions`` is issue 12's first measurement, whose
missing sessions the monitor turns into a mass crash during the window; ``crashed``
is the state after it. ``--py-spy DIR`` records the console's stacks over the window
into ``DIR/idle-N-monitor|no-monitor.txt`` (py-spy's collapsed format; summarise with
``benchmarks/stacks.py``); the CPU figures of a profiled run are inflated by sampling.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    FLEET_KINDS,
    CpuMeter,
    end_cleanly_on_sigterm,
    figure,
    fleet_parser,
    load,
    process_cpu,
    process_memory,
    run_each,
)
from _console import console_on_fleet


def one_run(agents: int, monitor: bool, args: argparse.Namespace) -> str:
    seconds, slices = args.seconds, args.slices
    fleet = console_on_fleet(agents, monitor=monitor, kind=args.fleet, everything=not args.plain)
    with fleet as started:
        pane = started.pane
        assert pane.pid is not None
        time.sleep(args.settle)  # past the start-up tail: the fill, the first looks
        server = pane.server_pid()
        server_cpu, bytes_before, before = process_cpu(server), pane.output_bytes, load()
        if args.py_spy is not None:
            label = "monitor" if monitor else "no-monitor"
            pane.py_spy(args.py_spy / f"idle-{agents}-{label}.txt", seconds)
        meter = CpuMeter(pane.pid)
        shares = []
        for _ in range(slices):
            slice_meter = CpuMeter(pane.pid)
            time.sleep(seconds / slices)
            shares.append(slice_meter.percent())
        cpu, wall = meter.read()
        waited = meter.waited()
        memory = process_memory(pane.pid)
        server_share = 100 * (process_cpu(server) - server_cpu) / wall
        written = (pane.output_bytes - bytes_before) / wall
        if not pane.console_alive():
            raise RuntimeError("the console exited during the window")
    args.figures[figure("idle", agents, monitor, "pct")] = 100 * cpu / wall
    label = "monitor on " if monitor else "--no-monitor"
    per_slice = " ".join(f"{share:.1f}" for share in shares)
    return (
        f"{agents:>6} agents ({args.fleet}), {label}: console CPU {100 * cpu / wall:6.1f} % of "
        f"one core over {wall:.0f} s from {args.settle:g} s after first paint "
        f"({cpu:.2f} CPU s; per "
        f"{seconds / slices:g} s: {per_slice}); run-queue wait {waited / 100:.2f} s/s; "
        f"RSS {memory['rss']:.0f} MB (peak {memory['hwm']:.0f}); "
        f"first paint {started.first_paint:.2f} s; terminal output {written / 1024:.1f} KiB/s; "
        f"tmux server {server_share:.1f} %; {before} -> {load()}  (goal < 2 % with the monitor)"
    )


def main() -> int:
    end_cleanly_on_sigterm()
    parser = fleet_parser(__doc__.splitlines()[0])
    parser.add_argument("--fleet", choices=FLEET_KINDS, default="unsupervised")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--slices", type=int, default=6, help="CPU shown per slice of the window")
    parser.add_argument(
        "--settle", type=float, default=0.0, help="seconds after the first paint, not measured"
    )
    return run_each(parser.parse_args(), one_run)


if __name__ == "__main__":
    raise SystemExit(main())
