"""Merge queue throughput, sequential against batched: a real repository, a simulated day.

Batches, bisection and speculative runs against the queue one entry at a time.

Real part: 32 branches queued on two identical repositories, each branch adding a module;
3 of them break the tests (a module that does not compile) and 1 is flaky (its test
fails the first time it runs, then passes). The test command sleeps about 2 s, then
really checks the tree it is given (every module compiles and imports, the flaky token).
The sequential queue (``batch_max 1``, ``parallel_runs 1``) and the batched one (the
defaults of an empty talisman: ``batch_max 8``, ``parallel_runs auto``; ``--batch-max``
and ``--parallel-runs`` change them), both with ``flaky_retries 1``, each ``process
--all``, one after the other in this run. Printed for both: wall time, test runs,
entries landed and failed, and the test slots the queue ended with and the CPU share it
measured; then the ratio of wall times (goal <= 0.30) and the checks: 0 bad merges (main
only ever pointed at a commit a test run passed on, and holds no broken module), the
final main passes the check, every good branch landed exactly once.

Simulated day (``_queue_day.py``): 200 entries arriving over 10 hours (20 an hour, the
fleet of the issue), 10 % failing, 5-minute tests, on a fake clock, through the queue's
own rules: wait p50/p95, landed per hour and test runs, sequential against batched.

    python benchmarks/merge_queue_throughput.py [--branches 32] [--test-seconds 2]
        [--batch-max 8] [--parallel-runs auto|N] [--cpu-share 0.05] [--skip-real]
        [--skip-day] [--day-entries 200] [--day-hours 10] [--dir DIR] [--orders 100]
        [--rules-only] [--json PATH]

Also printed: the same 32 branches through the queue's rules alone on a fake clock (no
git, no files: only the test runs take time), which separates what the rules cost from
what the machine adds; and the same through the rules in ``--orders`` other orders of the
branches (a fixed seed): the mean, best and p90 ratio, so a change of the rules is judged
on where the broken branches may fall, not on one order. With ``parallel_runs auto`` the
rules run with the CPU share the real batched run measured (``--cpu-share`` without a real
run): its first runs on the slots ``auto`` starts with, the rest on those the share leaves
room for.

``--json PATH`` (the guard's): the real part alone, no simulated day, and then one JSON
object ``{"figures": {...}, "load": [before, after]}``: ``queue_ratio_32`` (batched /
sequential wall time, this run), ``queue_ratio_ideal_32`` (the rules alone, same
settings), ``queue_test_runs_batched`` and more (the load as ``_common.load()`` words it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import git_out as git
from _common import load, repository
from _queue_day import Day, simulate

from runeconsole.core.config import Talisman
from runeconsole.core.timeutil import format_age
from runeconsole.services.merge_queue import MergeQueue, MergeQueueSettings, ProcessReport
from runeconsole.services.merge_queue.cpu_share import cores
from runeconsole.services.project import Project

# The check: sleep, then compile and import every module under src/ (a broken module
# fails it), and fail the first run that sees a flaky module's token. One JSON line per
# run in the log: its commit, whether it passed, when it started and ended.
CHECK = r"""
import json, os, pathlib, py_compile, sys, time
log, pause = pathlib.Path(sys.argv[1]), float(sys.argv[2])
started = time.time()
time.sleep(pause)
ok = True
for path in sorted(pathlib.Path("src").glob("*.py")):
    try:
        py_compile.compile(str(path), doraise=True)
    except py_compile.PyCompileError:
        ok = False
        print(f"does not compile: {path}")
    if path.name.startswith("flaky_"):
        seen = log.with_name("flaked-" + path.stem)
        if not seen.exists():
            seen.touch()
            ok = False
            print(f"flaked: {path}")
line = {"commit": os.environ.get("RUNECONSOLE_MERGE_COMMIT"), "ok": ok,
        "started": started, "ended": time.time()}
with open(log, "a") as out:
    out.write(json.dumps(line) + "\n")
