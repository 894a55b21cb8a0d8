"""Real processes on batches: kill -9 at every pause point of a batch, a bisection and a
speculative run, then recovery; and enqueues racing a batch. After each: every entry ends
with exactly one outcome and its signals once, main only ever pointed at a tested commit,
and nothing landed twice or half."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runeconsole.services.merge_queue import COMPLETED, FAILED, IN_PROGRESS
from tests.support.cli import cli_env
from tests.support.merge_batches import (
    assert_settled,
    check_command,
    main_reflog,
    make_branches,
    outcomes_by_name,
    runs,
)
from tests.support.merge_queue import (
    kill_processor_when,
    make_queue,
    paused_at,
    queue_file,
    rev,
    start_processor,
    worktree_paths,
    write_talisman,
)

# Real processes killed with -9 at every pause point: an end-to-end floor (``-m e2e``).
pytestmark = pytest.mark.e2e

GREEN = ({"e1": "good", "e2": "good", "e3": "good"}, {"batch_max": 8, "parallel_runs": 1})
# b1 = e1+e2 (red: e2) on main, b2 = e3+e4 tested on top of it, then sent back.
SPECULATIVE = (
    {"e1": "good", "e2": "bad", "e3": "good", "e4": "good"},
    {"batch_max": 2, "parallel_runs": 2, "flaky_retries": 0},
)
FLAKY = ({"f": "flaky", "g": "good"}, {"batch_max": 1, "parallel_runs": 1, "flaky_retries": 1})
POINTS = [
    ("merge-queue-batch-claimed", GREEN),
    ("merge-queue-batch-built", GREEN),
    ("merge-queue-batch-tested", GREEN),
    ("merge-queue-batch-landed", GREEN),
    ("merge-queue-batch-tidying", GREEN),
    ("merge-queue-speculative-started", SPECULATIVE),
    ("merge-queue-batch-sent-back", SPECULATIVE),
    ("merge-queue-bisect-split", SPECULATIVE),
    ("merge-queue-flaky-retry", FLAKY),
    ("merge-queue-signals-due", SPECULATIVE),
    ("merge-queue-main-moved", GREEN),
]


def queued(repo: Path, tmp_path: Path, spec: dict[str, str], settings: dict[str, Any]):
    """Branches made and queued; the talisman says the same as the in-process queue."""
    make_branches(repo, spec)
    command = check_command(tmp_path, pause=0.3)
    write_talisman(repo, shlex.join(command), **settings)
    queue = make_queue(repo, None, command, **settings)
    for name in spec:
        queue.add(f"feat/{name}", identity=f"worker-{name}")
    return queue


@pytest.mark.parametrize(("point", "scenario"), POINTS, ids=[p for p, _ in POINTS])
def test_a_kill_at_each_pause_point_leaves_nothing_half_landed(
    repo: Path, tmp_path: Path, point: str, scenario: tuple[dict[str, str], dict[str, Any]]
) -> None:
    spec, settings = scenario
    logs = tmp_path / "runs"
    logs.mkdir()
    queue = queued(repo, logs, spec, settings)
    before = main_reflog(repo)
    env, paused = paused_at(point, tmp_path)

    kill_processor_when(repo, paused, False, env, "--all")  # its test runs live on

    passed = {r["commit"] for r in runs(logs) if r["ok"]}
    assert all(c in passed for c in main_reflog(repo)[len(before) :])  # only tested commits
    assert any(e["status"] == IN_PROGRESS for e in queue_file(repo)["entries"])
    report = queue.process(run_all=True)
    assert report.recovered, point
    queue.process(run_all=True)  # an entry that waited for a batch-mate's outcome

    expected = {name: FAILED if kind == "bad" else COMPLETED for name, kind in spec.items()}
    assert outcomes_by_name(repo) == expected
    assert_settled(repo, logs, before)
    assert worktree_paths(repo) == [str(repo)]
    assert queue_file(repo)["batches"] == []


def test_a_batch_killed_after_main_moved_is_finished_with_each_entry_s_own_commit(
    repo: Path, tmp_path: Path
) -> None:
    queue = queued(repo, tmp_path, *GREEN)
    env, paused = paused_at("merge-queue-batch-tidying", tmp_path)

    kill_processor_when(repo, paused, False, env, "--all")  # the first branch tidied only

    entries = queue_file(repo)["entries"]
    assert [e["status"] for e in entries] == [IN_PROGRESS] * 3
    assert rev(repo, "main") == entries[2]["tested_commit"]  # the tip had landed
    report = queue.process()
    assert sum("had merged before the interruption" in n for n in report.recovered) == 3
    finished = queue_file(repo)["entries"]
    assert [e["merged_commit"] for e in finished] == [e["tested_commit"] for e in entries]
    assert all(e.get("interruptions") is None for e in finished)  # landed: not run again
    assert len(runs(tmp_path)) == 1


ADD_WHILE_PROCESSING = """
import sys, time
from pathlib import Path
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
queue = MergeQueue(Project(Path(sys.argv[1])))
for name in sys.argv[2:]:
    queue.add(f"feat/{name}")
    time.sleep(0.15)
"""


def test_enqueues_racing_a_batch_are_neither_lost_nor_landed_twice(
    repo: Path, tmp_path: Path
) -> None:
    first = {f"a{n}": "good" for n in range(4)}
    late = {f"z{n}": "bad" if n == 3 else "good" for n in range(10)}
    settings = {"batch_max": 4, "parallel_runs": 2, "flaky_retries": 0}
    queue = queued(repo, tmp_path, first, settings)
    make_branches(repo, late)
    before = main_reflog(repo)
    processor = start_processor(repo, None, "--all")
    adder = subprocess.Popen(
        [sys.executable, "-c", ADD_WHILE_PROCESSING, str(repo), *late], env=cli_env()
    )
    assert adder.wait(timeout=120) == 0
    _, err = processor.communicate(timeout=300)
    assert processor.returncode in (0, 1), err
    queue.process(run_all=True)  # whatever joined after that processor had finished

    assert outcomes_by_name(repo) == {
        **dict.fromkeys(first, COMPLETED),
        **{name: FAILED if kind == "bad" else COMPLETED for name, kind in late.items()},
    }
    history = queue_file(repo)["history"]
    starts = [h for h in history if h["action"] == "start"]
    assert len({h["batch"] for h in starts}) > 1  # batches formed as entries came
    assert_settled(repo, tmp_path, before)
