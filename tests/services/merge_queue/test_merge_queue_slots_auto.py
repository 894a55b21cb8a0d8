"""``parallel_runs: auto``: the test slots chosen from the test command's measured CPU
share; a test that mostly waits gets more slots than there are cores, one that keeps a
core busy about one a core (on a busy machine a little more: its share is the CPU it used
over the time it took); a number still fixes them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from runeconsole.core.config import Talisman
from runeconsole.core.errors import RuneError
from runeconsole.services.merge_queue import COMPLETED, MergeQueueSettings
from runeconsole.services.merge_queue.cpu_share import (
    CPU_SHARE,
    KEPT,
    MOST,
    ShareMeter,
    cores,
    slots_for,
    slots_now,
)
from runeconsole.services.merge_queue.timeouts import command_key
from runeconsole.services.merge_queue.train import Batch, Train
from tests.support.merge_batches import check_command, make_branches, runs
from tests.support.merge_queue import make_queue, queue_file

AUTO = {"batch_max": 1, "parallel_runs": 2, "parallel_runs_auto": True, "flaky_retries": 0}
# Keeps a core busy for half a second, as a test that computes all along.
BUSY = [
    sys.executable,
    "-c",
    "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass",
]


def settings_of(merge_queue: dict[str, object]) -> MergeQueueSettings:
    talisman = Talisman(
        path=Path("talisman.yml"), data={"runeconsole": {"merge_queue": merge_queue}}
    )
    return MergeQueueSettings.from_talisman(talisman)


def most_at_once(tmp: Path) -> int:
    """The most test runs the log shows under way at one moment."""
    spans = [(r["started"], r["ended"]) for r in runs(tmp)]
    return max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)


def test_parallel_runs_is_auto_unless_a_number_is_set() -> None:
    assert settings_of({}).parallel_runs_auto
    assert settings_of({}).parallel_runs == 2  # until a run is measured
    assert settings_of({"parallel_runs": "auto"}).parallel_runs_auto
    fixed = settings_of({"parallel_runs": 4})
    assert (fixed.parallel_runs, fixed.parallel_runs_auto) == (4, False)
    assert not MergeQueueSettings().parallel_runs_auto  # built in code: a number, as given
    for wrong in ("many", 0, 65):
        with pytest.raises(RuneError, match="parallel_runs"):
            settings_of({"parallel_runs": wrong})


def test_slots_are_as_many_runs_as_the_cores_hold_at_the_measured_share() -> None:
    assert slots_for(1.0, 2) == 2  # a run keeps a core busy: one a core
    assert slots_for(0.5, 2) == 4
    assert slots_for(2.5, 2) == 1  # a run wants more than the cores: one at a time
    assert slots_for(0.0, 2) == MOST  # never more than MOST, however idle a run is
    assert slots_for(0.3, 64) == MOST


def test_the_slots_come_from_the_share_kept_for_that_test_command() -> None:
    settings = MergeQueueSettings(parallel_runs=2, parallel_runs_auto=True)
    command = ["make", "test"]
    assert slots_now(settings, {}, command) == 2  # nothing measured yet
    data = {CPU_SHARE: {command_key(command): [[0.5, 2.0], [0.5, 2.0]]}}  # a share of 0.25
    assert slots_now(settings, data, command) == slots_for(0.25, cores())
    assert slots_now(settings, data, ["other"]) == 2  # another command: not measured
    fixed = MergeQueueSettings(parallel_runs=3)
    assert slots_now(fixed, data, command) == 3


def test_the_meter_keeps_the_last_runs_of_each_command() -> None:
    meter = ShareMeter({CPU_SHARE: {"make test": [[1.0, 1.0]], "broken": "nonsense"}})
    for _ in range(KEPT + 5):
        meter.ended(["make", "test"], 2.0)
    kept = meter.pending()[CPU_SHARE]
    assert len(kept["make test"]) == KEPT and kept["broken"] == []
    assert all(wall == 2.0 for _, wall in kept["make test"])


def test_slots_added_open_the_window_at_once_and_slots_gone_close_it() -> None:
    train = Train(parallel_runs=2, flaky_retries=1, new_id=str)
    train.resize(8)
    assert (train.parallel_runs, train.window) == (8, 8)
    train.window = 3  # after failures
    train.resize(2)
    assert (train.parallel_runs, train.window) == (2, 2)
    train.resize(4)
    assert train.window == 4


@pytest.mark.e2e
def test_a_test_that_mostly_waits_runs_in_more_slots_than_there_are_cores(
    repo: Path, clock, tmp_path: Path
) -> None:
    names = [f"e{n}" for n in range(8)]
    make_branches(repo, dict.fromkeys(names, "good"))
    queue = make_queue(repo, clock, check_command(tmp_path, pause=1.0), **AUTO)
    for name in names:
        queue.add(f"feat/{name}")

    report = queue.process(run_all=True)

    assert [o.status for o in report.outcomes] == [COMPLETED] * len(names)
    stats = queue.stats()
    assert stats.cpu_share is not None and stats.cpu_share < 0.5
    assert stats.parallel_runs == slots_for(stats.cpu_share, cores()) > cores()
    assert stats.parallel_runs_auto and stats.to_json()["cpu_share"] == round(stats.cpu_share, 3)
    assert most_at_once(tmp_path) > 2  # more than the two it starts with
    kept = queue_file(repo)[CPU_SHARE][command_key(queue.settings.test_command or [])]
    assert len(kept) == len(runs(tmp_path, "start"))  # one measure a run, stopped ones too


@pytest.mark.e2e
def test_a_test_that_keeps_a_core_busy_counts_the_cpu_it_used_whatever_the_load(
    repo: Path, clock, tmp_path: Path
) -> None:
    names = [f"e{n}" for n in range(3)]
    make_branches(repo, dict.fromkeys(names, "good"))
    queue = make_queue(repo, clock, BUSY, **AUTO)
    for name in names:
        queue.add(f"feat/{name}")

    queue.process(run_all=True)

    stats = queue.stats()
    kept = queue_file(repo)[CPU_SHARE][command_key(BUSY)]
    assert len(kept) == 3 and all(cpu >= 0.45 for cpu, _ in kept)  # its half second each
    # On an idle machine about 1 (a slot a core); below only as far as other work kept
    # the run waiting for a core.
    assert stats.cpu_share is not None and stats.cpu_share > 0.2
    assert stats.parallel_runs == slots_for(stats.cpu_share, cores())


@pytest.mark.e2e
def test_a_number_fixes_the_slots_whatever_the_share(repo: Path, clock, tmp_path: Path) -> None:
    names = [f"e{n}" for n in range(4)]
    make_branches(repo, dict.fromkeys(names, "good"))
    settings = {**AUTO, "parallel_runs": 1, "parallel_runs_auto": False}
    queue = make_queue(repo, clock, check_command(tmp_path, pause=0.3), **settings)
    for name in names:
        queue.add(f"feat/{name}")

    queue.process(run_all=True)

    stats = queue.stats()
    assert stats.cpu_share is not None  # measured all the same
    assert stats.parallel_runs == 1 and most_at_once(tmp_path) == 1


def test_with_many_slots_each_new_batch_stacks_on_the_last_not_beside_it_on_one_carrier() -> None:
    train = Train(parallel_runs=8, flaky_retries=1, new_id=str)
    batches = [Batch(f"b{n}", [f"e{n}"]) for n in range(4)]
    for batch in batches:
        train.add(batch)
        on = train.base_for(batch)
        base = on.tip if on is not None and on.tip else "main"
        assert train.built(batch, on, str(base), f"tip-{batch.batch_id}", batch.batch_id)
        train.started(batch)
    # A chain: two batches on one tip could not both land without one built again.
    assert [b.on for b in batches] == [None, "b0", "b1", "b2"]
