"""``runeconsole merge-queue`` with batches: priorities, the batches a dry run would form,
progress of a batch, ``stats``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.merge_queue import commit_on, queue_file, write_talisman


def queue_branches(repo: Path, cli, names: list[str]) -> None:
    """Each ``feat/NAME`` made (one file) and queued."""
    for name in names:
        commit_on(repo, f"feat/{name}", {f"{name}.txt": name})
        cli("merge-queue", "add", "--branch", f"feat/{name}", "--root", str(repo))


def test_priorities_from_add_and_the_priority_command_order_the_queue(repo: Path, cli) -> None:
    write_talisman(repo, "true", batch_max=2, parallel_runs=2)
    root = ("--root", str(repo))
    for name in ("a", "b", "c"):
        assert cli("merge-queue", "add", "--branch", f"feat/{name}", *root).code == 0
    assert cli("merge-queue", "add", "--branch", "feat/x", "--priority", "urgent", *root).code == 0
    c = queue_file(repo)["entries"][2]["entry_id"]
    changed = cli("merge-queue", "priority", c, "high", *root)
    assert changed.code == 0 and f"{c}: now high" in changed.out
    bad = cli("merge-queue", "add", "--branch", "feat/y", "--priority", "asap", *root)

    listing = cli("merge-queue", "list", "--json", "--no-predict", *root).json()
    table = cli("merge-queue", "list", "--no-predict", *root).out

    assert bad.code == 2 and "invalid choice" in bad.err
    assert [e["branch"] for e in listing["entries"]] == ["feat/x", "feat/c", "feat/a", "feat/b"]
    assert [e["priority"] for e in listing["entries"]] == ["urgent", "high", "normal", "normal"]
    assert "PRI" in table and "urgent" in table
    unchanged = cli("merge-queue", "move", c, "--up", *root)
    assert "already first in the high lane" in unchanged.out


@pytest.mark.e2e
def test_dry_run_shows_the_batches_it_would_form(repo: Path, cli) -> None:
    write_talisman(repo, "true", batch_max=3, parallel_runs=2)
    root = ("--root", str(repo))
    queue_branches(repo, cli, [f"b{n}" for n in range(7)])

    dry = cli("merge-queue", "process", "--dry-run", *root)
    plan = cli("merge-queue", "process", "--dry-run", "--json", *root).json()

    assert dry.code == 0
    assert "would form 3 batches (batch_max 3; 2 testing at once" in dry.out
    assert "1. 3: feat/b0, feat/b1, feat/b2  <- process" in dry.out
    assert "3. 1: feat/b6" in dry.out
    assert [len(b) for b in plan["batches"]] == [3, 3, 1] and plan["window"] == 2
    assert all(e["status"] == "pending" for e in queue_file(repo)["entries"])


@pytest.mark.e2e
def test_process_shows_a_batch_as_it_goes_and_stats_count_it(repo: Path, cli) -> None:
    write_talisman(repo, "echo checked", batch_max=8, parallel_runs=2)
    root = ("--root", str(repo))
    queue_branches(repo, cli, [f"s{n}" for n in range(3)])

    done = cli("merge-queue", "process", "--all", *root)
    stats = cli("merge-queue", "stats", "--json", *root).json()
    text = cli("merge-queue", "stats", *root).out

    assert done.code == 0, done.out + done.err
    assert "b1: rebase: ok" in done.out and "b1: test: passed" in done.out
    assert "    b1| checked" in done.out
    assert len(re.findall(r"^merged feat/s\d \(", done.out, re.MULTILINE)) == 3
    assert (stats["landed"], stats["failed"], stats["depth"]) == (3, 0, 0)
    assert stats["batch_max"] == 8 and stats["parallel_runs"] == 2 and stats["window"] == 2
    assert "landed 3" in text and "failure rate 0%" in text
