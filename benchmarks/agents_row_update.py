"""Identity file written -> its row updated in the console, at 1,000 agents.

Runs the real app headless with the real watcher; each round changes one agent's
node through the registry service (an atomic write) and times until the table
cell shows the new value. Usage: python benchmarks/agents_row_update.py [AGENTS] [ROUNDS]
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import make_fleet, numbers, summary

from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.tui.console.app import create_app


def writer(root: str, jobs: Connection) -> None:
    """Another process, as agents are: rewrite identities through the registry on request."""
    registry = Registry(Project(Path(root)))
    while (job := jobs.recv()) is not None:
        key, value = job
        began = time.monotonic()
        registry.update(key, {"node_id": value})
        jobs.send((began, time.monotonic()))


async def measure(root: Path, keys: list[str], rounds: int) -> tuple[list[float], list[float]]:
    """Latency from the writer starting its write, and from its write being done (renamed
    and fsynced), to the row showing the new value."""
    app = create_app(root, rescan_seconds=3600, monitor=False)
    from_start: list[float] = []
    from_done: list[float] = []
    rng = random.Random(1)
    here, there = multiprocessing.Pipe()
    process = multiprocessing.get_context("fork").Process(target=writer, args=(str(root), there))
    process.start()
    try:
        async with app.run_test(size=(150, 50)) as pilot:
            await pilot.pause(0.5)
            table = app.agents_pane.table
            for n in range(rounds):
                key = rng.choice(keys)
                value = f"moved{n}"
                here.send((key, value))
                while str(table.get_cell(key, "node")) != value:
                    await asyncio.sleep(0.0005)
                shown = time.monotonic()
                began, done = here.recv()
                from_start.append((shown - began) * 1000)
                from_done.append(max(0.0, shown - done) * 1000)
                await asyncio.sleep(0.01)
    finally:
        here.send(None)
        process.join(timeout=10)
    return from_start, from_done


def main() -> int:
    args = numbers(__doc__, agents=1000, rounds=300)
    agents, rounds = args.agents, args.rounds
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "fleet"
        keys = make_fleet(root, agents)
        from_start, from_done = asyncio.run(measure(root, keys, rounds))
    label = f"({agents} agents, writer in another process)"
    print(summary(f"file written -> row updated {label}", from_done, "p95 <= 50 ms"))
    print(summary(f"write started -> row updated {label}", from_start, "incl. the writer's fsyncs"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
