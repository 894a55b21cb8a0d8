"""Real processes: kill -9 at each step then recovery, concurrent processors, 8 x 500 enqueues."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.services.merge_queue import COMPLETED, FAILED, INTERRUPTED, QueueBusy
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.support.cli import cli_env
from tests.support.merge_queue import (
    commit_in_checkout,
    commit_on,
    git,
    kill_processor_when,
    make_queue,
    paused_at,
    queue_file,
    rev,
    start_processor,
    worktree_paths,
    write_talisman,
)
from tests.support.polling import wait_until

# Real processes killed with -9 at every pause point: an end-to-end floor (``-m e2e``).
pytestmark = pytest.mark.e2e


def current_step(root: Path) -> str | None:
    try:
        entries = queue_file(root)["entries"]
    except (OSError, ValueError):
        return None
    return entries[0].get("current_step") if entries else None


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def assert_interrupted(repo: Path, step: str, main_before: str) -> None:
    """Failed as interrupted at ``step``; main untouched; the queue's worktree gone."""
    entry = queue_file(repo)["entries"][0]
    assert (entry["status"], entry["reason"]) == (FAILED, INTERRUPTED)
    assert f"during {step}" in entry["error"]
    assert rev(repo, "main") == main_before
    assert worktree_paths(repo) == [str(repo)]


def many_commits(root: Path, branch: str, count: int) -> None:
    """``count`` commits on ``branch`` in one fast-import: a rebase that takes seconds."""
    base = rev(root, "main")
    lines = []
    for n in range(count):
        body = f"line {n}\n" * 3
        message = f"step {n}"
        lines += [f"commit refs/heads/{branch}", "committer t <t@t> 1700000000 +0000"]
        lines += [f"data {len(message)}", message]
        if n == 0:
            lines.append(f"from {base}")
        lines += [f"M 100644 inline many/{n % 50}.txt", f"data {len(body)}", body]
    git(root, "fast-import", "--quiet", data="\n".join(lines) + "\n")


def test_kill_during_rebase_then_recovery(repo: Path, clock) -> None:
    many_commits(repo, "feat/long", 400)
    commit_in_checkout(repo, {"other.txt": "o"}, "main moves")
    main_before = rev(repo, "main")
    write_talisman(repo, "true")
    make_queue(repo, clock).add("feat/long", identity="worker-long")
    rebase_state = repo / ".git" / "worktrees" / "runeconsole-merge-queue" / "rebase-merge"
    # The processor and its git children die while git rebase is under way.
    kill_processor_when(repo, rebase_state.exists, whole_group=True)
    assert queue_file(repo)["entries"][0]["status"] == "in_progress"

    report = make_queue(repo, clock, on_interrupted="fail").process()

    assert any("discarded a rebase" in note for note in report.recovered), report.recovered
    assert any("leftover worktree" in note for note in report.recovered)
    assert_interrupted(repo, "rebase", main_before)


def test_kill_during_tests_then_recovery(repo: Path, clock, tmp_path: Path) -> None:
    commit_on(repo, "feat/t", {"t.txt": "t"})
    marker = tmp_path / "test-pid"
    write_talisman(repo, f"sh -c 'echo $$ > {marker}; sleep 60'")
    make_queue(repo, clock).add("feat/t")
    main_before = rev(repo, "main")
    # Only the processor dies: its tests keep running.
    kill_processor_when(repo, lambda: marker.exists() and marker.read_text().strip() != "")
    test_pid = int(marker.read_text())
    assert alive(test_pid)
    assert (repo / ".claude" / "state" / "merge-queue.processor.json").exists()
    assert make_queue(repo, clock).processor_pid() is None  # its pid file names a dead process

    report = make_queue(repo, clock, on_interrupted="fail").process()

    assert any("process(es) left running" in note for note in report.recovered), report.recovered
    wait_until(lambda: not alive(test_pid), timeout=5, what="the orphaned tests to stop")
    assert_interrupted(repo, "test", main_before)


