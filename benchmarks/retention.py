"""A root holding 100,000 old permission decisions: cold start, the Permissions pane and
``permissions history``, before and after ``runeconsole prune``.

The root: a small fleet (``AGENTS`` identity files), ``DECISIONS`` decided permission
requests asked 8 to 68 days ago (older than the default policy of 7 days) and a day's
1,000 recent ones, as the hook and the console write them (``tests/support/old_records.py``).
Measured with the code of ``--repo`` (default: this checkout; ``--repo /path/to/main``
measures the code before retention on the same root), each figure the median of
``--runs``:

1. ``runeconsole permissions history`` as a process: wall time.
2. Cold start: the console in a real 160x45 tmux pane, from start to its first complete
   paint (``cold_start.py``'s measure), and its RSS then.
3. The Permissions pane: ``6`` pressed once painted -> the newest decision on screen; then
   the console's CPU over ``--idle`` seconds with the pane shown (its rescan every 5 s).

Then, when the code has it, ``runeconsole prune`` (timed), and 1-3 again, with
``permissions history --all`` (every decision, the archive's included).

    python benchmarks/retention.py [--decisions 100000] [--agents 10] [--runs 3]
        [--idle 20] [--repo DIR] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    CpuMeter,
    end_cleanly_on_sigterm,
    load,
    make_fleet,
    process_memory,
    scratch,
)
from _console import REPO, ConsolePane, first_complete_paint

sys.path.insert(0, str(REPO))  # the fixture that writes months of records
from tests.support.old_records import COMMANDS, decided_requests

RECENT = 1000


def build(root: Path, decisions: int, agents: int) -> str:
    """The root; returns the newest decision's command (what the pane shows first)."""
    make_fleet(root, agents, kind="unsupervised")
    now = datetime.now(UTC)
    decided_requests(root, decisions, newest=now - timedelta(days=8), days=60)
    decided_requests(root, RECENT, newest=now - timedelta(minutes=1), days=1)
    return f"{COMMANDS[(RECENT - 1) % len(COMMANDS)]} --n {RECENT - 1}"


def cli(repo: Path, root: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "runeconsole", *args, "--root", str(root)],
        capture_output=True, text=True, env=env, timeout=1800, check=False, cwd=root,
    )  # fmt: skip
    return time.perf_counter() - started, done


def history(repo: Path, root: Path, runs: int, *extra: str) -> str:
    times, rows = [], 0
    for _ in range(runs):
        seconds, done = cli(repo, root, "permissions", "history", "--json", *extra)
        if done.returncode:
            return f"failed: {done.stderr.strip()[:200]}"
        times.append(seconds)
        rows = len(json.loads(done.stdout))
    return f"median {statistics.median(times):.2f} s (runs {_list(times)}; {rows:,} rows)"


def console(repo: Path, root: Path, agents: int, newest: str, idle: float) -> dict[str, float]:
    with ConsolePane(root, monitor=False, repo=repo) as pane:
        started = pane.start_console()
        painted = pane.wait_for(
            first_complete_paint(agents), timeout=600, poll=0.002, what="first paint"
        )
        assert pane.pid is not None
        figures = {"paint": painted - started, "rss": process_memory(pane.pid)["rss"]}
        pressed = pane.send_keys("6")
        shown = pane.wait_for(
            lambda lines: any(newest in line for line in lines),
            timeout=600, poll=0.002, what="the Permissions pane's newest decision",
        )  # fmt: skip
        figures["pane"] = shown - pressed
        meter = CpuMeter(pane.pid)
        time.sleep(idle)
        figures["idle_cpu"] = meter.percent()
        figures["rss_after"] = process_memory(pane.pid)["rss"]
        return figures


def consoles(repo: Path, root: Path, agents: int, newest: str, runs: int, idle: float) -> str:
    found = [console(repo, root, agents, newest, idle) for _ in range(runs)]

    def median(name: str) -> float:
        return statistics.median(f[name] for f in found)

    return (
        f"cold start -> first paint median {median('paint'):.2f} s "
        f"(runs {_list([f['paint'] for f in found])}), RSS {median('rss'):.0f} MB; "
        f"6 -> Permissions pane shows the newest decision median {median('pane') * 1000:.0f} ms; "
        f"console CPU over {idle:g} s with the pane shown {median('idle_cpu'):.1f} % of a core, "
        f"RSS then {median('rss_after'):.0f} MB"
    )


def _list(seconds: list[float]) -> str:
    return ", ".join(f"{s:.2f}" for s in seconds)


def measure(label: str, repo: Path, root: Path, args: argparse.Namespace, newest: str) -> None:
    print(f"{label}: permissions history: {history(repo, root, args.runs)}  [{load()}]", flush=True)
    figures = consoles(repo, root, args.agents, newest, args.runs, args.idle)
    print(f"{label}: {figures}  [{load()}]", flush=True)


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=20.0)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose code runs")
    parser.add_argument("--dir", type=Path, default=None, help="where the root is built")
    args = parser.parse_args()
    if args.dir is not None:
        os.environ["TMPDIR"] = str(args.dir)
    repo = args.repo.resolve()
    with scratch("retention") as base:
        root = base / "root"
        started = time.perf_counter()
        newest = build(root, args.decisions, args.agents)
        print(
            f"built {args.decisions:,} old decisions + {RECENT:,} recent, {args.agents} agents "
            f"in {time.perf_counter() - started:.0f} s; code: {repo}",
            flush=True,
        )
        measure("before prune", repo, root, args, newest)
        seconds, done = cli(repo, root, "prune")
        if done.returncode:
            print(f"no prune in this code ({done.stderr.strip()[:120]}): done", flush=True)
            return 0
        print(f"runeconsole prune: {seconds:.1f} s: {done.stdout.strip().splitlines()[-1]}")
        measure("after prune", repo, root, args, newest)
        print(
            f"after prune: permissions history --all: {history(repo, root, args.runs, '--all')}"
            f"  [{load()}]",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
