"""The queue file: operations, their history, MERGE_READY pick-up, predictions, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.merge_queue import (
    COMPLETED,
    FAILED,
    PENDING,
    MergeQueue,
    MergeQueueSettings,
)
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.support.merge_queue import (
    commit_in_checkout,
    commit_on,
    git,
    make_queue,
    queue_file,
)


def test_add_writes_harness_and_prd_fields(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    entry, created = queue.add(
        "feat/x", identity="worker-x", node_id="impl_x", bead_id="bd-1", pr_number=7, worktree="/w"
    )
    again, created_again = queue.add("feat/x")
    stored = queue_file(repo)["entries"][0]
    assert created and not created_again and again.entry_id == entry.entry_id
    assert entry.entry_id == f"mq-impl_x-{int(clock.now().timestamp())}"
    for key in ("entry_id", "node_id", "branch", "repo_root", "enqueued_at", "status"):
        assert stored[key] is not None
    for key in ("started_at", "completed_at", "error"):
        assert key in stored
    assert stored["identity_name"] == "worker-x" and stored["pr_number"] == 7
    assert stored["bead_id"] == "bd-1" and stored["worktree_path"] == "/w"
    assert stored["requested_at"] == stored["enqueued_at"] == "2026-02-26T12:00:00Z"


def test_same_second_ids_stay_unique(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    ids = {queue.add(f"b{i}", node_id="same")[0].entry_id for i in range(3)}
    assert len(ids) == 3


@pytest.mark.parametrize(
    "branch", ["", "-x", "a..b", "a b", "x.lock", "main", "a~1", "refs/heads/../x"]
)
def test_bad_branch_names_are_refused(repo: Path, clock, branch: str) -> None:
    with pytest.raises(InvalidInput):
        make_queue(repo, clock).add(branch)


def test_bad_identity_is_refused_before_any_path_is_built(repo: Path, clock) -> None:
    with pytest.raises(InvalidInput):
        make_queue(repo, clock).add("feat/x", identity="../../etc")


def test_unbalanced_test_command_is_refused(repo: Path, clock) -> None:
    with pytest.raises(InvalidInput, match="test-command"):
        make_queue(repo, clock).add("feat/x", test_command="sh -c 'oops")


def test_move_pause_retry_remove_are_recorded(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    a, b, c = (queue.add(f"feat/{n}")[0].entry_id for n in "abc")
    queue.move(c, -1)
    queue.move(a, +1)
    assert queue.move(c, -1)[1] is False  # already first among pending: no change, no record
    assert [e.entry_id for e in queue.read().pending()] == [c, a, b]
    assert [e.position for e in queue.read().pending()] == [1, 2, 3]
    queue.set_paused(True)
    assert not queue.set_paused(True)
    assert queue.read().paused
    queue.set_paused(False)
    queue.remove(b)
    with pytest.raises(RuneError, match="only a failed entry"):
        queue.retry(a)
    history = queue_file(repo)["history"]
    actions = [(h["action"], h.get("entry_id")) for h in history if h["action"] != "add"]
    assert actions == [
        ("move", c),
        ("move", a),
        ("pause", None),
        ("resume", None),
        ("remove", b),
    ]
    with pytest.raises(RuneError, match="no entry"):
        queue.remove(b)


def test_retry_puts_a_failed_entry_back(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    entry, _ = queue.add("feat/missing")
    assert queue.process().outcomes[0].status == FAILED
    commit_on(repo, "feat/missing", {"m.txt": "m"})
    retried = queue.retry(entry.entry_id)
    assert retried.status == PENDING
    assert queue.get(entry.entry_id).get("last_failure")["reason"] == "branch_missing"
    assert queue.process().outcomes[0].status == COMPLETED
    assert queue.get(entry.entry_id).get("attempts") == 2


def test_merge_ready_signals_are_picked_up_once(repo: Path, clock) -> None:
    commit_on(repo, "feat/sig", {"s.txt": "s"})
    signals = Signals(Project(repo, clock))
    payload = {"branch": "feat/sig", "node_id": "impl_sig", "identity_name": "orch-sig"}
    signals.send("MERGE_READY", "runner", "runeconsole", payload)
    signals.send("MERGE_READY", "runner", "runeconsole", payload)  # a duplicate
    signals.send("MERGE_READY", "runner", "runeconsole", {"no": "branch"})
    queue = make_queue(repo, clock)
    report = queue.process()
    assert len(report.picked_up) == 1
    assert report.outcomes[0].status == COMPLETED
    assert queue.read().entries[0].identity == "orch-sig"
    left = Signals(Project(repo)).pending(signal_type="MERGE_READY")
    assert [s.payload for s in left] == [{"no": "branch"}]


def test_unreadable_queue_file_is_reported_not_replaced(repo: Path, clock) -> None:
    path = repo / ".claude" / "state" / "merge-queue.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"entries": [')
    queue = make_queue(repo, clock)
    assert "not valid JSON" in (queue.read().error or "")
    with pytest.raises(RuneError, match="unreadable"):
        queue.add("feat/x")
    assert path.read_text() == '{"entries": ['


def test_predictions_against_main_and_entries_ahead(repo: Path, clock) -> None:
    commit_on(repo, "feat/a", {"a.txt": "from a\n"})
    commit_on(repo, "feat/clean", {"new.txt": "n"})
    commit_on(repo, "feat/b", {"a.txt": "from b\n", "z.txt": "z"})
    commit_on(repo, "feat/old", {"b.txt": "old b\n"})
    commit_in_checkout(repo, {"b.txt": "main b\n"}, "main edits b")
    queue = make_queue(repo, clock)
    ids = [queue.add(b)[0].entry_id for b in ("feat/a", "feat/clean", "feat/b", "feat/old")]
    queue.add("feat/gone")

    predictions = queue.predict()

    a, clean, b, old = (predictions[i] for i in ids)
    assert not a.conflicts and not clean.conflicts
    assert b.against_main == [] and b.against_queue == ["a.txt"]
    assert b.with_entries == {ids[0]: ["a.txt"]}
    assert old.against_main == ["b.txt"]
    assert predictions[queue.read().pending()[-1].entry_id].error == "branch missing"
    assert queue.predict() is predictions  # cached while nothing changed
    commit_in_checkout(repo, {"c.txt": "c"}, "main moves")
    assert queue.predict() is not predictions


def test_settings_from_talisman(repo: Path) -> None:
    from runeconsole.core.config import Talisman

    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  merge_queue:\n    test_command: pytest -q tests\n"
        "    on_interrupted: retry\n    keep_branch: true\n"
    )
    settings = MergeQueueSettings.from_talisman(Talisman.load(repo))
    assert settings.test_command == ["pytest", "-q", "tests"]
    assert settings.on_interrupted == "retry" and settings.keep_branch
    (repo / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  merge_queue:\n    test_command: 5\n"
    )
    with pytest.raises(RuneError, match="test_command"):
        MergeQueueSettings.from_talisman(Talisman.load(repo))
    lenient = Talisman.load(repo, strict=False)
    assert MergeQueueSettings.from_talisman(lenient).test_command is None
    assert lenient.problems


def test_predictions_cover_the_head_of_the_queue_only(repo: Path, clock) -> None:
    queue = make_queue(repo, clock, predict_limit=2)
    for name in "abc":
        commit_on(repo, f"feat/{name}", {f"{name}.txt": name})
        queue.add(f"feat/{name}")
    assert len(queue.predict()) == 2


def unrelated_branch(root: Path, branch: str) -> None:
    """A branch sharing no history with main (another project's root commit)."""
    tree = git(root, "mktree", data="")
    commit = git(root, "commit-tree", tree, "-m", "unrelated root")
    git(root, "update-ref", f"refs/heads/{branch}", commit)


def test_one_unpredictable_entry_does_not_hide_the_others(repo: Path, clock) -> None:
    commit_on(repo, "feat/a", {"a.txt": "from a\n"})
    unrelated_branch(repo, "feat/orphan")
    commit_on(repo, "feat/b", {"a.txt": "from b\n"})
    queue = make_queue(repo, clock)
    a, orphan, b = (queue.add(n)[0].entry_id for n in ("feat/a", "feat/orphan", "feat/b"))

    predictions = queue.predict()

    assert "unrelated histories" in (predictions[orphan].error or "")
    assert not predictions[a].conflicts
    assert predictions[b].error is None and predictions[b].with_entries == {a: ["a.txt"]}


def test_a_conflict_with_main_still_names_the_entries_ahead(repo: Path, clock) -> None:
    commit_on(repo, "feat/a", {"a.txt": "from a\n"})
    commit_on(repo, "feat/both", {"a.txt": "from both\n", "b.txt": "from both\n"})
    commit_in_checkout(repo, {"b.txt": "main b\n"}, "main edits b")
    queue = make_queue(repo, clock)
    a, both = (queue.add(n)[0].entry_id for n in ("feat/a", "feat/both"))

    prediction = queue.predict()[both]

    assert prediction.against_main == ["b.txt"]
    assert prediction.with_entries == {a: ["a.txt"]}
    assert prediction.summary() == f"main: b.txt; {a}: a.txt"


def test_every_pending_entry_is_predicted_by_default(repo: Path, clock) -> None:
    queue = MergeQueue(Project(repo, clock), MergeQueueSettings(test_command=["true"]))
    for n in range(60):
        queue.add(f"feat/missing-{n}")
    predictions = queue.predict()
    assert len(predictions) == 60
    assert all(p.error == "branch missing" for p in predictions.values())


def test_predictions_ahead_of_a_change_are_not_computed_again(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    for name in ("a", "b", "c"):
        commit_on(repo, f"feat/{name}", {f"{name}.txt": name})
        queue.add(f"feat/{name}")
    first = queue.predict()
    commit_on(repo, "feat/d", {"d.txt": "d"})
    queue.add("feat/d")
    commit_on(repo, "feat/c", {"c.txt": "c again"}, base="feat/c")  # the tail entry moved

    second = queue.predict()

    a, b, c, d = (e.entry_id for e in queue.read().pending())
    assert second[a] is first[a] and second[b] is first[b]  # same prefix: reused
    assert second[c] is not first[c] and not second[d].conflicts


def test_what_is_held_for_the_next_write_survives_a_write_that_fails(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    queue.add("feat/x")
    queue.write_later({"window": 3})
    with pytest.raises(RuneError):
        queue.update_entry("mq-nowhere-1", {"step": "x"})
    queue.flush()
    assert queue_file(repo)["window"] == 3
