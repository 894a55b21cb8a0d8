"""Batches on real repositories: branches that pass, break or flake a real check of the
tree, a test command that logs every run it makes, and the invariants every run of the
queue must keep (checked after each test, kills included)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from runeconsole.services.merge_queue import COMPLETED, FAILED
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.support.merge_queue import commit_on, git, queue_file

BATCHED: dict[str, Any] = {"batch_max": 8, "parallel_runs": 2, "flaky_retries": 1}

# The test command: log the run (entries, commit, when), wait a little, then check the
# tree for real: no ``*.bad`` file anywhere, and a ``flaky`` file's token fails the first
# run that sees it (a test that fails once, then passes).
CHECK = r"""
import json, os, pathlib, sys, time
log, pause = pathlib.Path(sys.argv[1]), float(sys.argv[2])
started = time.time()
entries = os.environ.get("RUNECONSOLE_MERGE_ENTRIES", "").split()
with open(log, "a") as out:
    out.write(json.dumps({"event": "start", "entries": entries, "started": started}) + "\n")
time.sleep(pause)
tree = pathlib.Path(".")
bad = sorted(str(p) for p in tree.rglob("*.bad") if ".git" not in p.parts)
flaky = []
for path in sorted(tree.rglob("*.flaky")):
    seen = log.with_name("flaked-" + path.read_text().strip())
    if not seen.exists():
        seen.touch()
        flaky.append(str(path))
ok = not bad and not flaky
line = {
    "event": "end",
    "entries": entries,
    "batch": os.environ.get("RUNECONSOLE_MERGE_BATCH"),
    "commit": os.environ.get("RUNECONSOLE_MERGE_COMMIT"),
    "started": started,
    "ended": time.time(),
    "ok": ok,
}
with open(log, "a") as out:
    out.write(json.dumps(line) + "\n")
print("bad: " + ", ".join(bad) if bad else "flaked" if flaky else "tree ok")
sys.exit(0 if ok else 1)
"""


def check_command(tmp: Path, pause: float = 0.0) -> list[str]:
    """The test command (an argument list) and where it logs: ``tmp / "runs.jsonl"``."""
    script = tmp / "check.py"
    script.write_text(CHECK)
    return [sys.executable, str(script), str(tmp / "runs.jsonl"), str(pause)]


def runs(tmp: Path, event: str = "end") -> list[dict[str, Any]]:
    """The test runs that ended (``event="start"``: every run that started, stopped ones
    too), in order."""
    log = tmp / "runs.jsonl"
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [line for line in lines if line["event"] == event]


def make_branches(repo: Path, spec: dict[str, str]) -> None:
    """``{name: kind}``: each branch ``feat/NAME`` adds ``NAME.txt``; kind ``bad`` also adds
    ``NAME.bad`` (breaks the check), ``flaky`` adds ``NAME.flaky`` (fails it once)."""
    for name, kind in spec.items():
        files = {f"{name}.txt": f"{name}\n"}
        if kind in ("bad", "flaky"):
            files[f"{name}.{kind}"] = f"{name}\n"
        commit_on(repo, f"feat/{name}", files, message=f"add {name}")


def entry_ids(repo: Path) -> dict[str, str]:
    """Branch name (without ``feat/``) -> entry id."""
    return {e["branch"].removeprefix("feat/"): e["entry_id"] for e in queue_file(repo)["entries"]}


def outcomes_by_name(repo: Path) -> dict[str, str]:
    return {e["branch"].removeprefix("feat/"): e["status"] for e in queue_file(repo)["entries"]}


def main_reflog(repo: Path) -> list[str]:
    """Every commit ``main`` pointed at, oldest first."""
    out = git(repo, "reflog", "show", "--format=%H", "refs/heads/main")
    return list(reversed(out.splitlines()))


def signals_per_entry(repo: Path) -> dict[str, list[str]]:
    """Entry id -> the outcome signal types written for it (pending or consumed)."""
    signals = Signals(Project(repo))
    found: dict[str, list[str]] = {}
    for signal in [*signals.pending(), *signals.processed()]:
        if signal.signal_type in ("MERGE_COMPLETE", "MERGE_FAILED", "MERGE_CONFLICT"):
            entry = str(signal.payload.get("entry_id"))
            found.setdefault(entry, []).append(signal.signal_type)
    return {k: sorted(v) for k, v in found.items()}


def assert_settled(repo: Path, tmp: Path, before: list[str]) -> None:
    """Every entry ended with exactly one outcome and its signals once; ``main`` only ever
    pointed at commits a test run passed on (``before``: its reflog at the start), holds
    every landed entry's file once and no broken file."""
    entries = queue_file(repo)["entries"]
    assert all(e["status"] in (COMPLETED, FAILED) for e in entries), [
        (e["entry_id"], e["status"]) for e in entries
    ]
    sent = signals_per_entry(repo)
    for entry in entries:
        expected = ["MERGE_COMPLETE"] if entry["status"] == COMPLETED else ["MERGE_FAILED"]
        if entry.get("reason") == "conflict":
            expected = ["MERGE_CONFLICT", "MERGE_FAILED"]
        assert sent.get(entry["entry_id"]) == expected, (entry["entry_id"], sent)
        assert entry.get("signals_pending") in (None, [])
    passed = {r["commit"] for r in runs(tmp) if r["ok"]}
    moves = main_reflog(repo)[len(before) :]
    assert all(commit in passed for commit in moves), "main pointed at an untested commit"
    tracked = git(repo, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert not [name for name in tracked if name.endswith(".bad")]
    for entry in entries:
        name = entry["branch"].removeprefix("feat/")
        landed = entry["status"] == COMPLETED
        assert (f"{name}.txt" in tracked) == landed, name
    subjects = git(repo, "log", "--format=%s", "main").splitlines()
    assert len(subjects) == len(set(subjects)), "an entry landed twice"