sys.exit(0 if ok else 1)
"""


def kinds(branches: int) -> dict[int, str]:
    """Which branches break the check (3, spread out) and which one is flaky."""
    bad = {round(branches * f) for f in (0.17, 0.45, 0.84)}
    flaky = round(branches * 0.62)
    return {n: "bad" if n in bad else "flaky" if n == flaky else "good" for n in range(branches)}


def build(root: Path, branches: int) -> None:
    """main with a package of modules, and one branch per module to add."""
    branch_files = {}
    for n, kind in kinds(branches).items():
        name = f"flaky_{n}" if kind == "flaky" else f"mod_{n}"
        body = f"def f{n}(:\n" if kind == "bad" else f"def f{n}():\n    return {n}\n"
        branch_files[f"feat/m{n}"] = (f"add module {n}", {f"src/{name}.py": body})
    repository(root, {f"src/base_{n}.py": f"VALUE = {n}\n" for n in range(50)}, branch_files)


def defaults(**changes: Any) -> MergeQueueSettings:
    """The settings of an empty talisman (what a project gets), with ``changes``."""
    empty = MergeQueueSettings.from_talisman(Talisman(path=Path("talisman.yml")))
    return dataclasses.replace(empty, flaky_retries=1, **changes)


def batched_settings(args: argparse.Namespace) -> MergeQueueSettings:
    """The defaults, with ``--batch-max`` and ``--parallel-runs`` if given."""
    changes: dict[str, Any] = {}
    if args.batch_max is not None:
        changes["batch_max"] = args.batch_max
    if args.parallel_runs not in (None, "auto"):
        changes.update(parallel_runs=int(args.parallel_runs), parallel_runs_auto=False)
    return defaults(**changes)


def described(settings: MergeQueueSettings) -> str:
    runs = "auto" if settings.parallel_runs_auto else settings.parallel_runs
    return f"batch_max {settings.batch_max}, parallel_runs {runs}"


@dataclasses.dataclass
class Done:
    """One queue's run: its wall time, the test runs' log lines, its outcomes, the slots it
    ended with and the CPU share it measured, and what ``verify`` found wrong."""

    wall: float
    runs: list[dict[str, Any]]
    report: ProcessReport
    queue: MergeQueue
    slots: int
    cpu_share: float | None
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def landed(self) -> int:
        return sum(o.merged for o in self.report.outcomes)


def run_queue(root: Path, branches: int, pause: float, settings: MergeQueueSettings) -> Done:
    log = root.parent / f"{root.name}-runs.jsonl"
    script = root.parent / "check.py"
    command = [sys.executable, str(script), str(log), str(pause)]
    queue = MergeQueue(Project(root), dataclasses.replace(settings, test_command=command))
    for n in range(branches):
        queue.add(f"feat/m{n}")
    started = time.perf_counter()
    report = queue.process(run_all=True)
    wall = time.perf_counter() - started
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    stats = queue.stats()
    return Done(wall, runs, report, queue, stats.parallel_runs, stats.cpu_share)


def verify(root: Path, branches: int, runs: list[dict[str, Any]]) -> list[str]:
    """What went wrong: bad merges, a final main that fails the check, a good branch not
    landed once (an empty list: all is well)."""
    problems = []
    passed = {r["commit"] for r in runs if r["ok"]}
    reflog = git(root, "reflog", "show", "--format=%H", "refs/heads/main").splitlines()[:-1]
    untested = [c for c in reflog if c not in passed]
    if untested:
        problems.append(f"main pointed at {len(untested)} untested commit(s)")
    files = git(root, "ls-tree", "-r", "--name-only", "main").splitlines()
    subjects = git(root, "log", "--first-parent", "--format=%s", "main").splitlines()
    for n, kind in kinds(branches).items():
        landed = subjects.count(f"add module {n}")
        if kind == "bad" and (landed or f"src/mod_{n}.py" in files):
            problems.append(f"broken branch {n} landed")
        if kind != "bad" and landed != 1:
            problems.append(f"good branch {n} landed {landed} times")
    check = root.parent / "final"
    git(root, "worktree", "add", "--quiet", "--detach", str(check), "main")
    log = root.parent / "final-check.jsonl"
    for path in (check / "src").glob("flaky_*.py"):  # its token was seen: it passes now
        log.with_name("flaked-" + path.stem).touch()
    result = subprocess.run(
        [sys.executable, str(root.parent / "check.py"), str(log), "0"], cwd=check, check=False
    )
    git(root, "worktree", "remove", "--force", str(check))
    if result.returncode != 0:
        problems.append("the final main fails the check")
    return problems


def real_part(args: argparse.Namespace) -> tuple[dict[str, float], tuple[str, str]]:
    """Both queues on copies of one repository; returns the figures (``--json``) and the
    load before and after."""
    scratch = Path(tempfile.mkdtemp(prefix="mq-throughput-", dir=args.dir))
    try:
        build(scratch / "sequential" / "repo", args.branches)
        (scratch / "sequential" / "check.py").write_text(CHECK)
        shutil.copytree(scratch / "sequential", scratch / "batched", symlinks=True)
        before = load()
        results: dict[str, Done] = {}
        for name, settings in (
            ("sequential", defaults(batch_max=1, parallel_runs=1, parallel_runs_auto=False)),
            ("batched", batched_settings(args)),
        ):
            root = scratch / name / "repo"
            done = results[name] = run_queue(root, args.branches, args.test_seconds, settings)
            done.problems = verify(root, args.branches, done.runs)
            failed = len(done.report.outcomes) - done.landed
            share = "-" if done.cpu_share is None else f"{done.cpu_share:.3f}"
            checks = "PROBLEMS: " + "; ".join(done.problems) if done.problems else "checks pass"
            print(
                f"{name:10} ({described(settings)}): wall {done.wall:6.1f} s, "
                f"{len(done.runs)} test runs, {done.landed} landed, {failed} failed; ended "
                f"with {done.slots} test slots, CPU share {share}; "
                f"{checks}",
                flush=True,
            )
        sequential, batched = results["sequential"], results["batched"]
        ratio = batched.wall / sequential.wall
        after = load()
        print(f"wall-time ratio batched / sequential: {ratio:.2f} (goal <= 0.30)")
        print(f"  ({before} before, {after} after)")
        measured = batched.cpu_share if batched.cpu_share is not None else args.cpu_share
        ideal = rules_alone(args, measured)
        n = args.branches
        figures: dict[str, float] = {
            f"queue_ratio_{n}": ratio,
            f"queue_ratio_ideal_{n}": ideal["ratio"],
            "queue_test_runs_batched": len(batched.runs),
            "queue_test_runs_sequential": len(sequential.runs),
            "queue_test_runs_ideal_batched": ideal["runs"],
            "queue_seconds_batched": batched.wall,
            "queue_seconds_sequential": sequential.wall,
            "queue_slots_batched": batched.slots,
            "queue_cpu_share_batched": measured,
            "queue_problems": len(sequential.problems) + len(batched.problems),
        }
        return figures, (before, after)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def batched_day(args: argparse.Namespace, share: float, shape: Day) -> Day:
    """The batched queue's settings on a fake clock (``auto``: the share ``share``), for
    the workload ``shape`` describes."""
    settings = batched_settings(args)
    auto = settings.parallel_runs_auto
    return dataclasses.replace(
        shape,
        batch_max=settings.batch_max,
        parallel_runs=settings.parallel_runs,
        cpu_share=share if auto else None,
        cpus=cores(),
    )


def rules_ratio(
    args: argparse.Namespace, kinds_by_n: list[str], share: float
) -> tuple[float, int, int]:
    """Batched over sequential on a fake clock (``_queue_day``) for branches of these kinds,
    in this order: (ratio, sequential runs, batched runs)."""
    workload = [(0.0, kind) for kind in kinds_by_n]
    minutes = args.test_seconds / 60
    sequential = simulate(Day(batch_max=1, parallel_runs=1, test_minutes=minutes), workload)
    batched = simulate(batched_day(args, share, Day(test_minutes=minutes)), workload)
    return batched.finished_hours / sequential.finished_hours, sequential.runs, batched.runs


def rules_alone(args: argparse.Namespace, share: float) -> dict[str, float]:
    """The same workload through the queue's rules on a fake clock: no git, no files, no
    processes; what the wall-time ratio would be if only the test runs took time. Then the
    same kinds of branch in other orders (a fixed seed), so a change of the rules is judged
    on where broken branches may fall, not on this one order alone. Returns the ratio and
    the batched runs of this order."""
    ratio, sequential, batched = rules_ratio(args, list(kinds(args.branches).values()), share)
    settings = batched_settings(args)
    slots = f", CPU share {share:g} on {cores()} cores" if settings.parallel_runs_auto else ""
    print(
        f"the rules alone (fake clock, only the test runs take time; {described(settings)}"
        f"{slots}): sequential {sequential} runs, batched {batched} runs; ratio {ratio:.2f}"
    )
    rng = random.Random(23)
    ratios = sorted(
        rules_ratio(args, rng.sample(list(kinds(args.branches).values()), args.branches), share)[0]
        for _ in range(args.orders)
    )
    if ratios:
        print(
            f"  the same branches in {len(ratios)} other orders: ratio mean "
            f"{statistics.mean(ratios):.2f}, best {ratios[0]:.2f}, p90 "
            f"{ratios[int(0.9 * (len(ratios) - 1))]:.2f}"
        )
    return {"ratio": ratio, "runs": batched}


def day_part(args: argparse.Namespace) -> None:
    print(
        f"simulated day: {args.day_entries} entries over {args.day_hours:g} h, "
        f"{args.day_failing:.0%} failing, {args.day_test_minutes:g}-minute tests, flaky_retries 1"
    )
    shape = Day(
        entries=args.day_entries,
        hours=args.day_hours,
        failing=args.day_failing,
        test_minutes=args.day_test_minutes,
    )
    for name, day in (
        ("sequential", dataclasses.replace(shape, batch_max=1, parallel_runs=1)),
        ("batched", batched_day(args, args.cpu_share, shape)),
    ):
        result = simulate(day)
        f = result.figures
        runs = "auto" if day.cpu_share is not None else day.parallel_runs
        print(
            f"  {name:10} (batch_max {day.batch_max}, parallel_runs {runs}): wait p50 "
            f"{format_age(f['wait_p50'])}, p95 {format_age(f['wait_p95'])}; "
            f"{f['landed_per_hour']:.1f} landed/h; {f['landed']} landed, {f['failed']} failed; "
            f"{result.runs} test runs; queue empty after {result.finished_hours:.1f} h"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=32)
    parser.add_argument("--test-seconds", type=float, default=2.0, help="the test's sleep")
    parser.add_argument("--batch-max", type=int, help="of the batched queue (default: 8)")
    parser.add_argument(
        "--parallel-runs", help="of the batched queue: auto (the default) or a number"
    )
    parser.add_argument(
        "--cpu-share",
        type=float,
        default=0.05,
        help="a test run's CPU share for the rules alone with auto, when no real run measured it",
    )
    parser.add_argument("--skip-real", action="store_true", help="only the simulated day")
    parser.add_argument("--skip-day", action="store_true", help="only the real repository")
    parser.add_argument("--day-entries", type=int, default=200)
    parser.add_argument("--day-hours", type=float, default=10.0)
    parser.add_argument("--day-failing", type=float, default=0.10)
    parser.add_argument("--day-test-minutes", type=float, default=5.0)
    parser.add_argument("--dir", type=Path, help="where to build the repositories")
    parser.add_argument(
        "--orders", type=int, default=100, help="other orders of the branches, by the rules alone"
    )
    parser.add_argument(
        "--rules-only", action="store_true", help="only the rules alone (seconds, no git)"
    )
    parser.add_argument(
        "--json", type=Path, help="write the real part's figures here (no simulated day)"
    )
    args = parser.parse_args()
    if args.parallel_runs not in (None, "auto") and not args.parallel_runs.isdigit():
        parser.error("--parallel-runs: auto or a number")
    if args.rules_only:
        rules_alone(args, args.cpu_share)
        return 0
    if args.json is not None:
        figures, load_around = real_part(args)
        body = {"figures": {k: round(v, 4) for k, v in figures.items()}, "load": list(load_around)}
        args.json.write_text(json.dumps(body, indent=2) + "\n")
        return 0 if not figures["queue_problems"] else 1
    if not args.skip_real:
        real_part(args)
    if not args.skip_day:
        day_part(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
