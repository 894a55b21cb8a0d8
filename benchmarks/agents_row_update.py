"""Identity file written -> its row updated in the console, at 1,000 agents.

Runs the real app headless with the real watcher; each round changes one agent's
node through the registry service (an atomic write) and times until the table
cell shows the new value. Usage: python benchmarks/agents_row_update.py [AGENTS] [ROUNDS]
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import make_fleet, summary

from runeconsole.services.registry import Registry
from runeconsole.tui.app import create_app


async def measure(root: Path, keys: list[str], rounds: int) -> list[float]:
    registry = Registry(root)
    app = create_app(root, rescan_seconds=3600)
    latencies: list[float] = []
    rng = random.Random(1)
    async with app.run_test(size=(150, 50)) as pilot:
        await pilot.pause(0.5)
        table = app.agents_pane.table
        for n in range(rounds):
            key = rng.choice(keys)
            value = f"moved{n}"
            start = time.perf_counter()
            registry.update(key, {"node_id": value})
            while str(table.get_cell(key, "node")) != value:
                await asyncio.sleep(0.0005)
            latencies.append((time.perf_counter() - start) * 1000)
            await asyncio.sleep(0.01)
    return latencies


def main() -> int:
    agents = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "fleet"
        keys = make_fleet(root, agents)
        latencies = asyncio.run(measure(root, keys, rounds))
    print(summary(f"file written -> row updated ({agents} agents)", latencies, "p95 <= 50 ms"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
