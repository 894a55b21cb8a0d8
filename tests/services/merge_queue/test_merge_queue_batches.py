"""Batches on real repositories: one move of main for many entries, bisection down to the
culprits, flaky retries, conflicts mid-batch, speculative runs tested again."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.services.merge_queue import COMPLETED, CONFLICT, FAILED, TESTS_FAILED
from tests.support.merge_batches import (
    BATCHED,
    assert_settled,
    check_command,
    entry_ids,
    main_reflog,
    make_branches,
    outcomes_by_name,
    runs,
    signals_per_entry,
)
from tests.support.merge_queue import (
    commit_in_checkout,
    commit_on,
    first_parent_subjects,
    git,
    make_queue,
    queue_file,
    rev,
    worktree_paths,
)


@pytest.mark.e2e
def test_a_green_batch_lands_with_one_move_of_main_and_each_entry_its_own_commit(
    repo: Path, clock, tmp_path: Path
) -> None:
    names = ["one", "two", "three", "four"]
    make_branches(repo, dict.fromkeys(names, "good"))
    queue = make_queue(repo, clock, check_command(tmp_path), **BATCHED)
    for name in names:
        queue.add(f"feat/{name}", identity=f"worker-{name}")
    before = main_reflog(repo)

    report = queue.process()

    assert [o.status for o in report.outcomes] == [COMPLETED] * 4
    assert len(runs(tmp_path)) == 1  # tested once, at the tip
    assert len(main_reflog(repo)) == len(before) + 1  # one compare-and-swap
    entries = queue_file(repo)["entries"]
    commits = [e["merged_commit"] for e in entries]
    assert commits[-1] == rev(repo, "main") and len(set(commits)) == 4
    assert first_parent_subjects(repo)[:4] == [f"add {n}" for n in reversed(names)]
    for entry, commit in zip(entries, commits, strict=True):  # each its own commit
        assert entry["steps"][-1]["step"] == "merge" and entry["batch_id"]
        assert rev(repo, f"{commit}") == commit
    assert all(len(s) == 1 for s in signals_per_entry(repo).values())
    assert (repo / "four.txt").exists() and worktree_paths(repo) == [str(repo)]
    assert_settled(repo, tmp_path, before)


@pytest.mark.e2e
def test_bisection_finds_two_culprits_in_a_batch_of_eight(repo: Path, clock, tmp_path) -> None:
    spec = {f"e{n}": "bad" if n in (3, 6) else "good" for n in range(1, 9)}
    make_branches(repo, spec)
    settings = {**BATCHED, "parallel_runs": 1}
    queue = make_queue(repo, clock, check_command(tmp_path), **settings)
    for name in spec:
        queue.add(f"feat/{name}")
    ids = {v: k for k, v in entry_ids(repo).items()}
    before = main_reflog(repo)

    report = queue.process()

    assert outcomes_by_name(repo) == {
        n: FAILED if k == "bad" else COMPLETED for n, k in spec.items()
    }
    culprits = [o for o in report.outcomes if o.status == FAILED]
    assert {o.reason for o in culprits} == {TESTS_FAILED}
    assert all(o.output_tail and "bad:" in o.output_tail[-1] for o in culprits)
    tested = [[ids[e] for e in r["entries"]] for r in runs(tmp_path)]
    assert tested == [
        [f"e{n}" for n in range(1, 9)],  # the batch: red
        ["e1", "e2", "e3", "e4"],  # its first half: red
        ["e5", "e6", "e7", "e8"],  # so the second is likely to pass: it goes first; red
        ["e5", "e6"],  # red
        ["e7", "e8"],  # likely to pass: first; green, lands
        ["e5"],  # green, lands: e6 holds all that e5+e6 failed for: it failed alone
        ["e6"],  # its retry: the culprit
        ["e1", "e2"],  # green, lands: e3+e4 hold what e1-e4 failed for: split unrun
        ["e3"],  # red alone
        ["e3"],  # and on its retry: the culprit
        ["e4"],
    ]
    for entry in queue_file(repo)["entries"]:
        if entry["status"] == FAILED:
            assert any("found by bisecting" in n for n in entry["notes"])
    assert_settled(repo, tmp_path, before)


def test_a_flaky_entry_lands_on_retry_marked_flaky(repo: Path, clock, tmp_path: Path) -> None:
    make_branches(repo, {"f": "flaky"})
    command = check_command(tmp_path)
    queue = make_queue(repo, clock, command, **BATCHED)
    entry, _ = queue.add("feat/f")
    before = main_reflog(repo)

    outcome = queue.process().outcomes[0]

    assert outcome.status == COMPLETED
    assert [r["ok"] for r in runs(tmp_path)] == [False, True]
    stored = queue.get(entry.entry_id)
    assert stored.get("flaky") is True
    assert any("marked flaky" in note for note in outcome.notes)
    assert list(queue.stats().flaky.values()) == [1]
    assert [s["result"] for s in stored.get("steps") if s["step"] == "test"] == ["exit 1", "passed"]
    assert_settled(repo, tmp_path, before)


@pytest.mark.e2e
def test_a_batch_whose_rebase_conflicts_midway_fails_only_that_entry(
    repo: Path, clock, tmp_path: Path
) -> None:
    make_branches(repo, {"one": "good", "two": "good"})
    commit_on(repo, "feat/three", {"a.txt": "three's a\n"}, message="add three")
    commit_on(repo, "feat/four", {"two.txt": "four's two\n"}, message="add four")  # vs two
    make_branches(repo, {"five": "good"})
    commit_in_checkout(repo, {"a.txt": "main's a\n"}, "main edits a")  # three now conflicts
    queue = make_queue(repo, clock, check_command(tmp_path), **BATCHED)
    for name in ("one", "two", "three", "four", "five"):
        queue.add(f"feat/{name}")
    before = main_reflog(repo)

    first = queue.process()  # the head batch: three fails, four waits for two to land

    assert outcomes_by_name(repo) == {
        "one": COMPLETED,
        "two": COMPLETED,
        "three": FAILED,
        "four": "pending",
        "five": COMPLETED,
    }
    (conflict,) = [o for o in first.outcomes if o.status == FAILED]
    assert (conflict.reason, conflict.conflict_files) == (CONFLICT, ["a.txt"])
    assert [[e for e in r["entries"]] for r in runs(tmp_path)] == [
        [entry_ids(repo)[n] for n in ("one", "two", "five")]
    ]
    second = queue.process()  # four, alone on the new main: it conflicts with two's file
    assert (second.outcomes[0].reason, second.outcomes[0].conflict_files) == (CONFLICT, ["two.txt"])
    assert_settled(repo, tmp_path, before)


@pytest.mark.e2e
def test_a_speculative_batch_is_tested_again_on_the_new_base_after_a_failure(
    repo: Path, clock, tmp_path: Path
) -> None:
    make_branches(repo, {"e1": "good", "e2": "bad", "e3": "good", "e4": "good"})
    settings = {"batch_max": 2, "parallel_runs": 2, "flaky_retries": 0}
    queue = make_queue(repo, clock, check_command(tmp_path, pause=1.0), **settings)
    for name in ("e1", "e2", "e3", "e4"):
        queue.add(f"feat/{name}")
    ids = {v: k for k, v in entry_ids(repo).items()}
    before = main_reflog(repo)

    queue.process(run_all=True)

    assert outcomes_by_name(repo) == {
        "e1": COMPLETED,
        "e2": FAILED,
        "e3": COMPLETED,
        "e4": COMPLETED,
    }
    started = [[ids[e] for e in r["entries"]] for r in runs(tmp_path, "start")]
    first = runs(tmp_path)[0]
    assert started[:2] == [["e1", "e2"], ["e3", "e4"]]
    assert [ids[e] for e in first["entries"]] == ["e1", "e2"] and not first["ok"]
    speculative = runs(tmp_path, "start")[1]
    assert speculative["started"] < first["ended"]  # it ran on top of the batch ahead
    ended = [r for r in runs(tmp_path) if [ids[e] for e in r["entries"]] == ["e3", "e4"]]
    assert ended[-1]["ok"]  # tested again, on main without e2: it landed
    assert git(repo, "merge-base", "--is-ancestor", ended[-1]["commit"], "main") == ""
    assert queue_file(repo)["window"] >= 1
    assert_settled(repo, tmp_path, before)
