"""Cold start to the first complete paint, and RSS, in a real 160x45 tmux pane.

Starts ``runeconsole --root FLEET`` in a pane of a private tmux server and reads the
screen (through one tmux control-mode client, so looking costs no process starts)
until the status bar counts every agent, the first row and the footer are drawn. The
time is from handing tmux the command to the capture that showed it (within a
millisecond of the paint); the console's CPU seconds up to the moment the paint was seen
are printed too (the time it would take on an idle machine, or nearly: contention
distorts them least). RSS is read when the paint is seen and again two seconds
later (the monitor's first pass runs after the first paint). A fresh fleet and tmux
server each run: the monitor of one run would mark the agents of a ``sessions`` fleet
crashed, which the next must not inherit.

Goal (issue 12): 10,000 agents, <= 1.0 s; RSS <= 150 MB.

    python benchmarks/cold_start.py [AGENTS ...] [--runs 5] [--monitor both|on|off]
        [--fleet sessions|unsupervised|crashed] [--py-spy DIR]

``--py-spy DIR`` runs one start per size with ``py-spy record`` attached as soon as the
console's process exists (at 250 samples a second) and stopped at the first complete
paint, into ``DIR/cold-N.txt``; those starts are not timed.
"""

from __future__ import annotations

import compileall
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    FLEET_KINDS,
    end_cleanly_on_sigterm,
    figure,
    fleet_parser,
    load,
    monitor_modes,
    process_cpu,
    process_memory,
)
from _console import ConsolePane, console_on_fleet
from _figures import write_figures


def one_run(
    agents: int, kind: str, monitor: bool, spy: Path | None = None, everything: bool = True
) -> tuple[float, dict]:
    def attach(pane: ConsolePane) -> None:  # at once: it misses the interpreter's first steps
        if spy is not None:
            pane.py_spy(spy, 600, rate=250)

    fleet = console_on_fleet(
        agents, monitor=monitor, kind=kind, before_paint=attach, everything=everything
    )
    with fleet as started:
        pane = started.pane
        assert pane.pid is not None
        if spy is not None:
            pane.stop_profilers()
            return started.first_paint, {}
        cpu = process_cpu(pane.pid, children=True)  # all of it spent before the paint was seen
        memory = {"at paint": process_memory(pane.pid)["rss"], "cpu": cpu}
        time.sleep(2)
        memory.update(process_memory(pane.pid))
        return started.first_paint, memory


def main() -> int:
    end_cleanly_on_sigterm()
    parser = fleet_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fleet", choices=FLEET_KINDS, default="sessions")
    args = parser.parse_args()
    modes = monitor_modes(args)
    # As an installed package has it: with PYTHONDONTWRITEBYTECODE set, a module edited
    # since its bytecode was written would be compiled again on every start.
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "runeconsole", quiet=1)
    if args.py_spy is not None:
        for agents in args.agents:
            output = args.py_spy / f"cold-{agents}.txt"
            seconds, _ = one_run(agents, args.fleet, modes[0], output, not args.plain)
            print(f"{agents} agents: profile in {output} (first paint {seconds:.2f} s, profiled)")
        return 0
    figures, started = {}, load()
    for agents in args.agents:
        for monitor in modes:
            before = load()
            runs = [
                one_run(agents, args.fleet, monitor, everything=not args.plain)
                for _ in range(args.runs)
            ]
            seconds = sorted(s for s, _ in runs)
            at_paint = max(m["at paint"] for _, m in runs)
            after = max(m["rss"] for _, m in runs)
            peak = max(m["hwm"] for _, m in runs)
            cpu = statistics.median(m["cpu"] for _, m in runs)
            figures[figure("first_rows", agents, monitor, "s")] = statistics.median(seconds)
            figures[figure("cpu_to_first_rows", agents, monitor, "s")] = cpu
            label = "monitor on " if monitor else "--no-monitor"
            print(
                f"{agents:>6} agents ({args.fleet}), {label}: cold start -> first complete paint "
                f"best {seconds[0]:.2f} s, median {statistics.median(seconds):.2f} s, worst "
                f"{seconds[-1]:.2f} s (n={len(seconds)}); CPU to the paint, median "
                f"{cpu:.2f} s; RSS at paint {at_paint:.0f} MB, "
                f"2 s later {after:.0f} MB (peak {peak:.0f}); {before} -> {load()}  "
                "(goal <= 1.0 s, RSS <= 150 MB)",
                flush=True,
            )
    write_figures(args.json, figures, started, load())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
