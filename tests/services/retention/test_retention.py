"""Retention on real files: what leaves for the monthly archive, what never does, what the
CLI still reads, and a prune killed half-way."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runeconsole.core.crash_points import PAUSE_AT_ENV, PAUSE_DIR_ENV
from runeconsole.core.errors import RuneError
from runeconsole.core.locks import owned
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.permissions import files
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.project import Project
from runeconsole.services.retention import Retention
from tests.support.cli import CliResult, cli_env
from tests.support.old_records import answered_questions, decided_requests
from tests.support.polling import wait_until

NOW = datetime.now(UTC)
Cli = Callable[..., CliResult]


def live_requests(root: Path) -> set[str]:
    return {r.id for r in Permissions(Project(root)).requests()}


def archived_ids(root: Path, kind: str) -> list[str]:
    found = []
    for path in sorted((root / ".claude/state/archive" / kind).glob("*.jsonl.gz")):
        with gzip.open(path, "rt") as lines:
            found += [json.loads(line)["id"] for line in lines]
    return found


def talisman(root: Path, text: str) -> None:
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "talisman.yml").write_text(text)


def test_decisions_older_than_the_policy_move_to_the_archive_and_history_all_still_lists_them(
    project: Path, cli: Cli
) -> None:
    ids = decided_requests(project, 120, newest=NOW - timedelta(hours=1), days=30)
    before = cli("permissions", "history", "--json", "--root", str(project)).json()

    result = cli("prune", "--json", "--root", str(project))

    assert result.code == 0, result.err
    report = {k["kind"]: k for k in result.json()["kinds"]}
    recent = {i for i, r in zip(ids, before, strict=True) if r["asked_at"] >= _iso(7)}
    assert live_requests(project) == recent
    assert report["permissions"]["archived"] == 120 - len(recent)
    assert sorted(archived_ids(project, "permissions")) == sorted(set(ids) - recent)
    listed = cli("permissions", "history", "--all", "--json", "--root", str(project)).json()
    assert [r["id"] for r in listed] == ids  # every decision, oldest first, once
    assert [r["outcome"] for r in listed] == [r["outcome"] for r in before]
    shown = cli("permissions", "history", "--json", "--root", str(project)).json()
    assert {r["id"] for r in shown} == recent


def _iso(days_ago: float) -> str:
    moment = NOW - timedelta(days=days_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_an_open_request_is_never_archived_however_old(project: Path, cli: Cli) -> None:
    [old] = decided_requests(project, 1, newest=NOW - timedelta(days=90), days=1)
    request = files.request_path(ProjectPaths(project), old)
    files.decision_path(request).unlink()  # waiting still...
    body = json.loads(request.read_text())
    body["hook_pid"] = os.getpid()  # ... and its hook is alive
    request.write_text(json.dumps(body))

    result = cli("prune", "--json", "--root", str(project))

    kinds = {k["kind"]: k for k in result.json()["kinds"]}
    assert kinds["permissions"]["pending"] == 1 and kinds["permissions"]["archived"] == 0
    assert live_requests(project) == {old}
    assert Permissions(Project(project)).pending()[0].id == old


def test_a_request_whose_hook_is_gone_is_closed_by_nobody_then_archived(
    project: Path, cli: Cli
) -> None:
    [old] = decided_requests(project, 1, newest=NOW - timedelta(days=90), days=1)
    files.decision_path(files.request_path(ProjectPaths(project), old)).unlink()

    cli("prune", "--root", str(project))

    [archived] = cli("permissions", "history", "--all", "--json", "--root", str(project)).json()
    assert archived["id"] == old and archived["decision"]["decided_by"] == "nobody"
    assert live_requests(project) == set()


def test_the_count_keeps_the_newest_and_the_lock_files_of_the_rest_go(
    project: Path, cli: Cli
) -> None:
    talisman(project, "runeconsole:\n  retention:\n    permissions: {days: 0, keep: 10}\n")
    ids = decided_requests(project, 30, newest=NOW, days=1)
    paths = ProjectPaths(project)
    for request_id in ids:
        paths.lock_for(files.lock_name(request_id)).parent.mkdir(parents=True, exist_ok=True)
        paths.lock_for(files.lock_name(request_id)).touch()
    marker = files.waits_dir(paths) / f"claude-web-0000.{ids[0]}"
    marker.parent.mkdir(parents=True)
    marker.touch()

    cli("prune", "--root", str(project))

    assert live_requests(project) == set(ids[-10:])
    left = {p.name for p in paths.locks.iterdir()}
    assert left == {f"{files.lock_name(i)}.lock" for i in ids[-10:]} | {"retention.lock"}
    assert not marker.exists()


def test_a_dry_run_counts_and_writes_nothing(project: Path, cli: Cli) -> None:
    decided_requests(project, 40, newest=NOW - timedelta(days=20), days=10)
    answered_questions(project, 10, newest=NOW - timedelta(days=30), days=5)
    before = sorted(str(p) for p in project.rglob("*") if ".git" not in p.parts)

    result = cli("prune", "--dry-run", "--json", "--root", str(project))

    kinds = {k["kind"]: k for k in result.json()["kinds"]}
    assert (kinds["permissions"]["archived"], kinds["questions"]["archived"]) == (40, 10)
    assert result.json()["summary"] == "would archive 40 permissions, 10 questions"
    after = sorted(str(p) for p in project.rglob("*") if ".git" not in p.parts)
    assert after == before


def test_a_prune_killed_between_archive_and_removal_finishes_next_time_without_duplicates(
    project: Path, tmp_path: Path
) -> None:
    ids = decided_requests(project, 50, newest=NOW - timedelta(days=20), days=10)
    env = {**cli_env(), PAUSE_AT_ENV: "retention-archived", PAUSE_DIR_ENV: str(tmp_path)}
    pruning = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", "prune", "--root", str(project)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until((tmp_path / "retention-archived.paused").exists, what="the prune to pause")
    os.kill(pruning.pid, signal.SIGKILL)
    pruning.wait(timeout=10)
    assert sorted(archived_ids(project, "permissions")) == sorted(ids)  # archived...
    assert live_requests(project) == set(ids)  # ... and still live: both at once

    history = Retention(Project(project)).archived_permissions(
        Permissions(Project(project)).history()
    )
    assert history == []  # a reader shows each once, the live one
    report = Retention(Project(project)).prune()

    kinds = {k.kind: k for k in report.kinds}
    assert kinds["permissions"].recovered == 50
    assert live_requests(project) == set()
    assert sorted(archived_ids(project, "permissions")) == sorted(ids)  # once each


def test_answered_questions_leave_and_waiting_ones_stay_and_list_all_reads_the_archive(
    project: Path, cli: Cli
) -> None:
    relayed = answered_questions(project, 20, newest=NOW - timedelta(days=20), days=5)
    paths = ProjectPaths(project)
    for seq, directory in enumerate(("rune-work-20250101-000000", "rune-work-20250102-000000")):
        signal_dir = paths.question_signals / directory
        signal_dir.mkdir(parents=True)
        asked = {"task_id": "task-1", "question": "Go?", "options": "A: yes, B: no", "seq": 1}
        (signal_dir / "task-1.q1.question").write_text(json.dumps(asked))
        if seq == 0:  # the older one is answered; the newer waits
            answer = {"task_id": "task-1", "answer": "yes", "decided_by": "user", "seq": 1}
            (signal_dir / "task-1.q1.answer").write_text(json.dumps(answer))
        for name in os.listdir(signal_dir):
            old = (NOW - timedelta(days=60)).timestamp()
            os.utime(signal_dir / name, (old, old))
    paths.lock_for(f"claude-ask-{relayed[0].split('/')[1][:-3]}").parent.mkdir(parents=True)
    call_lock = paths.lock_for(f"claude-ask-{relayed[0].split('/')[1][:-3]}")
    call_lock.touch()

    cli("prune", "--root", str(project))

    waiting = cli("question", "list", "--json", "--root", str(project)).json()
    assert [q["id"] for q in waiting] == ["rune-work-20250102-000000/task-1.q1"]
    assert not (paths.question_signals / "rune-work-20250101-000000").exists()  # emptied
    assert not call_lock.exists()
    every = cli("question", "list", "--all", "--json", "--root", str(project)).json()
    assert {q["id"] for q in every} == {*relayed, *(q["id"] for q in waiting)} | {
        "rune-work-20250101-000000/task-1.q1"
    }
    archived = next(q for q in every if q["id"] == relayed[0])
    assert archived["state"] == "answered" and archived["answer"]["answer"] == "argon2"


def test_finished_queue_entries_leave_and_waiting_ones_stay(project: Path, cli: Cli) -> None:
    old, recent = _iso(60), _iso(1)
    entries = [
        {"entry_id": "mq-a-1", "branch": "a", "status": "completed", "completed_at": old},
        {"entry_id": "mq-b-1", "branch": "b", "status": "failed", "completed_at": old},
        {"entry_id": "mq-c-1", "branch": "c", "status": "completed", "completed_at": recent},
        {"entry_id": "mq-d-1", "branch": "d", "status": "pending", "enqueued_at": old},
        {"entry_id": "mq-e-1", "branch": "e", "status": "in_progress", "started_at": old},
    ]
    queue = ProjectPaths(project).merge_queue
    queue.parent.mkdir(parents=True)
    queue.write_text(json.dumps({"entries": entries, "harness_field": 1}))

    cli("prune", "--root", str(project))

    kept = json.loads(queue.read_text())
    assert [e["entry_id"] for e in kept["entries"]] == ["mq-c-1", "mq-d-1", "mq-e-1"]
    assert kept["harness_field"] == 1 and kept["history"][-1]["action"] == "prune"
    assert sorted(archived_ids(project, "merge_queue")) == ["mq-a-1", "mq-b-1"]


def test_reviews_signals_and_history_leave_by_age_whatever_their_format(
    project: Path, cli: Cli
) -> None:
    paths = ProjectPaths(project)
    old = (NOW - timedelta(days=200)).timestamp()
    made = {
        paths.state / "reviews" / "worker-a" / "r1.json": '{"verdict": "approved"}',
        paths.state / "reviews" / "worker-a" / "r2.json": '{"verdict": "comment"}',
        paths.state / "reviews" / "worker-b" / "notes.txt": "free text",
        paths.signals / "processed" / "1-a-b-MERGE_READY.json": '{"signal_type": "x"}',
        paths.identity_history / "worker-a-20250101T000000Z.json": '{"agent_id": "a"}',
        paths.supervisor / "screens" / "worker-a-1.txt": "$ last screen",
    }
    for path, text in made.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (old, old))
    fresh = paths.state / "reviews" / "worker-a" / "r3.json"
    fresh.write_text("{}")

    cli("prune", "--root", str(project))

    assert [p for p in made if p.exists()] == []
    assert fresh.exists() and not (paths.state / "reviews" / "worker-b").exists()
    assert (paths.state / "reviews").is_dir() and (paths.signals / "processed").is_dir()
    reviews = archived_ids(project, "reviews")
    assert sorted(reviews) == sorted(
        str(p.relative_to(project)) for p in made if "reviews" in p.parts
    )
    assert archived_ids(project, "signals") == [
        ".claude/attractor/signals/processed/1-a-b-MERGE_READY.json"
    ]
    assert len(archived_ids(project, "agent_history")) == 2


def test_the_logs_and_the_notification_times_are_bounded(project: Path, cli: Cli) -> None:
    paths = ProjectPaths(project)
    paths.claude_bridge.mkdir(parents=True)
    log = paths.claude_bridge / "hook.log"
    log.write_bytes(b"x" * (1024 * 1024 + 10))
    push_log = paths.state / "notify.log"
    push_log.write_bytes(b"y" * (1024 * 1024 + 10))
    (paths.state / "notify.json").write_text(
        json.dumps({"worker-a": NOW.timestamp() - 3 * 86400, "worker-b": NOW.timestamp()})
    )

    cli("prune", "--root", str(project))

    assert not log.exists() and (paths.claude_bridge / "hook.log.1").exists()
    assert not push_log.exists() and (paths.state / "notify.log.1").exists()
    assert json.loads((paths.state / "notify.json").read_text()).keys() == {"worker-b"}
    old = (NOW - timedelta(days=30)).timestamp()
    os.utime(paths.claude_bridge / "hook.log.1", (old, old))
    cli("prune", "--root", str(project))
    assert not (paths.claude_bridge / "hook.log.1").exists()


def test_an_unreadable_archive_is_said_and_the_rest_still_listed(project: Path, cli: Cli) -> None:
    ids = decided_requests(project, 10, newest=NOW - timedelta(days=20), days=1)
    cli("prune", "--root", str(project))
    month = next((project / ".claude/state/archive/permissions").glob("*.jsonl.gz"))
    month.write_bytes(month.read_bytes()[:-20])  # cut short

    result = cli("permissions", "history", "--all", "--json", "--root", str(project))

    assert result.code == 0
    assert "unreadable after" in result.err
    assert {r["id"] for r in result.json()} <= set(ids)


def test_a_bad_setting_says_the_key_and_what_is_allowed(project: Path, cli: Cli) -> None:
    talisman(project, "runeconsole:\n  retention:\n    questions: {days: -3}\n")

    result = cli("prune", "--root", str(project))

    assert result.code == 1
    assert "runeconsole.retention.questions.days is -3; allowed: a number and >= 0" in result.err


def test_a_second_prune_at_the_same_time_is_refused_naming_the_first(project: Path) -> None:
    retention = Retention(Project(project))
    paths = ProjectPaths(project)
    held = f"another prune is running: pruning is held by pid {os.getpid()}"
    with (
        owned(paths.lock_for("retention"), paths.state / "retention.owner.json", "pruning"),
        pytest.raises(RuneError, match=held),
    ):
        retention.prune()


def test_a_prune_is_due_once_a_day_by_whoever_ran_the_last(project: Path, clock) -> None:
    retention = Retention(Project(project, clock))
    assert retention.due()
    retention.prune()
    assert not retention.due()
    clock.advance(23 * 3600)
    assert not retention.due()
    clock.advance(3600)
    assert retention.due()
