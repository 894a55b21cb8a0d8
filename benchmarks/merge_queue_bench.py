"""Merge queue overhead and prediction time on a 5,000-file repository.

Builds two identical repositories, each with 20 queued branches (one small commit
each), then lands all 20 twice: once with the bare git commands one entry needs
(rev-parse, worktree add, rebase, test, update-ref CAS, read-tree fast-forward of
the main checkout, branch delete, worktree remove), once with
``MergeQueue.process(run_all=True)``. Prints the per-entry times and their ratio
(goal <= 1.5x), and the time to predict conflicts for the whole queue.

    python benchmarks/merge_queue_bench.py [--files 5000] [--branches 20] [--dir DIR]

``--dir /dev/shm`` takes the disk out of the picture (checkouts of 5,000 files
dominate both sides on a slow disk).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import git_out as git
from _common import repository

from runeconsole.services.merge_queue import MergeQueue, MergeQueueSettings
from runeconsole.services.project import Project

TEST_COMMAND = ["true"]


def build(root: Path, files: int, branches: int) -> None:
    """A main with ``files`` files (checked out) and ``branches`` one-commit branches."""
    repository(
        root,
        {f"src/d{n % 100}/f{n}.txt": f"file {n}\n" * 4 for n in range(files)},
        {
            f"feat/b{b}": (f"branch {b}", {f"src/d{b}/f{b}.txt": f"change from branch {b}\n"})
            for b in range(branches)
        },
    )


def bare_entry(root: Path, branch: str) -> float:
    """The git commands the queue runs for one clean entry, and nothing else."""
    started = time.perf_counter()
    work = root / ".git" / "bare-worktree"
    tip = git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
    old = git(root, "rev-parse", "--verify", "--quiet", "refs/heads/main^{commit}")
    git(root, "worktree", "add", "--detach", "--quiet", str(work), tip)
    git(work, "rebase", "--quiet", old)
    new = git(work, "rev-parse", "HEAD")
    subprocess.run(TEST_COMMAND, cwd=work, check=True, timeout=60)
    git(root, "update-ref", "refs/heads/main", new, old)
    git(root, "read-tree", "-m", "-u", old, new)
    git(root, "update-ref", "-d", f"refs/heads/{branch}", tip)
    git(root, "worktree", "remove", "--force", str(work))
    return time.perf_counter() - started


def queue_entry(queue: MergeQueue) -> float:
    started = time.perf_counter()
    report = queue.process()
    assert [o.merged for o in report.outcomes] == [True], report.to_json()
    return time.perf_counter() - started


def queued(root: Path, branches: int) -> MergeQueue:
    """One entry at a time (``batch_max 1``, ``parallel_runs 1``): the cost of one entry
    beside the git commands it runs (``merge_queue_throughput.py`` measures batches)."""
    settings = MergeQueueSettings(test_command=TEST_COMMAND, batch_max=1, parallel_runs=1)
    queue = MergeQueue(Project(root), settings=settings)
    for b in range(branches):
        queue.add(f"feat/b{b}")
    return queue


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--branches", type=int, default=20)
    parser.add_argument(
        "--dir", type=Path, help="where to build the repositories (default: TMPDIR)"
    )
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="mq-bench-", dir=args.dir))
    try:
        build(scratch / "bare", args.files, args.branches)
        shutil.copytree(scratch / "bare", scratch / "queue", symlinks=True)
        queue = queued(scratch / "queue", args.branches)
        started = time.perf_counter()
        predictions = queue.predict()
        predict_seconds = time.perf_counter() - started
        assert not any(p.conflicts for p in predictions.values())

        # Interleaved, so disk write-back stalls hit both sides alike.
        bare_times, queue_times = [], []
        for b in range(args.branches):
            bare_times.append(bare_entry(scratch / "bare", f"feat/b{b}"))
            queue_times.append(queue_entry(queue))
        assert git(scratch / "queue", "status", "--porcelain", "--untracked-files=no") == ""
        assert git(scratch / "queue", "rev-parse", "main^{tree}") == git(
            scratch / "bare", "rev-parse", "main^{tree}"
        )
        steps = [sum(s["seconds"] for s in e.get("steps")) for e in queue.read().entries]

        bare_per = statistics.mean(bare_times)
        queue_per = statistics.mean(queue_times)
        bare_median = statistics.median(bare_times)
        queue_median = statistics.median(queue_times)
        ms = 1000
        print(f"repository: {args.files} files, {args.branches} queued branches, test: true")
        print(f"scratch directory: {scratch}")
        for label, mean, median in (
            ("bare git per entry:   ", bare_per, bare_median),
            ("merge queue per entry:", queue_per, queue_median),
        ):
            print(f"{label} mean {mean * ms:7.1f} ms  median {median * ms:7.1f} ms")
        print(
            f"  recorded steps (verify, rebase, test, merge): {statistics.mean(steps) * ms:.1f} ms"
        )
        ratio, median_ratio = queue_per / bare_per, queue_median / bare_median
        print(f"overhead ratio: mean {ratio:.2f}x  median {median_ratio:.2f}x  (goal <= 1.5x)")
        count = len(predictions)
        print(f"prediction, whole queue: {predict_seconds * ms:.1f} ms for {count} entries")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
