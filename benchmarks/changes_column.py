"""What the Agents pane's CHANGES column costs a console that is otherwise idle.

Two fleets of ``AGENTS`` agents, the same but for one thing: in one each agent has a
worktree of its own with work in it (a commit ahead of main and an uncommitted file:
its CHANGES shows ``● +N −M``, all of them ready for review), in the other none has a
worktree (no CHANGES, nothing to look at). The console runs on each in a 160x45 pane of
a private tmux server (``--no-monitor`` unless ``--monitor``); once its first looks are
done (the top line says ``ready AGENTS``) its CPU is read from ``/proc`` (its threads,
and the git processes it runs) for ``--seconds``, as a share of one core:

- idle: nothing changes;
- heartbeats: every agent heartbeats once per ``--every`` seconds (another process's
  writes, spread evenly), so each one's changes are looked at again (by ``stat`` alone:
  a heartbeat starts no git).

The figure is the difference between the two fleets, in each case.

Goal (issue 21): 200 agents with worktrees, idle CPU added <= 0.5 % of one core.

    python benchmarks/changes_column.py [AGENTS] [--seconds 30] [--every 60] [--monitor]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import CpuMeter, end_cleanly_on_sigterm, load, scratch
from _console import ConsolePane
from _worktrees import agent, project

from runeconsole.core.errors import RuneError
from runeconsole.services.registry import Registry


def make(root: Path, agents: int, worktrees: bool) -> Registry:
    registry = project(root, {"README.md": "# bench\n"})
    for n in range(agents):
        name = f"w{n:04d}"
        if worktrees:
            agent(registry, name, {f"src/{name}.py": f"N = {n}\n"}, {"NOTES.md": f"{n}\n"})
        else:
            registry.register("worker", name)
            registry.update(f"worker-{name}", {"activity": "idle"})
    return registry


def heartbeats(registry: Registry, keys: list[str], every: float, stop: threading.Event) -> None:
    """Each agent once per ``every`` seconds, spread evenly, until ``stop``."""
    gap = every / max(1, len(keys))
    while not stop.is_set():
        for key in keys:
            if stop.wait(gap):
                return
            try:
                registry.heartbeat(key)
            except RuneError:
                continue


def measure(agents: int, worktrees: bool, args: argparse.Namespace) -> tuple[float, float]:
    """(idle CPU %, heartbeating CPU %) of the console on one fleet."""
    with scratch("changes") as base:
        registry = make(base / "fleet", agents, worktrees)
        keys = [r.key for r in registry.list()]
        with ConsolePane(registry.root, monitor=args.monitor, size=(160, 45)) as pane:
            pane.start_console()
            looked = f"ready {agents}" if worktrees else "ready 0"
            pane.wait_for(lambda s: looked in s[0], timeout=120 + agents, what=looked)
            time.sleep(3)
            assert pane.pid is not None
            idle = CpuMeter(pane.pid)
            time.sleep(args.seconds)
            quiet = idle.percent()
            stop = threading.Event()
            writer = threading.Thread(
                target=heartbeats, args=(registry, keys, args.every, stop), daemon=True
            )
            writer.start()
            busy = CpuMeter(pane.pid)
            time.sleep(args.seconds)
            beating = busy.percent()
            stop.set()
            writer.join(timeout=10)
            if not pane.console_alive():
                raise RuntimeError("the console exited during the window")
    return quiet, beating


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", type=int, nargs="?", default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=60.0, help="heartbeat period per agent")
    parser.add_argument("--monitor", action="store_true", help="run the tmux monitor too")
    args = parser.parse_args()
    before = load()
    with_idle, with_beats = measure(args.agents, True, args)
    without_idle, without_beats = measure(args.agents, False, args)
    after = load()
    rate = args.agents / args.every
    print(
        f"{args.agents} agents, console CPU over {args.seconds:g} s, "
        f"{'monitor on' if args.monitor else '--no-monitor'}; {before} -> {after}\n"
        f"  idle:       with worktrees {with_idle:.2f} %, without {without_idle:.2f} %: "
        f"CHANGES adds {with_idle - without_idle:+.2f} % of one core (goal <= 0.5 %)\n"
        f"  heartbeats: ({rate:.1f} writes/s) with worktrees {with_beats:.2f} %, "
        f"without {without_beats:.2f} %: CHANGES adds {with_beats - without_beats:+.2f} %"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
