"""The merge-queue file shared with the harness's guardian: an entry it holds, an entry a
processor died on (twice), honest dry runs and a status that never says "None"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from runeconsole.core.timeutil import iso_z
from runeconsole.services.merge_queue import COMPLETED, FAILED, INTERRUPTED, PENDING, MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.interop.harness import BRANCHES
from tests.support.cli import cli_env
from tests.support.merge_queue import commit_on, queue_file, rev, write_talisman
from tests.support.polling import wait_until
from tests.support.suspended import dead_pid

AUTH, DB = "mq-impl_auth-1795458206", "mq-impl_db-1795458206"


def harness_claims(root: Path, entry_id: str, started: datetime, **extra: Any) -> None:
    """What the harness's ``dequeue_next`` writes: ``in_progress`` and ``started_at``
    (its ``isoformat()``, microseconds and ``+00:00``), no lock, no pid."""
    path = root / ".claude" / "state" / "merge-queue.json"
    data = json.loads(path.read_text())
    for entry in data["entries"]:
        if entry["entry_id"] == entry_id:
            entry.update(status="in_progress", started_at=started.isoformat(), **extra)
    path.write_text(json.dumps(data, indent=2))


def entry(root: Path, entry_id: str) -> dict[str, Any]:
    return next(e for e in queue_file(root)["entries"] if e["entry_id"] == entry_id)


# -- another processor's entry ------------------------------------------------------------------


def test_an_entry_the_guardian_is_merging_blocks_processing_and_names_it(
    harness_repo: Path, cli
) -> None:
    harness_claims(harness_repo, AUTH, datetime.now(UTC))
    main_before = rev(harness_repo, "main")
    root = ("--root", str(harness_repo))

    result = cli("merge-queue", "process", "--all", *root)
    dry = cli("merge-queue", "process", "--dry-run", *root)
    status = cli("merge-queue", "status", *root)
    as_json = cli("merge-queue", "status", "--json", *root).json()

    assert result.code == 1
    assert f"{AUTH} ({BRANCHES['impl_auth']}) is being merged by another processor" in result.err
    assert "no pid recorded" in result.err and "remove" in result.err
    assert rev(harness_repo, "main") == main_before
    assert entry(harness_repo, DB)["status"] == PENDING  # the next one waited
    assert dry.code == 1 and "being merged by another processor" in dry.out
    assert "held by another processor" in status.out and "None" not in status.out
    assert as_json["held_by_others"][0]["entry_id"] == AUTH
    assert as_json["waiting_for"] and as_json["held_by_others"][0]["pid"] is None


def test_a_live_owner_keeps_its_entry_however_old(harness_repo: Path, cli) -> None:
    old = datetime.now(UTC) - timedelta(hours=5)
    harness_claims(harness_repo, AUTH, old, pid=os.getpid())
    result = cli("merge-queue", "process", "--root", str(harness_repo))
    assert result.code == 1 and f"pid {os.getpid()}, running" in result.err


@pytest.mark.e2e
def test_a_provably_dead_holder_is_recovered_as_interrupted_and_run_again(
    harness_repo: Path, cli
) -> None:
    old = datetime.now(UTC) - timedelta(seconds=3600)  # the test timeout is 900 s
    harness_claims(harness_repo, AUTH, old, pid=dead_pid())

    result = cli("merge-queue", "process", "--root", str(harness_repo))

    assert result.code == 0, result.out + result.err
    assert f"recovered: {AUTH}: interrupted" in result.out and "queued again" in result.out
    stored = entry(harness_repo, AUTH)
    assert stored["status"] == COMPLETED
    assert stored["attempts"] == 2  # the guardian's and ours
    assert stored["interruptions"] == 1
    assert "being merged by another processor (pid" in stored["recovered_from"]


# -- an interrupted entry runs again once -------------------------------------------------------


def start_processor(root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "merge-queue", "process", "--root", str(root)],
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def kill_during_tests(root: Path, marker: Path) -> None:
    """kill -9 the processor (and its tests) once the tests run."""
    marker.unlink(missing_ok=True)
    processor = start_processor(root)
    wait_until(marker.exists, timeout=120, what="the tests to start")
    os.killpg(processor.pid, signal.SIGKILL)
    processor.communicate(timeout=30)


@pytest.mark.e2e
def test_an_interrupted_entry_runs_again_once_and_a_second_interruption_stops_it(
    harness_repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "tests-running"
    write_talisman(harness_repo, f"sh -c 'touch {marker}; sleep 120'")

    kill_during_tests(harness_repo, marker)  # first interruption: it runs again, by itself
    assert entry(harness_repo, AUTH)["status"] == "in_progress"
    kill_during_tests(harness_repo, marker)  # recovered, run again (attempt 2), killed again
    again = entry(harness_repo, AUTH)
    assert (again["status"], again["attempts"], again["interruptions"]) == ("in_progress", 2, 1)

    write_talisman(harness_repo, "true")  # the entries behind it need not wait two minutes
    report = MergeQueue(Project(harness_repo)).process()  # finds the second interruption

    stopped = entry(harness_repo, AUTH)
    assert (stopped["status"], stopped["reason"]) == (FAILED, INTERRUPTED)
    assert (stopped["attempts"], stopped["interruptions"]) == (2, 2)
    assert "interrupted 2 times" in stopped["error"]
    assert any(f"{AUTH}: interrupted during test; marked failed" in n for n in report.recovered)


# -- honest dry runs and status -----------------------------------------------------------------


@pytest.mark.e2e
def test_dry_run_considers_the_merge_ready_signals_the_real_run_picks_up(
    harness_repo: Path, cli
) -> None:
    root = ("--root", str(harness_repo))
    queue = MergeQueue(Project(harness_repo))
    for item in queue.read().entries:
        queue.remove(item.entry_id)
    commit_on(harness_repo, "feat/pay", {"pay.py": "# pay\n"})
    sent = Signals(Project(harness_repo)).send(
        "MERGE_READY", "runner", "runeconsole", {"node_id": "impl_pay", "branch": "feat/pay"}
    )
    before = json.dumps(queue_file(harness_repo), sort_keys=True)

    plan = cli("merge-queue", "process", "--dry-run", "--json", *root).json()
    text = cli("merge-queue", "process", "--dry-run", *root).out

    assert plan["refused"] is None
    assert plan["picked_up"] == [
        {"signal": sent.path.name, "branch": "feat/pay", "requested_by": "runner", "consumed": True}
    ]
    assert (plan["head"]["branch"], plan["head"]["from_signal"]) == ("feat/pay", sent.path.name)
    assert f"would pick up MERGE_READY {sent.path.name} (feat/pay)" in text
    assert "would process (new, from" in text
    assert sent.path.exists() and json.dumps(queue_file(harness_repo), sort_keys=True) == before

    done = cli("merge-queue", "process", *root)
    assert done.code == 0 and "merged feat/pay" in done.out


def test_dry_run_considers_what_recovery_would_do(harness_repo: Path, cli) -> None:
    path = harness_repo / ".claude" / "state" / "merge-queue.json"
    data = json.loads(path.read_text())
    data["entries"][1].update(status="in_progress", processor_pid=dead_pid(), attempts=1)
    path.write_text(json.dumps(data))  # a runeconsole processor died on impl_db

    plan = cli("merge-queue", "process", "--dry-run", "--json", "--root", str(harness_repo)).json()

    assert plan["recovered"] == [f"{DB}: interrupted during processing; queued again (attempt 2)"]
    assert plan["head"]["entry_id"] == AUTH  # impl_db goes back to its place, behind it
    assert entry(harness_repo, DB)["status"] == "in_progress"  # nothing was changed


def test_status_and_list_never_print_none(harness_repo: Path, cli) -> None:
    path = harness_repo / ".claude" / "state" / "merge-queue.json"
    data = json.loads(path.read_text())
    data["entries"][0].update(status="in_progress", started_at=iso_z(datetime.now(UTC)))
    data["entries"][1].update(status="failed", completed_at=None)  # as the harness may leave it
    path.write_text(json.dumps(data))
    root = ("--root", str(harness_repo))

    for args in (("status",), ("list", "--no-predict"), ("process", "--dry-run")):
        result = cli("merge-queue", *args, *root)
        assert "None" not in result.out + result.err, args
