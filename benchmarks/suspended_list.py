"""List and verify 5,000 suspended-task context files (goal: <= 1 s).

Builds a throw-away git project with N distinct context files spread over arcs
(a few of them corrupt, stale or exhausted), then times ``Suspension.list`` (discovery,
read, frontmatter parse, SHA-256 verification, resume gate and one git diff for
stale detection) and the ``runeconsole suspended list --json`` command end to end.

    python benchmarks/suspended_list.py [--files 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runeconsole.adapters import git  # noqa: E402
from runeconsole.adapters.clock import ManualClock  # noqa: E402
from runeconsole.services.project import Project  # noqa: E402
from runeconsole.services.suspension import Suspension, render, seal  # noqa: E402

TASKS_PER_ARC = 100


def stamp(index: int) -> str:
    """A distinct instant per file, so no two headers are alike (no parse is shared)."""
    return f"2026-02-26T{index // 3600:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z"


def build(root: Path, files: int) -> None:
    git.init_repo(root)
    (root / "src").mkdir()
    (root / "src/parser.py").write_text("x\n")
    git.run_git(["add", "."], root)
    git.run_git(["commit", "-qm", "src"], root)
    (root / "src/parser.py").write_text("changed\n")
    for index in range(files):
        arc, task = divmod(index, TASKS_PER_ARC)
        text = seal(
            render(
                task_id=str(task),
                worker=f"rune-smith-{task % 7}",
                timestamp=stamp(index),
                reason="turn_limit",
                files_modified=["src/parser.py"] if index % 50 else ["src/gone.py"],
                files_pending=["src/formatter.py"],
                last_action=f"Completed parser refactor step {index}; formatter.py next",
                resume_count=2 if index % 97 == 0 else 0,
                body="Parser split into tokenizer and reader.\n" * 40,
            )
        )
        if index % 101 == 0:
            text = text.replace("tokenizer", "TOKENIZER", 1)
        path = root / "tmp/work/20260226-014400/context" / f"arc-{arc:05d}" / f"{task}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="runeconsole-bench-") as tmp:
        root = Path(tmp) / "project"
        build(root, args.files)
        timings, warm = [], []
        service = Suspension(Project(root, ManualClock()))
        for _ in range(args.runs):
            # nothing parsed yet: what one command pays
            cold = Suspension(Project(root, ManualClock()))
            start = time.perf_counter()
            records = cold.list()
            timings.append(time.perf_counter() - start)
            start = time.perf_counter()
            service.list()  # the console's rescan: unchanged headers are not parsed again
            warm.append(time.perf_counter() - start)
        verdicts: dict[str, int] = {}
        for record in records:
            verdicts[record.verdict] = verdicts.get(record.verdict, 0) + 1
        command = [sys.executable, "-m", "runeconsole", "suspended", "list", "--json"]
        cli = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(
                [*command, "--root", str(root)],
                cwd=REPO,
                check=True,
                capture_output=True,
                timeout=120,
            )
            cli.append(time.perf_counter() - start)
    print(f"context files:            {len(records)}  verdicts {dict(sorted(verdicts.items()))}")
    print(
        f"Suspension.list(), cold:  median {statistics.median(timings):.3f} s  "
        f"min {min(timings):.3f} s  max {max(timings):.3f} s  ({args.runs} runs)"
    )
    print(f"per file:                 {statistics.median(timings) / len(records) * 1e6:.0f} µs")
    print(
        f"rescan, same service:     median {statistics.median(warm[1:] or warm):.3f} s  "
        "(headers already parsed; files still read, hashed and judged)"
    )
    print(
        f"`suspended list --json`:  median {statistics.median(cli):.3f} s  "
        f"min {min(cli):.3f} s  (process start, import, list, JSON out)"
    )
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"machine:                  {os.cpu_count()} CPUs, load average {load}")
    goal = "met" if statistics.median(timings) <= 1.0 else "NOT met"
    print(f"goal <= 1 s for list+verify: {goal}")


if __name__ == "__main__":
    main()
