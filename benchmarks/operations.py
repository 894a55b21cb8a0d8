"""What each of the console's recurring operations costs at N agents, one at a time.

The console's steady state is a handful of operations repeated on timers and events:
the monitor's pass (every second), the rescan (a worker comparing every file's stat
with the fleet model's, every 5 s), the tick (every second: the model's due colours,
then every pane), and per burst of file events the model's ``apply_paths`` and the
panes' redraw of the keys it names. This script runs the
real app headless (``App.run_test``, 160x45, the real watcher; the monitor loop and
the timers off so nothing else runs meanwhile) and calls each operation itself, on the
UI thread, timing it with this thread's CPU clock (``time.thread_time``: immune to
other processes on the machine) and the wall clock, and the whole process's CPU until
it settles (0.3 s later: that adds what the watcher's thread spends on the file events
the operation's own writes raise, and the frame it causes). Multiplied by how often the
console runs it, the process figure is that operation's share of one core, so the sum
shows what is O(fleet) per second without a profiler's sampling error. Repeated
``--repeat`` times (medians).
``--filter`` also times the Agents pane's filter (``'7'``, and clearing it; each after
an untimed opposite), which on main takes minutes at 10,000 rows.

    python benchmarks/operations.py [AGENTS ...] [--repeat 5] [--filter] [--cprofile OPERATION]

``--cprofile OPERATION`` (a name from the table) runs that operation under cProfile
and prints its 30 heaviest functions (by own time), for in-process profiling.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm, make_fleet, scratch

from runeconsole.tui.console.app import create_app
from runeconsole.tui.console.feed import ChangeFeed
from runeconsole.tui.panes.problems_pane import ProblemsPane
from runeconsole.tui.support.messages import FleetChanged

EVENTS: Counter[str] = Counter()  # paths the watcher reported, by directory
_on_path = ChangeFeed._on_path


def counting(self: ChangeFeed, path: Path) -> None:
    EVENTS[path.parent.name] += 1
    _on_path(self, path)


ChangeFeed._on_path = counting  # type: ignore[method-assign]


def timed(
    operation: Callable[[], object], setup: Callable[[], object] | None
) -> tuple[float, float]:
    """CPU ms (this thread) and wall ms of ``operation``, after an untimed ``setup``."""
    if setup is not None:
        setup()
    cpu, wall = time.thread_time(), time.perf_counter()
    operation()
    return (time.thread_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000


async def measure(
    root: Path, agents: int, repeat: int, profile: str | None, with_filter: bool
) -> list[str]:
    # The monitor's pass asks tmux for every pane: a private server, none running.
    os.environ["RUNECONSOLE_TMUX_SOCKET"] = f"rc-bench-ops-{os.getpid()}"
    app = create_app(root, monitor=False, rescan_seconds=3600, tick_seconds=0)
    lines = []
    async with app.run_test(size=(160, 45)) as pilot:
        pane = app.agents_pane
        # A fleet over 1,000 is read after the first frame and its rows added in chunks:
        # wait for all of them, so the fill is not counted in what follows.
        while pane.table.row_count < agents:
            await pilot.pause(0.1)
        await pilot.pause(0.5)
        problems = app.query_one(ProblemsPane)
        registry, supervisor = app.registry, app.supervisor
        one = registry.paths.identities / "worker-w00000.json"
        fleet = app.fleet
        # The console's monitor visits the model's supervised agents (as app.on_mount sets).
        supervisor.follow_fleet(fleet.supervised)

        def one_event() -> None:
            change = fleet.apply_paths([one])
            for view in (pane, problems):
                view.on_fleet_changed(FleetChanged(change))

        ops: dict[str, tuple[Callable[[], object], Callable[[], object] | None, float, str]] = {
            # name: (operation, untimed setup, runs a second in the steady state, where)
            "registry.list": (registry.list, None, 0.0, "`agents --json`, not the console"),
            "fleet rescan": (fleet.rescan, None, 0.2, "rescan worker (every 5 s): stat, no read"),
            "monitor pass": (supervisor.monitor_step, None, 1.0, "monitor worker (every second)"),
            "fleet tick": (
                lambda: fleet.tick(app.clock.now()),
                None,
                1.0,
                "UI: part of the tick",
            ),
            "agents tick": (pane.tick, None, 1.0, "UI: part of the tick"),
            "problems tick": (problems.tick, None, 1.0, "UI: part of the tick"),
            "all panes tick": (app.tick, None, 1.0, "UI: tick (every second), all panes"),
            "one file event": (one_event, None, 0.0, "UI: per burst of file events"),
        }
        if with_filter:  # on main, the filter at 10,000 rows takes minutes
            ops["filter '7'"] = (
                lambda: setattr(pane, "filter_text", "7"),
                lambda: setattr(pane, "filter_text", ""),
                0.0,
                "UI: a key in the filter box",
            )
            ops["filter cleared"] = (
                lambda: setattr(pane, "filter_text", ""),
                lambda: setattr(pane, "filter_text", "7"),
                0.0,
                "UI: escape",
            )
        if profile is not None:
            operation, setup = ops[profile][:2]
            if setup is not None:
                setup()
            profiler = cProfile.Profile()
            profiler.enable()
            operation()
            profiler.disable()
            stats = pstats.Stats(profiler)
            stats.sort_stats("tottime").print_stats(30)
            return []
        total = 0.0
        lines.append(
            f"{agents} agents: operation, CPU ms of the thread running it (wall ms; CPU ms of "
            "the whole process until it settles), runs a second -> % of one core"
        )
        for name, (operation, setup, rate, where) in ops.items():
            runs = []
            for _ in range(repeat):
                EVENTS.clear()
                process = time.process_time()
                cpu, wall = timed(operation, setup)
                await pilot.pause(0.3)  # the watcher's thread handles what the reads raised
                process = (time.process_time() - process) * 1000
                runs.append((cpu, wall, process, sum(EVENTS.values())))
            cpu, wall, process, events = (statistics.median(r[i] for r in runs) for i in range(4))
            start = time.thread_time()
            pane.table.refresh()
            await pilot.pause()
            frame = (time.thread_time() - start) * 1000
            share = process * rate / 10
            total += share if "part of" not in where else 0.0
            note = f"; its writes raised {events:.0f} changed paths" if events else ""
            lines.append(
                f"  {name:<16} {cpu:7.1f} ms ({wall:7.1f} ms wall; whole process {process:7.1f} ms)"
                f"  x {rate:g}/s -> {share:5.1f} %   [{where}{note}]"
            )
        lines.append(f"  a frame (the table repainted whole, 160x45): {frame:.1f} ms")
        lines.append(f"  operations on timers alone: {total:.1f} % of one core (frames apart)")
    return lines


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", type=int, nargs="*", default=[10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cprofile", default=None, metavar="OPERATION")
    parser.add_argument("--filter", action="store_true", help="also time the filter")
    args = parser.parse_args()
    for agents in args.agents:
        with scratch("ops") as base:
            root = base / "fleet"
            make_fleet(root, agents, kind="unsupervised")
            lines = asyncio.run(measure(root, agents, args.repeat, args.cprofile, args.filter))
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