def test_an_interrupted_entry_runs_again_once(repo: Path, clock, tmp_path: Path) -> None:
    commit_on(repo, "feat/r", {"r.txt": "r"})
    marker = tmp_path / "ran-once"
    write_talisman(repo, f"sh -c 'test -f {marker} && exit 0; touch {marker}; sleep 60'")
    make_queue(repo, clock).add("feat/r")
    kill_processor_when(repo, marker.exists, whole_group=True)

    queue = make_queue(repo, clock, ["sh", "-c", f"test -f {marker}"], on_interrupted="retry")
    report = queue.process()

    assert any("queued again" in note for note in report.recovered)
    assert report.outcomes[0].status == COMPLETED
    assert queue.read().entries[0].get("attempts") == 2
    assert (repo / "r.txt").exists()


def test_merge_that_landed_before_the_kill_is_finished(repo: Path, clock) -> None:
    commit_on(repo, "feat/l", {"l.txt": "l"})
    queue = make_queue(repo, clock)
    entry, _ = queue.add("feat/l", identity="worker-l")
    base, tip = rev(repo, "main"), rev(repo, "feat/l")
    assert queue.claim_batch(queue.read().pending()[:1], None)  # died after moving main
    queue.update_entry(
        entry.entry_id,
        {
            "tested_commit": tip,
            "base_commit": base,
            "original_commit": tip,
            "current_step": "merge",
        },
    )
    git(repo, "update-ref", "refs/heads/main", tip, base)

    report = queue.process()

    assert any("had merged" in note for note in report.recovered)
    stored = queue.get(entry.entry_id)
    assert stored.status == COMPLETED and stored.get("merged_commit") == tip
    assert (repo / "l.txt").read_text() == "l"  # the checkout was brought up to date
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_concurrent_processors_are_refused_with_the_pid(repo: Path, clock, tmp_path, run_cli):
    commit_on(repo, "feat/c", {"c.txt": "c"})
    release = tmp_path / "release"
    write_talisman(repo, f"sh -c 'while [ ! -f {release} ]; do sleep 0.05; done'")
    make_queue(repo, clock).add("feat/c")
    first = start_processor(repo)
    wait_until(lambda: current_step(repo) == "test", what="the first processor's tests")

    second = run_cli("merge-queue", "process", "--root", str(repo))
    status = run_cli("merge-queue", "status", "--json", "--root", str(repo))
    with pytest.raises(QueueBusy, match=f"pid {first.pid}"):
        make_queue(repo, clock).process()
    release.touch()
    out, err = first.communicate(timeout=60)

    assert second.returncode == 1
    assert f"queue is being processed by pid {first.pid}" in second.stderr
    assert json.loads(status.stdout)["processing_pid"] == first.pid
    assert first.returncode == 0, err
    assert "merged feat/c" in out


def signal_types(root: Path, target: str) -> list[str]:
    return sorted(s.signal_type for s in Signals(Project(root)).pending(target=target))


@pytest.mark.parametrize("conflict", [True, False], ids=["conflict", "merged"])
def test_signals_recorded_but_not_sent_at_a_kill_are_sent_by_recovery(
    repo: Path, clock, tmp_path: Path, conflict: bool
) -> None:
    if conflict:
        commit_on(repo, "feat/s", {"a.txt": "branch a\n"})
        commit_in_checkout(repo, {"a.txt": "main a\n"}, "main edits a")
        expected = ["MERGE_CONFLICT", "MERGE_FAILED"]
    else:
        commit_on(repo, "feat/s", {"s.txt": "s"})
        expected = ["MERGE_COMPLETE"]
    write_talisman(repo, "true")
    make_queue(repo, clock).add("feat/s", identity="worker-s")
    env, paused = paused_at("merge-queue-signals-due", tmp_path)
    # The outcome is saved; the processor dies before writing any signal.
    kill_processor_when(repo, paused, env=env)
    entry = queue_file(repo)["entries"][0]
    assert entry["status"] == (FAILED if conflict else COMPLETED)
    assert [s["signal_type"] for s in entry["signals_pending"]] == expected
    assert signal_types(repo, "worker") == []

    report = make_queue(repo, clock).process()

    assert any("signals its processor had not" in note for note in report.recovered)
    assert signal_types(repo, "worker") == expected
    assert queue_file(repo)["entries"][0]["signals_pending"] == []
    assert make_queue(repo, clock).process().recovered == []
    assert signal_types(repo, "worker") == expected  # once only


