"""Priority lanes with aging, the figures of the queue, and timeouts from history."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.timeutil import iso_z
from runeconsole.services.merge_queue import COMPLETED, HIGH, LOW, URGENT, MergeQueueSettings
from runeconsole.services.merge_queue.priority import PRIORITIES, lane
from runeconsole.services.merge_queue.timeouts import limit_for, remember_green
from tests.support.merge_queue import commit_on, make_queue, queue_file


@pytest.mark.e2e
def test_a_low_priority_entry_under_a_steady_stream_of_high_ones_lands_within_its_aging_bound(
    repo: Path, clock
) -> None:
    aging = 10.0
    queue = make_queue(repo, clock, batch_max=2, parallel_runs=1, aging_minutes=aging)
    commit_on(repo, "feat/low", {"low.txt": "low"})
    low, _ = queue.add("feat/low", priority=LOW)
    joined = clock.now()
    landed_at = None
    for round_ in range(8):  # two high-priority entries join every five minutes
        for n in (1, 2):
            branch = f"feat/high-{round_}-{n}"
            commit_on(repo, branch, {f"high-{round_}-{n}.txt": "h"})
            queue.add(branch, priority=HIGH)
        clock.advance(5 * 60)
        report = queue.process()  # one batch of two
        if any(o.entry_id == low.entry_id for o in report.outcomes):
            landed_at = clock.now()
            break
        assert all(o.branch.startswith("feat/high-") for o in report.outcomes)

    assert landed_at is not None and queue.get(low.entry_id).status == COMPLETED
    waited = (landed_at - joined).total_seconds() / 60
    bound = (PRIORITIES.index(LOW) - PRIORITIES.index(HIGH)) * aging  # 20 minutes: two levels
    assert waited <= bound + 5  # raised to high, it went before the high ones that joined later
    assert waited >= bound  # until then the high ones went first


@pytest.mark.e2e
def test_urgent_goes_into_the_next_batch_and_the_dry_run_shows_the_batches(
    repo: Path, clock
) -> None:
    queue = make_queue(repo, clock, batch_max=2, parallel_runs=2)
    for name in ("a", "b", "c"):
        commit_on(repo, f"feat/{name}", {f"{name}.txt": name})
        queue.add(f"feat/{name}")
    commit_on(repo, "feat/fix", {"fix.txt": "fix"})
    queue.add("feat/fix", priority=URGENT)

    plan = queue.plan()

    assert [[e.branch for e in batch] for batch in plan.batches] == [
        ["feat/fix", "feat/a"],
        ["feat/b", "feat/c"],
    ]
    assert plan.head is not None and plan.head.branch == "feat/fix"
    report = queue.process()
    assert [o.branch for o in report.outcomes] == ["feat/fix", "feat/a"]


@pytest.mark.e2e
def test_priority_changes_and_moves_stay_within_a_lane(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    ids = [queue.add(f"feat/{n}")[0].entry_id for n in ("a", "b", "c")]
    assert queue.set_priority(ids[2], HIGH)[1] is True
    assert queue.set_priority(ids[2], HIGH)[1] is False
    assert [e.entry_id for e in queue.read().pending()] == [ids[2], ids[0], ids[1]]
    assert queue.move(ids[0], -1)[1] is False  # first of the normal lane: the high one is above
    assert queue.move(ids[1], -1)[1] is True
    assert [e.entry_id for e in queue.read().pending()] == [ids[2], ids[1], ids[0]]
    history = [h["action"] for h in queue_file(repo)["history"]]
    assert history.count("priority") == 1 and history.count("move") == 1
    with pytest.raises(InvalidInput, match="one of urgent, high, normal, low"):
        queue.set_priority(ids[0], "asap")
    with pytest.raises(InvalidInput):
        queue.add("feat/d", priority="asap")
    queue.remove(ids[0])
    commit_on(repo, "feat/b", {"b.txt": "b"})
    commit_on(repo, "feat/c", {"c.txt": "c"})
    queue.process()
    with pytest.raises(RuneError, match="only a pending entry"):
        queue.set_priority(ids[2], LOW)


def test_waiting_raises_a_lane_one_level_per_aging_period(clock) -> None:
    fields = {"priority": LOW, "requested_at": iso_z(clock.now())}
    levels = []
    for _ in range(5):
        levels.append(lane(fields, clock.now(), 30))
        clock.advance(30 * 60)
    assert levels == [3, 2, 1, 0, 0]  # low, normal, high, urgent, and no higher
    again = {**fields, "waiting_since": iso_z(clock.now())}  # queued again just now
    assert lane(again, clock.now(), 30) == 3


@pytest.mark.e2e
def test_stats_count_depth_waits_landings_and_failures(repo: Path, clock, cli) -> None:
    queue = make_queue(repo, clock)
    for name in ("a", "b", "c"):
        commit_on(repo, f"feat/{name}", {f"{name}.txt": name})
    queue.add("feat/a")
    queue.add("feat/b")
    queue.add("feat/missing")
    queue.add("feat/c")
    clock.advance(600)
    queue.process()  # a: waited 10 min
    clock.advance(600)
    queue.process()  # b: 20 min
    clock.advance(600)
    queue.process()  # missing: failed after 30 min

    stats = queue.stats()

    assert (stats.depth, stats.pending, stats.landed, stats.failed) == (1, 1, 2, 1)
    assert (stats.wait_p50, stats.wait_p95) == (1200.0, 1800.0)
    assert stats.failure_rate == pytest.approx(1 / 3)
    assert stats.landed_per_hour == 2.0  # two in the last 30 minutes: counted over an hour
    as_json = stats.to_json()
    assert as_json["wait_p95_seconds"] == 1800.0 and as_json["batches"] == []


def test_auto_timeouts_are_three_times_the_p95_of_recent_green_runs() -> None:
    settings = MergeQueueSettings(test_command=["pytest"], test_timeout_auto=True)
    data: dict = {}
    for seconds in (10, 12, 11, 30):
        remember_green(data, ["pytest"], seconds)
    assert limit_for(settings, data, ["pytest"]) == 900  # four known: the default still
    remember_green(data, ["pytest"], 40)
    assert limit_for(settings, data, ["pytest"]) == 120  # 3 x p95 (40 s)
    for _ in range(25):
        remember_green(data, ["pytest"], 5)
    assert limit_for(settings, data, ["pytest"]) == 60  # the last 20 only; at least 60 s
    assert limit_for(settings, data, ["make", "test"]) == 900  # per command
    assert limit_for(MergeQueueSettings(test_timeout=42), data, ["pytest"]) == 42


def test_auto_timeout_from_the_talisman_and_the_history_in_the_file(repo: Path, cli) -> None:
    from tests.support.merge_queue import write_talisman

    write_talisman(repo, "true", test_timeout_seconds="auto")
    path = repo / ".claude" / "state" / "merge-queue.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"entries": [], "green_runs": {"true": [30, 31, 29, 30, 32]}}')
    stats = cli("merge-queue", "stats", "--json", "--root", str(repo)).json()
    assert stats["test_timeout_seconds"] == 96.0
    assert "3 x p95 of the last 5 green runs" in stats["test_timeout"]
    write_talisman(repo, "true", test_timeout_seconds="soon")
    refused = cli("merge-queue", "stats", "--root", str(repo))
    assert refused.code != 0 and "a number >= 1, or auto" in refused.err


@pytest.mark.e2e
def test_a_partial_batch_waits_for_company_but_not_past_its_bound(
    repo: Path, clock, tmp_path: Path
) -> None:
    queue = make_queue(repo, clock, batch_max=4, batch_wait_seconds=2.0, parallel_runs=1)
    commit_on(repo, "feat/alone", {"alone.txt": "x"})
    queue.add("feat/alone")
    import time

    started = time.monotonic()
    report = queue.process()
    assert report.outcomes[0].status == COMPLETED
    assert time.monotonic() - started >= 2.0  # it waited for company, then went alone
    commit_on(repo, "feat/old", {"old.txt": "x"})
    queue.add("feat/old")
    clock.advance(timedelta(seconds=5).total_seconds())  # it has waited long enough already
    started = time.monotonic()
    queue.process()
    assert time.monotonic() - started < 2.0
