"""What each of the console's recurring operations costs at N agents, one at a time.

The console's steady state is a handful of operations repeated on timers and events:
the monitor's pass (every second), the rescan (a worker reading every file, then the
table brought in line on the UI thread, every 5 s), the tick (every second, every
pane), and per burst of file events the panes' ``apply_changes``. This script runs the
real app headless (``App.run_test``, 160x45, the real watcher; the monitor loop and
the timers off so nothing else runs meanwhile) and calls each operation itself, on the
UI thread, timing it with this thread's CPU clock (``time.thread_time``: immune to
other processes on the machine) and the wall clock. Multiplied by how often the console
runs it, each figure is that operation's share of one core, so the sum shows what is
O(fleet) per second without a profiler's sampling error. Also counted: the file events
the console's own reads raise in its watcher (watchdog asks inotify for opens and
closes too), and a frame drawn after each operation (``pilot.pause``) is timed apart.

    python benchmarks/operations.py [AGENTS ...] [--repeat 5] [--cprofile OPERATION]

``--cprofile OPERATION`` (a name from the table) runs that operation under cProfile
and prints its 30 heaviest functions (by own time), for in-process profiling.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import make_fleet

from runeconsole.adapters import fswatch
from runeconsole.tui.app import create_app
from runeconsole.tui.problems_pane import ProblemsPane

EVENTS: Counter[str] = Counter()
_forward = fswatch._Forward.on_any_event


def counting(self: fswatch._Forward, event: fswatch.FileSystemEvent) -> None:
    EVENTS[event.event_type] += 1
    _forward(self, event)


fswatch._Forward.on_any_event = counting  # type: ignore[method-assign]


def timed(operation: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median CPU ms (this thread) and wall ms of ``operation``."""
    cpus, walls = [], []
    for _ in range(repeat):
        cpu, wall = time.thread_time(), time.perf_counter()
        operation()
        cpus.append((time.thread_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
    return statistics.median(cpus), statistics.median(walls)


async def measure(root: Path, agents: int, repeat: int, profile: str | None) -> list[str]:
    # The monitor's pass asks tmux for every pane: a private server, none running.
    os.environ["RUNECONSOLE_TMUX_SOCKET"] = f"rc-bench-ops-{os.getpid()}"
    app = create_app(root, monitor=False, rescan_seconds=3600, tick_seconds=0)
    lines = []
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause(0.5)
        pane = app.agents_pane
        problems = app.query_one(ProblemsPane)
        registry, supervisor = app.registry, app.supervisor
        records = registry.list()
        one = registry.paths.identities / "worker-w00000.json"
        ops: dict[str, tuple[Callable[[], object], float, str]] = {
            # name: (operation, runs a second in the steady state, where it runs)
            "registry.list": (registry.list, 0.2, "rescan worker (every 5 s)"),
            "monitor pass": (supervisor.monitor_step, 1.0, "monitor worker (every second)"),
            "agents sync": (lambda: pane.sync(records), 0.2, "UI: rescan result (every 5 s)"),
            "agents tick": (pane.tick, 1.0, "UI: part of the tick"),
            "problems tick": (problems.tick, 1.0, "UI: part of the tick"),
            "all panes tick": (app._tick, 1.0, "UI: tick (every second), all panes"),
            "one file event": (
                lambda: [p.apply_changes({one}) for p in (pane, problems)],
                0.0,
                "UI: per burst of file events",
            ),
            "filter '7'": (lambda: pane.filter("7"), 0.0, "UI: a key in the filter box"),
            "filter cleared": (lambda: pane.filter(""), 0.0, "UI: escape"),
        }
        if profile is not None:
            operation = ops[profile][0]
            profiler = cProfile.Profile()
            profiler.enable()
            operation()
            profiler.disable()
            stats = pstats.Stats(profiler)
            stats.sort_stats("tottime").print_stats(30)
            return []
        total = 0.0
        lines.append(
            f"{agents} agents: operation, CPU ms per run (wall ms), the frame drawn after it, "
            "runs a second -> % of one core"
        )
        for name, (operation, rate, where) in ops.items():
            EVENTS.clear()
            cpu, wall = timed(operation, repeat)
            await pilot.pause(0.2)  # the watcher's thread hands over what it saw
            events = sum(EVENTS.values()) / repeat
            start = time.thread_time()
            pane.table.refresh()
            await pilot.pause()
            frame = (time.thread_time() - start) * 1000
            share = cpu * rate / 10
            total += share if "part of" not in where else 0.0
            note = f"; its reads raised {events:.0f} file events" if events else ""
            lines.append(
                f"  {name:<16} {cpu:8.1f} ms ({wall:8.1f} ms wall)  frame {frame:5.1f} ms  "
                f"x {rate:g}/s -> {share:5.1f} %   [{where}{note}]"
            )
        lines.append(f"  operations on timers alone: {total:.1f} % of one core (frames apart)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", type=int, nargs="*", default=[10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cprofile", default=None, metavar="OPERATION")
    args = parser.parse_args()
    for agents in args.agents:
        scratch = Path(tempfile.mkdtemp(prefix="runeconsole-ops-"))
        try:
            root = scratch / "fleet"
            make_fleet(root, agents, kind="unsupervised")
            lines = asyncio.run(measure(root, agents, args.repeat, args.cprofile))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
