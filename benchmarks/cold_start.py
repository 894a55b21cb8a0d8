"""Cold start to the first complete paint, and RSS, in a real 160x45 tmux pane.

Starts ``runeconsole --root FLEET`` in a pane of a private tmux server and reads the
screen (through one tmux control-mode client, so looking costs no process starts)
until the status bar counts every agent, the first row and the footer are drawn. The
time is from handing tmux the command to the capture that showed it (within a
millisecond of the paint). RSS is read when the paint is seen and again two seconds
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

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import FLEET_KINDS, end_cleanly_on_sigterm, load, make_fleet, process_memory
from _console import ConsolePane, first_complete_paint


def one_run(agents: int, kind: str, monitor: bool, spy: Path | None = None) -> tuple[float, dict]:
    scratch = Path(tempfile.mkdtemp(prefix="runeconsole-cold-"))
    try:
        root = scratch / "fleet"
        make_fleet(root, agents, kind=kind)
        with ConsolePane(root, monitor=monitor) as pane:
            started = pane.start_console()
            assert pane.pid is not None
            if spy is not None:  # attached at once; it misses the interpreter's first steps
                pane.py_spy(spy, 600, rate=250)
            painted = pane.wait_for(
                first_complete_paint(agents), timeout=60 + agents / 200, what="first paint"
            )
            if spy is not None:
                pane.stop_profilers()
                return painted - started, {}
            memory = {"at paint": process_memory(pane.pid)["rss"]}
            time.sleep(2)
            memory.update(process_memory(pane.pid))
            return painted - started, memory
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", type=int, nargs="*", default=[10_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--monitor", choices=("both", "on", "off"), default="both")
    parser.add_argument("--fleet", choices=FLEET_KINDS, default="sessions")
    parser.add_argument("--py-spy", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    modes = {"both": (True, False), "on": (True,), "off": (False,)}[args.monitor]
    if args.py_spy is not None:
        args.py_spy.mkdir(parents=True, exist_ok=True)
        for agents in args.agents:
            output = args.py_spy / f"cold-{agents}.txt"
            seconds, _ = one_run(agents, args.fleet, modes[0], output)
            print(f"{agents} agents: profile in {output} (first paint {seconds:.2f} s, profiled)")
        return 0
    for agents in args.agents:
        for monitor in modes:
            before = load()
            runs = [one_run(agents, args.fleet, monitor) for _ in range(args.runs)]
            seconds = sorted(s for s, _ in runs)
            at_paint = max(m["at paint"] for _, m in runs)
            after = max(m["rss"] for _, m in runs)
            peak = max(m["hwm"] for _, m in runs)
            label = "monitor on " if monitor else "--no-monitor"
            print(
                f"{agents:>6} agents ({args.fleet}), {label}: cold start -> first complete paint "
                f"best {seconds[0]:.2f} s, median {statistics.median(seconds):.2f} s, worst "
                f"{seconds[-1]:.2f} s (n={len(seconds)}); RSS at paint {at_paint:.0f} MB, "
                f"2 s later {after:.0f} MB (peak {peak:.0f}); {before} -> {load()}  "
                "(goal <= 1.0 s, RSS <= 150 MB)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
