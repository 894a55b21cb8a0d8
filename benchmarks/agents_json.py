"""``runeconsole agents --json`` over N identity files, as a real process.

Whole process, interpreter start included (what an orchestrator calling it from Bash
waits for). The process's own CPU time (user + system, from the rusage of children) is printed
beside the wall time: it is what contention on a shared machine distorts least. The
time of ``python -c pass`` with the same interpreter is printed as the floor.

Goal (issue 12): 10,000 files <= 0.3 s; 100,000 files <= 3 s (linear).

    python benchmarks/agents_json.py [FILES ...] [--runs 5]

``python -m cProfile -s cumtime -m runeconsole agents --json --root FLEET > /dev/null``
shows where the time goes (see ``benchmarks/README.md``).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm, load, make_fleet, scratch


def run(command: list[str]) -> tuple[float, float, bytes]:
    """Wall and CPU seconds of one run of ``command`` (CPU: the children's rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, timeout=600, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.decode()[-500:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, result.stdout


def main() -> int:
    end_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=int, nargs="*", default=[10_000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    floor = sorted(run([sys.executable, "-c", "pass"])[0] for _ in range(3))[1]
    for files in args.files:
        with scratch("json") as base:
            root = base / "fleet"
            make_fleet(root, files)
            command = [sys.executable, "-m", "runeconsole", "agents", "--json", "--root", str(root)]
            before = load()
            runs = [run(command) for _ in range(args.runs)]
        rows = runs[-1][2].count(b'"key"')
        walls = sorted(wall for wall, _, _ in runs)
        cpus = sorted(cpu for _, cpu, _ in runs)
        goal = "<= 0.3 s" if files <= 10_000 else f"<= {0.3 * files / 10_000:g} s (linear)"
        print(
            f"agents --json over {files} files ({rows} rows): wall best {walls[0]:.3f} s, "
            f"median {statistics.median(walls):.3f} s, worst {walls[-1]:.3f} s; CPU median "
            f"{statistics.median(cpus):.3f} s (n={len(runs)}; interpreter start alone "
            f"{floor:.3f} s); {before} -> {load()}  (goal {goal})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
