"""Remote sources over loopback SSH (a private sshd, as the tests start one).

1. A change on a remote source -> the reader holds the new row: one identity rewritten
   (an atomic write, by the registry) on a 1,000-agent root reached over SSH, timed until
   the ``RemoteSource`` following it has applied the upsert. p95 goal <= 150 ms.
2. 3 sources x 1,000 agents, from nothing to every snapshot held: two remote roots over
   SSH (cold: the master connection is opened too) and one followed in-process.

Usage: python benchmarks/remote_sources.py [AGENTS] [ROUNDS]
"""

from __future__ import annotations

import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import numbers, summary, three_sources_over_ssh

from runeconsole.adapters.ssh import SshTransport
from runeconsole.core.fleet_file import SourceSpec
from runeconsole.services.events import EventStream
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.sources import UP, RemoteSource
from runeconsole.services.sources.remote import wait_for
from tests.support.sshd import Sshd


def remote(sshd: Sshd, host: str, root: Path, listener=lambda *_: None) -> RemoteSource:
    spec = SourceSpec(host, str(root), host, tuple(sshd.remote_command()))
    transport = SshTransport(host, sshd.ssh_prefix, sockets=sshd.sockets, persist=30)
    return RemoteSource(spec, listener, transport=transport)


def first_paint(sshd: Sshd, roots: list[Path], agents: int) -> float:
    began = time.monotonic()
    sources = [
        remote(sshd, host, root) for host, root in zip(("alpha", "beta"), roots, strict=False)
    ]
    for source in sources:
        source.start()
    local = EventStream(Project(roots[2], strict=False)).snapshot()
    ok = wait_for(lambda: all(s.status.state == UP for s in sources), 60)
    took = time.monotonic() - began
    held = sum(len(s.rows) for s in sources) + len(local) - 2
    for source in sources:
        source.transport.close()
        source.stop()
    assert ok and held >= 3 * agents, (ok, held)
    return took


def change_latency(sshd: Sshd, root: Path, keys: list[str], rounds: int) -> list[float]:
    seen = threading.Condition()
    arrived: dict[str, float] = {}

    def listener(_: RemoteSource, events: list[dict], reset: bool) -> None:
        now = time.monotonic()
        with seen:
            for event in events:
                data = event.get("data") or {}
                if event.get("event") == "upsert" and "node_id" in data:
                    arrived[str(data["node_id"])] = now
            seen.notify_all()

    source = remote(sshd, "alpha", root, listener)
    source.start()
    assert wait_for(lambda: source.status.state == UP, 60), source.status
    registry = Registry(Project(root))
    millis = []
    try:
        for n in range(rounds):
            value = f"bench-{n}"
            began = time.monotonic()
            registry.update(random.choice(keys), {"node_id": value})
            with seen:
                assert seen.wait_for(lambda v=value: v in arrived, 10), f"round {n} lost"
            millis.append((arrived[value] - began) * 1000)
            time.sleep(0.05)
    finally:
        source.transport.close()
        source.stop()
    return millis


def main() -> None:
    args = numbers(__doc__, agents=1000, rounds=100)
    agents, rounds = args.agents, args.rounds
    with three_sources_over_ssh(agents, "rc-bench-remote-") as (sshd, roots, keys):
        paints = [first_paint(sshd, roots, agents) * 1000 for _ in range(5)]
        print(summary(f"3 sources x {agents} agents, all snapshots held", paints, "<= 1500 ms"))
        millis = change_latency(sshd, roots[0], keys[0], rounds)
        print(summary("remote identity write -> row held by the reader", millis, "p95 <= 150 ms"))


if __name__ == "__main__":
    main()
