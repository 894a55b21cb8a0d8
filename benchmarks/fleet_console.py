"""The fleet console (``runeconsole --fleet FILE``) over loopback SSH (a private sshd, as
the tests start one), headless at 160x45.

1. 3 sources x AGENTS agents (two hosts over SSH, cold: their master connections are
   opened too, and one local root) -> the first complete paint: every source up, every
   agent's row in the Agents table and a frame drawn. Goal <= 1.5 s.
2. A change on a remote source -> its row redrawn in the console: one identity rewritten
   (an atomic write, by the registry) on a host's root, timed until the Agents table
   holds the new cell. p95 goal <= 150 ms.

Usage: python benchmarks/fleet_console.py [AGENTS] [ROUNDS]
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import numbers, summary, three_sources_over_ssh

from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.tui.fleet_console.app import FleetConsole, create_fleet_app
from tests.support.sshd import Sshd


def specs(sshd: Sshd, roots: list[Path]) -> list[SourceSpec]:
    command, ssh = tuple(sshd.remote_command()), tuple(sshd.ssh_prefix)
    return [
        SourceSpec("alpha", str(roots[0]), "alpha", command, ssh),
        SourceSpec("beta", str(roots[1]), "beta", command, ssh),
        SourceSpec("here", str(roots[2])),
    ]


async def poll(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.002)


def complete(app: FleetConsole, total: int) -> bool:
    states = app.model.states.values()
    return all(s.state == "up" for s in states) and app.panes[0].table.row_count >= total


async def first_paint(sshd: Sshd, roots: list[Path], agents: int) -> float:
    began = time.monotonic()
    app = create_fleet_app(specs(sshd, roots), sockets=sshd.sockets, tick_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await poll(lambda: complete(app, 3 * agents), 60)
        await pilot.pause()  # the frame with them is drawn
        took = time.monotonic() - began
        for remote in app.feed._remotes:
            remote.transport.close()  # cold again for the next round
    return took


async def change_latency(sshd: Sshd, roots: list[Path], keys: list[str], rounds: int) -> list:
    app = create_fleet_app(specs(sshd, roots), sockets=sshd.sockets, tick_seconds=0)
    registry = Registry(Project(roots[0]))
    millis = []
    async with app.run_test(size=(160, 45)) as pilot:
        table = app.panes[0].table
        node = table.column_keys.index("node")
        await poll(lambda: complete(app, 3 * len(keys)), 60)
        await pilot.pause()
        for n in range(rounds):
            key, value = random.choice(keys), f"bench-{n}"
            began = time.monotonic()
            registry.update(key, {"node_id": value})
            await poll(lambda k=key, v=value: str(table.get_row(f"alpha/{k}")[node]) == v, 10)
            millis.append((time.monotonic() - began) * 1000)
            await asyncio.sleep(0.05)
        for remote in app.feed._remotes:
            remote.transport.close()
    return millis


def main() -> None:
    args = numbers(__doc__, agents=1000, rounds=100)
    agents, rounds = args.agents, args.rounds
    with three_sources_over_ssh(agents, "rc-bench-fleet-") as (sshd, roots, keys):
        paints = [asyncio.run(first_paint(sshd, roots, agents)) * 1000 for _ in range(5)]
        label = f"fleet console, 3 sources x {agents} agents, first complete paint"
        print(summary(label, paints, "<= 1500 ms"))
        millis = asyncio.run(change_latency(sshd, roots, keys[0], rounds))
        label = "remote identity write -> its row redrawn in the fleet console"
        print(summary(label, millis, "p95 <= 150 ms"))


if __name__ == "__main__":
    main()
