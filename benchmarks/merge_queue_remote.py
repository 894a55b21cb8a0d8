"""Merge queue throughput landing on a remote (issue 34), with a teammate pushing to it.

The throughput benchmark's branches (``merge_queue_throughput.py``: 32 branches each
adding a module, 3 that break the tests, 1 flaky; the same check, sleeping about 2 s
then compiling every module), in one run, one queue after the other:

(a) the sequential local queue (``batch_max 1``, ``parallel_runs 1``);
(b) the default batched queue (``batch_max 8``, ``parallel_runs auto``), local only;
(c) the same batched queue landing on a bare remote (``git init --bare -b main``; the
    project a ``git clone`` of it, ``runeconsole.merge_queue.remote: origin``) while a
    teammate (a second clone, a thread of this process) commits a file of its own
    (``team/note_N.txt``, nothing the branches touch) and pushes it to ``main`` every
    ``--teammate-seconds`` (20 s), the first that long after the queue starts; a push of
    the teammate's that loses to the queue's is pulled with ``--rebase`` and pushed
    again, as a person would.

All ``flaky_retries 1``. Printed: each run's wall time, test runs, entries landed and
failed, and the throughput benchmark's checks (main only ever pointed at a commit a run
passed on, no broken module landed, every good branch once, the final main passes);
the ratio of (b) and (c) to (a); the time per landed branch of (c) against (b); the
races (the queue file's ``remote.races``, the entries' notes ``moved during the run``,
its pushes that lost, each with its moment in the run beside the teammate's pushes) and
the test runs (c) needed beyond (b); the teammate's pushes; for (c) that every commit
``main`` on the remote ever pointed at (its reflog) is one a run passed on or the
teammate's, that every teammate commit is on the final ``origin/main``, and whether the
final ``origin/main`` is the project's local ``main``.

    python benchmarks/merge_queue_remote.py [--branches 32] [--test-seconds 2]
        [--teammate-seconds 20] [--push-delay 0] [--batch-max 8] [--parallel-runs auto|N]
        [--quick]

``--push-delay S``: the remote takes S seconds over each push (a ``pre-receive`` hook
that sleeps, as a hosted remote's checks do); a push that arrives while another is in
that window finds ``main`` moved when git updates it ("failed to update ref").

``--quick``: 12 branches, 0.5 s tests, a teammate push every 3 s (a smoke run, about
half a minute). Real git only: the remote is a bare repository on the same disk, so a
fetch or a push costs what git's own work costs, without a network.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import end_cleanly_on_sigterm, load, scratch
from _common import git_out as git
from merge_queue_throughput import (
    CHECK,
    Done,
    batched_settings,
    build,
    defaults,
    described,
    kinds,
    run_queue,
    verify,
)

from runeconsole.services.merge_queue import MergeQueueSettings
from runeconsole.services.merge_queue.model import BASE_MOVED

MOVED_NOTE = "moved during the run"


class Teammate:
    """A second clone that commits a file of its own and pushes it to ``main`` every
    ``interval`` seconds (the first that long after ``start``) until ``finish``; a
    rejected push is pulled (rebased) and pushed again."""

    def __init__(self, clone: Path, interval: float) -> None:
        self.clone, self.interval = clone, interval
        self.started = 0.0  # epoch seconds the intervals count from
        self.pushed: list[tuple[float, str]] = []  # (seconds in, the commit pushed)
        self.retries: list[str] = []  # git's words for each push that lost
        self.error: str | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="teammate", daemon=True)

    def start(self) -> None:
        self.started = time.time()
        self.thread.start()

    def finish(self) -> None:
        """No more pushes; the one under way (if any) ends first."""
        self.stop.set()
        self.thread.join(timeout=180)

    def run(self) -> None:
        n = 0
        try:
            while not self.stop.wait(self.started + (n + 1) * self.interval - time.time()):
                n += 1
                self.push_one(n)
        except Exception as exc:  # reported with the figures, never lost
            self.error = f"{type(exc).__name__}: {exc}"

    def push_one(self, n: int) -> None:
        git(self.clone, "pull", "--quiet", "--rebase", "origin", "main")
        note = self.clone / "team" / f"note_{n}.txt"
        note.parent.mkdir(exist_ok=True)
        note.write_text(f"the teammate's note {n}\n")
        git(self.clone, "add", str(note.relative_to(self.clone)))
        git(self.clone, "commit", "--quiet", "-m", f"teammate's note {n}")
        for _ in range(50):
            result = subprocess.run(
                ["git", "push", "--porcelain", "origin", "HEAD:refs/heads/main"],
                cwd=self.clone,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if result.returncode == 0:
                commit = git(self.clone, "rev-parse", "HEAD")
                self.pushed.append((time.time() - self.started, commit))
                return
            said = [line for line in result.stdout.splitlines() if line.startswith("!")]
            self.retries.append(said[0] if said else result.stderr.strip()[-200:])
            git(self.clone, "pull", "--quiet", "--rebase", "origin", "main")
        raise RuntimeError(f"note {n} not pushed after 50 tries")


def remote_team(base: Path, seed: Path, push_delay: float) -> tuple[Path, Path, Path]:
    """A bare remote holding ``seed``'s main (its reflog kept), the project a clone of it
    with ``seed``'s branches as local branches, and the teammate's clone. ``push_delay``:
    a ``pre-receive`` hook on the remote sleeps this long in every push (a hosted
    remote's checks), between the moment git reads where ``main`` is and its update."""
    origin, project, mate = base / "origin.git", base / "repo", base / "mate"
    git(base, "init", "--quiet", "--bare", "-b", "main", str(origin))
    git(origin, "config", "core.logAllRefUpdates", "always")  # every move of main, kept
    if push_delay > 0:
        hook = origin / "hooks" / "pre-receive"
        hook.write_text(f"#!/bin/sh\ncat >/dev/null\nsleep {push_delay:g}\n")
        hook.chmod(0o755)
    git(seed, "push", "--quiet", str(origin), "main")
    for clone in (project, mate):
        git(base, "clone", "--quiet", str(origin), str(clone))
        git(clone, "config", "user.email", "bench@example.invalid")
        git(clone, "config", "user.name", "bench")
    git(project, "fetch", "--quiet", str(seed), "refs/heads/feat/*:refs/heads/feat/*")
    (project / ".git" / "info" / "exclude").write_text(".claude/\n")
    return origin, project, mate


def at_seconds(iso: str, started: float) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() - started


def queue_figures(done: Done, started: float) -> dict[str, Any]:
    """From the queue's file: the races it counted, the entries' notes of a move, its
    pushes that lost (moment in the run, by the entry's ``push`` steps), and the push
    steps' times."""
    state = done.queue.read()
    kept = state.data.get("remote")
    remote = kept if isinstance(kept, dict) else {}
    noted = [e for e in state.entries if any(MOVED_NOTE in n for n in e.get("notes") or [])]
    pushes: dict[tuple[str, float], str] = {}  # a batch's push is a step of each entry
    for entry in state.entries:
        for step in entry.get("steps") or []:
            if step.get("step") == "push":
                pushes[(step["started_at"], step["seconds"])] = step.get("result", "?")
    lost = sorted(at_seconds(at, started) + s for (at, s), word in pushes.items() if word != "ok")
    seconds = [s for (_, s), word in pushes.items()]
    return {
        "races": remote.get("races", 0),
        "noted": len(noted),
        "notes": sum(MOVED_NOTE in n for e in noted for n in e.get("notes") or []),
        "gave_up": sum(e.get("reason") == BASE_MOVED for e in state.entries),
        "failed": {
            e.branch: f"{e.get('reason')}: {e.get('error')}"
            for e in state.entries
            if e.status == "failed"
        },
        "pushes": len(pushes),
        "lost": lost,
        "push_p50": statistics.median(seconds) if seconds else 0.0,
    }


def remote_checks(
    origin: Path, project: Path, runs: list[dict[str, Any]], teammate: Teammate
) -> tuple[list[str], list[str]]:
    """(problems, facts) about the remote after (c)."""
    problems, facts = [], []
    passed = {r["commit"] for r in runs if r["ok"]}
    theirs = {commit for _, commit in teammate.pushed}
    moves = git(origin, "reflog", "show", "--format=%H", "refs/heads/main").splitlines()[:-1]
    foreign = [c for c in moves if c not in passed and c not in theirs]
    if foreign:
        problems.append(f"origin/main pointed at {len(foreign)} commit(s) nobody tested")
    facts.append(f"origin/main moved {len(moves)} times, each to a tested or teammate commit")
    final = git(origin, "rev-parse", "refs/heads/main")
    lost = [
        c
        for c in theirs
        if subprocess.run(
            ["git", "merge-base", "--is-ancestor", c, final], cwd=origin, check=False
        ).returncode
    ]
    if lost:
        problems.append(f"{len(lost)} teammate commit(s) not on the final origin/main")
    else:
        facts.append(f"all {len(theirs)} teammate commits on the final origin/main")
    local = git(project, "rev-parse", "refs/heads/main")
    if local == final:
        facts.append("final origin/main == the project's local main")
    else:
        behind = git(origin, "rev-list", f"{local}..{final}").splitlines()
        if local in git(origin, "rev-list", final).splitlines() and set(behind) <= theirs:
            facts.append(
                f"final origin/main != local main: local is {len(behind)} teammate "
                "commit(s) behind, pushed after the queue's last landing"
            )
        else:
            problems.append(f"final origin/main {final[:12]} != local main {local[:12]}")
    return problems, facts


def one_run(name: str, root: Path, args: argparse.Namespace, settings: MergeQueueSettings) -> Done:
    before = load()
    done = run_queue(root, args.branches, args.test_seconds, settings)
    done.problems = verify(root, args.branches, done.runs)
    failed = len(done.report.outcomes) - done.landed
    checks = "PROBLEMS: " + "; ".join(done.problems) if done.problems else "checks pass"
    remote = f", remote {settings.remote}" if settings.remote else ""
    print(
        f"{name} ({described(settings)}{remote}): wall {done.wall:6.1f} s, "
        f"{len(done.runs)} test runs, {done.landed} landed, {failed} failed; ended with "
        f"{done.slots} test slots; {checks}  ({before} before, {load()} after)",
        flush=True,
    )
    return done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=32)
    parser.add_argument("--test-seconds", type=float, default=2.0, help="the test's sleep")
    parser.add_argument("--teammate-seconds", type=float, default=20.0, help="between pushes")
    parser.add_argument(
        "--push-delay", type=float, default=0.0, help="seconds the remote's hook sleeps a push"
    )
    parser.add_argument("--batch-max", type=int, help="of (b) and (c) (default: 8)")
    parser.add_argument("--parallel-runs", help="of (b) and (c): auto (the default) or a number")
    parser.add_argument("--quick", action="store_true", help="12 branches, 0.5 s, every 3 s")
    args = parser.parse_args()
    if args.quick:
        args.branches, args.test_seconds, args.teammate_seconds = 12, 0.5, 3.0
    end_cleanly_on_sigterm()
    print(
        f"{args.branches} branches, tests of {args.test_seconds:g} s, a teammate push every "
        f"{args.teammate_seconds:g} s in (c)"
        + (f", the remote {args.push_delay:g} s over each push" if args.push_delay else "")
        + f"; {load()}",
        flush=True,
    )
    with scratch("mq-remote") as base:
        seed = base / "seed"
        build(seed / "repo", args.branches)
        (seed / "check.py").write_text(CHECK)
        for name in ("sequential", "batched"):
            shutil.copytree(seed, base / name, symlinks=True)
        (base / "remote").mkdir()
        (base / "remote" / "check.py").write_text(CHECK)
        origin, project, mate = remote_team(base / "remote", seed / "repo", args.push_delay)
        sequential = defaults(batch_max=1, parallel_runs=1, parallel_runs_auto=False)
        batched = batched_settings(args)
        a = one_run("(a) sequential    ", base / "sequential" / "repo", args, sequential)
        b = one_run("(b) batched, local", base / "batched" / "repo", args, batched)
        teammate = Teammate(mate, args.teammate_seconds)
        teammate.start()
        try:
            on_remote = dataclasses.replace(batched, remote="origin")
            c = one_run("(c) batched+remote", project, args, on_remote)
        finally:
            teammate.finish()
        figures = queue_figures(c, teammate.started)
        problems, facts = remote_checks(origin, project, c.runs, teammate)
    per_b, per_c = (b.wall / max(1, b.landed), c.wall / max(1, c.landed))
    print(
        f"wall-time ratio to (a): (b) {b.wall / a.wall:.2f}, "
        f"(c) {c.wall / a.wall:.2f}; (c) / (b) {c.wall / b.wall:.2f} "
        f"({c.wall - b.wall:+.1f} s)"
    )
    print(
        f"time per landed branch: (b) {per_b:.2f} s, (c) {per_c:.2f} s "
        f"(x{per_c / per_b:.2f}); (a) {a.wall / max(1, a.landed):.2f} s"
    )
    lost = ", ".join(f"{t:.1f}" for t in figures["lost"]) or "none"
    print(
        f"races: remote.races {figures['races']}; the queue's pushes {figures['pushes']} "
        f"(p50 {figures['push_p50']:.2f} s), lost at {lost} s into the run; "
        f"{figures['noted']} entries noted '{MOVED_NOTE}' ({figures['notes']} notes); "
        f"{figures['gave_up']} failed for main moving; test runs (c) {len(c.runs)} vs "
        f"(b) {len(b.runs)}: {len(c.runs) - len(b.runs):+d}"
    )
    broken = {f"feat/m{n}" for n, kind in kinds(args.branches).items() if kind == "bad"}
    for branch, why in sorted(figures["failed"].items()):
        if branch not in broken:
            print(f"  (c) FAILED a good branch: {branch}: {why}")
    moments = ", ".join(f"{t:.1f}" for t, _ in teammate.pushed) or "none"
    print(
        f"teammate: {len(teammate.pushed)} pushes (returned at {moments} s), "
        f"{len(teammate.retries)} lost to the queue's and pushed again"
        + (f" ({'; '.join(sorted(set(teammate.retries)))})" if teammate.retries else "")
        + (f"; ERROR {teammate.error}" if teammate.error else "")
    )
    print("remote: " + "; ".join(facts + [f"PROBLEM: {p}" for p in problems]))
    failed = problems or a.problems or b.problems or c.problems or teammate.error
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
