"""The signals directory shared with the claude-code-harness: what runeconsole consumes,
what it leaves for the harness, and whether what it writes reaches a harness reader."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runeconsole.services.merge_queue import COMPLETED, MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.signals import Signals
from tests.interop.conftest import guardian_processor
from tests.interop.harness import (
    BRANCHES,
    MERGE_READY,
    fixture_payload,
    harness_signal_names,
    harness_target,
    harness_wait_for_signal,
    signals_dir,
)
from tests.support.merge_queue import commit_on, git, queue_file, rev, write_talisman

COMPACT = re.compile(r"^\d{8}T\d{6}Z$")  # the harness's timestamp
HARNESS_SIGNALS = sorted(
    [
        "20261123T182326Z-orchestrator-guardian-AGENT_REGISTERED.json",
        "20261123T182326Z-runner-guardian-AGENT_CRASHED.json",
        MERGE_READY,
        "20261123T182326Z-runner-guardian-NEEDS_INPUT.json",
    ]
)


def processed(root: Path) -> list[str]:
    directory = signals_dir(root) / "processed"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def bodies(root: Path, signal_type: str) -> list[dict]:
    return [
        json.loads((signals_dir(root) / name).read_text())
        for name in harness_signal_names(root)
        if name.endswith(f"-{signal_type}.json")
    ]


# -- consumed only when addressed to runeconsole ---------------------------------------------


@pytest.mark.e2e
def test_processing_leaves_the_guardians_signals_where_the_guardian_looks(
    harness_repo: Path, cli
) -> None:
    queue = MergeQueue(Project(harness_repo))
    queue.pick_up_signals()  # as the console's rescan does
    result = cli("merge-queue", "process", "--all", "--root", str(harness_repo))

    assert result.code == 0, result.out + result.err
    assert [n for n in harness_signal_names(harness_repo) if n in HARNESS_SIGNALS] == (
        HARNESS_SIGNALS
    )
    assert processed(harness_repo) == []
    assert "picked up" not in result.out  # not ours to act on: the harness's entries merged
    statuses = {e["node_id"]: e["status"] for e in queue_file(harness_repo)["entries"]}
    assert statuses == {"impl_auth": COMPLETED, "impl_db": COMPLETED}


@pytest.mark.e2e
def test_as_the_guardians_merge_processor_its_merge_ready_is_acted_on_and_left_in_place(
    harness_repo: Path,
) -> None:
    guardian_processor(harness_repo)
    (harness_repo / ".claude" / "state" / "merge-queue.json").unlink()  # a runner that only signals
    queue = MergeQueue(Project(harness_repo))

    added = queue.pick_up_signals()

    [entry] = queue.read().entries
    assert added == [entry.entry_id]
    assert (entry.branch, entry.get("node_id"), entry.get("requested_by")) == (
        BRANCHES["impl_auth"],
        "impl_auth",
        "runner",
    )
    assert MERGE_READY in harness_signal_names(harness_repo) and processed(harness_repo) == []
    assert queue.process().outcomes[0].status == COMPLETED
    assert queue.pick_up_signals() == []  # the same signal never makes a second entry
    assert len(queue.read().entries) == 1
    assert queue_file(harness_repo)["signals_acted_on"] == [MERGE_READY]
    # The guardian takes its signal as it always did; the record of it goes with it.
    assert harness_wait_for_signal(harness_repo, "guardian")["signal_type"] in (
        "AGENT_CRASHED",
        "AGENT_REGISTERED",
        "MERGE_READY",
        "NEEDS_INPUT",
    )
    while harness_wait_for_signal(harness_repo, "guardian") is not None:
        pass
    queue.pick_up_signals()
    assert queue_file(harness_repo)["signals_acted_on"] == []


def test_a_merge_ready_addressed_to_runeconsole_is_consumed(harness_repo: Path) -> None:
    commit_on(harness_repo, "feat/pay", {"pay.py": "# pay\n"})
    signals = Signals(Project(harness_repo))
    sent = signals.send(
        "MERGE_READY", "runner", "runeconsole", {"node_id": "pay", "branch": "feat/pay"}
    )

    added = MergeQueue(Project(harness_repo)).pick_up_signals()

    assert len(added) == 1
    assert processed(harness_repo) == [sent.path.name]
    assert MERGE_READY in harness_signal_names(harness_repo)  # the guardian's is untouched


@pytest.mark.parametrize("guardian", [False, True], ids=["default", "guardian's processor"])
@pytest.mark.e2e
def test_signals_to_anyone_else_are_never_touched(harness_repo: Path, guardian: bool) -> None:
    if guardian:
        guardian_processor(harness_repo)
    commit_on(harness_repo, "feat/x", {"x.py": "x\n"})
    Signals(Project(harness_repo)).send("MERGE_READY", "runner", "terminal", {"branch": "feat/x"})
    before = harness_signal_names(harness_repo)

    MergeQueue(Project(harness_repo)).process(run_all=True)

    assert harness_signal_names(harness_repo)[: len(before)] == before
    assert processed(harness_repo) == []
    assert "feat/x" not in {e["branch"] for e in queue_file(harness_repo)["entries"]}


# -- outcomes a harness runner receives ---------------------------------------------------------


@pytest.mark.e2e
def test_a_runner_waiting_for_its_merge_gets_merge_complete(harness_repo: Path) -> None:
    guardian_processor(harness_repo)
    main_before = rev(harness_repo, "main")

    MergeQueue(Project(harness_repo)).process()  # the head: the runner's impl_auth

    signal = harness_wait_for_signal(harness_repo, "runner")  # wait_for_signal --target runner
    assert signal is not None and signal["signal_type"] == "MERGE_COMPLETE"
    assert (signal["source"], signal["target"]) == ("guardian", "runner")
    assert COMPACT.fullmatch(signal["timestamp"])
    payload = signal["payload"]
    assert payload["node_id"] == "impl_auth" and payload["branch"] == BRANCHES["impl_auth"]
    assert payload["entry_id"] == "mq-impl_auth-1795458206"
    assert rev(harness_repo, "main") != main_before


def test_a_runner_waiting_for_a_failed_merge_gets_merge_failed_with_the_error(
    harness_repo: Path,
) -> None:
    guardian_processor(harness_repo)
    git(harness_repo, "branch", "-D", BRANCHES["impl_auth"])  # the branch went away

    MergeQueue(Project(harness_repo)).process()

    signal = harness_wait_for_signal(harness_repo, "runner")
    assert signal is not None and signal["signal_type"] == "MERGE_FAILED"
    payload = signal["payload"]
    assert (payload["node_id"], payload["branch"]) == ("impl_auth", BRANCHES["impl_auth"])
    assert "does not exist" in payload["error"]


def test_an_entry_without_merge_ready_is_answered_to_the_role_of_its_identity(
    harness_repo: Path,
) -> None:
    queue = MergeQueue(Project(harness_repo))
    for entry in queue.read().entries:
        queue.remove(entry.entry_id)
    signals_dir(harness_repo).joinpath(MERGE_READY).unlink()
    commit_on(harness_repo, "feat/r", {"r.py": "r\n"})
    queue.add("feat/r", identity="runner-impl_auth")  # the harness's identity file

    queue.process()

    [complete] = bodies(harness_repo, "MERGE_COMPLETE")
    assert complete["target"] == "runner"
    assert harness_wait_for_signal(harness_repo, "runner")["signal_type"] == "MERGE_COMPLETE"


def test_agent_signals_carry_the_fields_the_harness_writes(harness_repo: Path, cli) -> None:
    root = str(harness_repo)
    registered = cli(
        "agent", "register", "--role", "orchestrator", "--name", "impl_pay",
        "--session-id", "orch-impl_pay", "--worktree", ".claude/worktrees/impl_pay",
        "--root", root,
    )  # fmt: skip
    crashed = cli("agent", "crash", "orchestrator-impl_pay", "--root", root)
    assert registered.code == 0 and crashed.code == 0, registered.err + crashed.err

    theirs = {
        "AGENT_REGISTERED": "20261123T182326Z-orchestrator-guardian-AGENT_REGISTERED.json",
        "AGENT_CRASHED": "20261123T182326Z-runner-guardian-AGENT_CRASHED.json",
    }
    for signal_type, fixture in theirs.items():
        expected = fixture_payload(fixture)
        [ours] = [b for b in bodies(harness_repo, signal_type) if b["payload"].get("key")]
        assert set(expected["payload"]) <= set(ours["payload"]), signal_type
        assert set(expected) == set(ours)  # the same body fields
        assert (ours["source"], ours["target"]) == ("orchestrator", "guardian")
        assert COMPACT.fullmatch(ours["timestamp"])
        assert ours["payload"]["worktree" if signal_type == "AGENT_REGISTERED" else "crashed_at"]


def test_the_guardians_reader_finds_runeconsoles_signals_by_their_names(
    harness_repo: Path, cli
) -> None:
    write_talisman(harness_repo, "true")
    cli("agent", "register", "--role", "runner", "--name", "impl_pay", "--root", str(harness_repo))
    names = [n for n in harness_signal_names(harness_repo) if n not in HARNESS_SIGNALS]
    assert names and all(harness_target(n) == "guardian" for n in names)
    assert all(re.match(r"^\d{8}T\d{6}\.\d{6}Z-", n) for n in names)  # to the microsecond