def test_recovery_does_not_send_again_what_went_out_before_the_kill(repo: Path, clock) -> None:
    queue = make_queue(repo, clock)
    entry, _ = queue.add("feat/gone", identity="worker-g")
    queue.process()  # branch_missing: MERGE_FAILED sent
    signals = Signals(Project(repo, clock))
    (failed,) = signals.pending(signal_type="MERGE_FAILED")
    signals.consume(failed)  # and already read by its agent
    # As a processor killed after sending MERGE_FAILED, before clearing the record.
    owed = [{"signal_type": "MERGE_FAILED", "target": failed.target, "payload": failed.payload}]
    owed.append({"signal_type": "MERGE_CONFLICT", "target": failed.target, "payload": {"x": 1}})
    queue.update_entry(entry.entry_id, {"signals_pending": owed})

    report = queue.process()

    assert any("MERGE_CONFLICT" in note for note in report.recovered), report.recovered
    assert signal_types(repo, "worker") == ["MERGE_CONFLICT"]
    assert queue.get(entry.entry_id).get("signals_pending") == []


def test_checkout_changed_after_the_check_gets_main_put_back(repo: Path, clock, tmp_path) -> None:
    commit_on(repo, "feat/n", {"new.txt": "from the branch\n"})
    write_talisman(repo, "true")
    make_queue(repo, clock).add("feat/n")
    before = rev(repo, "main")
    env, paused = paused_at("merge-queue-main-moved", tmp_path)
    processor = start_processor(repo, env)
    wait_until(paused, what="main to have moved")
    assert rev(repo, "main") != before
    (repo / "new.txt").write_text("made by the operator just now\n")
    (tmp_path / "merge-queue-main-moved.go").touch()
    out, err = processor.communicate(timeout=60)

    assert processor.returncode == 1, out + err
    entry = queue_file(repo)["entries"][0]
    assert (entry["status"], entry["reason"]) == (FAILED, "main_dirty")
    assert rev(repo, "main") == before
    assert git(repo, "status", "--porcelain") == "?? new.txt"
    assert (repo / "new.txt").read_text() == "made by the operator just now\n"


ENQUEUE = """
import sys
from collections.abc import Callable
from pathlib import Path
from runeconsole.services.merge_queue import MergeQueue, MergeQueueSettings
from runeconsole.services.project import Project
queue = MergeQueue(Project(Path(sys.argv[1])), settings=MergeQueueSettings())
worker = sys.argv[2]
for n in range(int(sys.argv[3])):
    queue.add(f"w{worker}/b{n}", node_id=f"w{worker}_{n}")
"""


# 4,000 locked rewrites of a file that grows to 4,000 entries: minutes on a busy 2-core
# machine, so the suite's 180 s would cut it short; a hang still fails, at the wait below.
@pytest.mark.timeout(660)
def test_eight_processes_enqueue_500_each_and_nothing_is_lost(project: Path) -> None:
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", ENQUEUE, str(project), str(w), "500"], env=cli_env()
        )
        for w in range(8)
    ]
    for worker in workers:
        assert worker.wait(timeout=600) == 0
    entries = queue_file(project)["entries"]
    assert len(entries) == 4000
    assert len({e["entry_id"] for e in entries}) == 4000
    assert {e["branch"] for e in entries} == {f"w{w}/b{n}" for w in range(8) for n in range(500)}


WATCH_STATUS = """
import sys, time
from pathlib import Path
from runeconsole.services.merge_queue import MergeQueue, MergeQueueSettings
from runeconsole.services.project import Project
queue = MergeQueue(Project(Path(sys.argv[1])), settings=MergeQueueSettings())
stop, ready = Path(sys.argv[2]), Path(sys.argv[3])
seen = set()
deadline = time.monotonic() + 120
while not stop.exists() and time.monotonic() < deadline:
    seen.add(queue.processor_pid())
    ready.touch()
print(sorted(seen, key=str))
"""


def test_asking_who_processes_never_turns_a_processor_away(repo: Path, clock, tmp_path) -> None:
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    watcher = subprocess.Popen(
        [sys.executable, "-c", WATCH_STATUS, str(repo), str(stop), str(ready)],
        env=cli_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(ready.exists, what="the status watcher to start")
        queue = make_queue(repo, clock)
        for _ in range(150):  # each run takes the processor lock while status is asked
            queue.process()
    finally:
        stop.touch()
        out, _ = watcher.communicate(timeout=60)
    assert "-1" not in out
