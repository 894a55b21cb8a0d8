"""kill -9 a writer mid-write, many times: how many identity files end up corrupt?

Each round forks a real process that rewrites one identity file in a loop through
the registry service (locked read-modify-write, atomic replace) and kills it with
SIGKILL after a random delay. The file must parse every time.
Usage: python benchmarks/kill_writer.py [ROUNDS]
"""

from __future__ import annotations

import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import numbers

from runeconsole.adapters import git
from runeconsole.core.errors import UnreadableFile
from runeconsole.core.files import read_json_object
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry


def writer(root: Path) -> None:
    registry = Registry(Project(root))
    padding = "x" * 20_000  # a larger file widens the window a torn write would need
    n = 0
    while True:
        n += 1
        registry.update("worker-victim", {"metadata": {"round": n, "padding": padding}})


def main() -> int:
    rounds = numbers(__doc__, rounds=1000).rounds
    rng = random.Random(3)
    corrupt = 0
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "project"
        git.init_repo(root)
        registry = Registry(Project(root))
        registry.register("worker", "victim")
        path = registry.path_for("worker-victim")
        start = time.perf_counter()
        for _ in range(rounds):
            pid = os.fork()
            if pid == 0:
                try:
                    writer(root)
                finally:
                    os._exit(0)
            time.sleep(rng.uniform(0.002, 0.03))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            try:
                read_json_object(path)
            except UnreadableFile:
                corrupt += 1
        elapsed = time.perf_counter() - start
        orphans = [n for n in os.listdir(path.parent) if n.startswith(".")]
        registry.list()  # a listing sweeps temp files whose writer is dead
        left = [n for n in os.listdir(path.parent) if n.startswith(".")]
    print(
        f"kill -9 mid-write: {rounds} rounds in {elapsed:.1f} s -> {corrupt} corrupt files "
        f"(goal 0); {len(orphans)} temp files orphaned by the kills, {len(left)} left "
        "after the next listing"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
