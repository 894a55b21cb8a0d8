"""``runeconsole merge-queue``: the contract scripts rely on (output and exit codes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.support.merge_queue import (
    commit_on,
    queue_file,
    rev,
    write_talisman,
)


@pytest.fixture(autouse=True)
def talisman(request: pytest.FixtureRequest) -> None:
    """In the shared ``repo`` the queue's tests pass (``true``) unless a test writes
    another command; a bare ``project`` has no test command."""
    if "repo" in request.fixturenames:
        write_talisman(request.getfixturevalue("repo"), "true")


@pytest.mark.e2e
def test_add_list_and_process_exit_codes(repo: Path, cli) -> None:
    root = ["--root", str(repo)]
    commit_on(repo, "feat/ok", {"ok.txt": "ok"})
    added = cli("merge-queue", "add", "--branch", "feat/ok", "--identity", "worker-ok", *root)
    assert added.code == 0 and "queued feat/ok as mq-feat_ok-" in added.out
    again = cli("merge-queue", "add", "--branch", "feat/ok", "--json", *root)
    assert again.json()["created"] is False
    cli("merge-queue", "add", "--branch", "feat/missing", "--pr", "12", *root)

    listing = cli("merge-queue", "list", "--json", *root).json()
    assert [e["branch"] for e in listing["entries"]] == ["feat/ok", "feat/missing"]
    assert listing["entries"][0]["prediction"]["conflicts"] is False
    assert listing["entries"][1]["prediction"]["error"] == "branch missing"
    table = cli("merge-queue", "list", *root).out
    assert "feat/ok" in table and "branch missing" in table

    dry = cli("merge-queue", "process", "--dry-run", *root)
    assert dry.code == 0 and "would process" in dry.out
    assert queue_file(repo)["entries"][0]["status"] == "pending"

    merged = cli("merge-queue", "process", *root)
    assert merged.code == 0 and "merged feat/ok" in merged.out
    assert "rebase: ok" in merged.out
    failed = cli("merge-queue", "process", "--json", *root)
    assert failed.code == 1
    assert failed.json()["outcomes"][0]["reason"] == "branch_missing"
    empty = cli("merge-queue", "process", "--all", *root)
    assert empty.code == 0 and "nothing to process" in empty.out
    assert rev(repo, "main") != rev(repo, "main~1")


@pytest.mark.e2e
def test_all_keeps_going_past_a_failure(repo: Path, cli) -> None:
    root = ["--root", str(repo)]
    commit_on(repo, "feat/one", {"one.txt": "1"})
    commit_on(repo, "feat/two", {"two.txt": "2"})
    for branch in ("feat/one", "feat/gone", "feat/two"):
        cli("merge-queue", "add", "--branch", branch, *root)
    result = cli("merge-queue", "process", "--all", "--json", *root)
    assert result.code == 1
    outcomes = result.json()["outcomes"]
    assert [o["status"] for o in outcomes] == ["completed", "failed", "completed"]


def test_queue_management_commands(repo: Path, cli) -> None:
    root = ["--root", str(repo)]
    for branch in ("feat/a", "feat/b"):
        cli("merge-queue", "add", "--branch", branch, *root)
    first, second = (e["entry_id"] for e in queue_file(repo)["entries"])
    assert cli("merge-queue", "move", second, "--up", *root).code == 0
    assert queue_file(repo)["entries"][0]["entry_id"] == second
    assert "paused" in cli("merge-queue", "pause", *root).out
    status = cli("merge-queue", "status", "--json", *root).json()
    assert status["paused"] is True and status["counts"]["pending"] == 2
    assert status["processing_pid"] is None and status["head"] == second
    refused = cli("merge-queue", "process", *root)
    assert refused.code == 1 and "paused" in refused.err
    assert "resumed" in cli("merge-queue", "resume", *root).out
    assert cli("merge-queue", "remove", first, *root).code == 0
    not_failed = cli("merge-queue", "retry", second, *root)
    assert not_failed.code == 1 and "only a failed entry" in not_failed.err
    assert [h["action"] for h in status["history"]] == ["add", "add", "move", "pause"]


@pytest.mark.parametrize(
    "args",
    [
        ("merge-queue", "add"),
        ("merge-queue", "add", "--branch", "bad..name"),
        ("merge-queue", "add", "--branch", "x", "--identity", "a/b"),
        ("merge-queue", "move", "mq-x-1"),
        ("merge-queue", "remove", "../etc"),
        ("merge-queue", "frobnicate"),
    ],
)
def test_usage_errors_exit_2(repo: Path, cli, args: tuple[str, ...]) -> None:
    result = cli(*args, "--root", str(repo))
    assert result.code == 2


@pytest.mark.e2e
def test_all_goes_on_past_an_entry_refused_for_the_operators_edits(repo: Path, cli) -> None:
    root = ["--root", str(repo)]
    commit_on(repo, "feat/one", {"a.txt": "from one\n"})
    commit_on(repo, "feat/two", {"two.txt": "2"})
    # The first entry's tests edit, in the operator's checkout, a file it changes.
    dirty = f"sh -c 'echo edited >> {repo}/a.txt'"
    cli("merge-queue", "add", "--branch", "feat/one", "--test-command", dirty, *root)
    cli("merge-queue", "add", "--branch", "feat/two", *root)
    result = cli("merge-queue", "process", "--all", "--json", *root)
    report = result.json()
    assert result.code == 1  # one entry failed
    assert [(o["status"], o["reason"]) for o in report["outcomes"]] == [
        ("failed", "main_dirty"),
        ("completed", None),
    ]
    assert (repo / "two.txt").read_text() == "2"
    assert (repo / "a.txt").read_text().endswith("edited\n")  # the operator's edit stays


def test_move_at_the_end_says_so_and_records_nothing(repo: Path, cli) -> None:
    root = ["--root", str(repo)]
    for branch in ("feat/a", "feat/b"):
        cli("merge-queue", "add", "--branch", branch, *root)
    first, second = (e["entry_id"] for e in queue_file(repo)["entries"])
    up = cli("merge-queue", "move", first, "--up", *root)
    down = cli("merge-queue", "move", second, "--down", *root)
    assert up.code == 0 and "already first" in up.out and "moved" not in up.out
    assert down.code == 0 and "already last" in down.out
    assert [h["action"] for h in queue_file(repo)["history"]] == ["add", "add"]


@pytest.mark.parametrize("action", ["retry", "remove", "move"])
def test_unknown_entry_is_a_usage_error(repo: Path, cli, action: str) -> None:
    extra = ["--up"] if action == "move" else []
    result = cli("merge-queue", action, "mq-nope-1", *extra, "--root", str(repo))
    assert result.code == 2
    assert "no entry 'mq-nope-1'" in result.err and "merge-queue list" in result.err


@pytest.mark.e2e
def test_picked_up_signals_are_reported_before_processing(repo: Path, cli) -> None:
    commit_on(repo, "feat/sig", {"sig.txt": "s"})
    Signals(Project(repo)).send("MERGE_READY", "runner", "runeconsole", {"branch": "feat/sig"})
    result = cli("merge-queue", "process", "--root", str(repo))
    lines = result.out.splitlines()
    picked = next(i for i, line in enumerate(lines) if "picked up MERGE_READY" in line)
    rebase = next(i for i, line in enumerate(lines) if "rebase" in line)
    assert result.code == 0 and picked < rebase
    assert sum("picked up" in line for line in lines) == 1


def test_process_help_explains_the_failure_reasons(cli) -> None:
    result = cli("merge-queue", "process", "--help")
    for reason in ("conflict", "tests_failed", "base_moved", "branch_missing", "timeout"):
        assert reason in result.out
    assert "main_dirty" in result.out and "git_error" in result.out


def test_dry_run_says_what_process_would_refuse(project: Path, cli) -> None:
    root = ["--root", str(project)]  # no test command configured
    commit_on(project, "feat/x", {"x.txt": "x"})
    cli("merge-queue", "add", "--branch", "feat/x", *root)
    dry = cli("merge-queue", "process", "--dry-run", *root)
    real = cli("merge-queue", "process", *root)
    assert dry.code == real.code == 1
    assert "would be refused: no test command" in dry.out and "no test command" in real.err
    assert cli("merge-queue", "process", "--dry-run", "--json", *root).json()["refused"]
