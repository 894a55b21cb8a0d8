"""Identity registry: lifecycle, liveness thresholds, harness compatibility."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.config import Talisman
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.core.files import atomic_write_bytes
from runeconsole.core.timeutil import parse_iso
from runeconsole.services.project import Project
from runeconsole.services.registry import LivenessSettings, Registry, last_seen
from runeconsole.services.signals import Signals

HARNESS_IDENTITY = {
    "agent_id": "orchestrator-impl_auth-20260226T014400Z",
    "role": "orchestrator",
    "name": "impl_auth",
    "session_id": "5f0c",
    "worktree": "/repo/.worktrees/auth",
    "status": "active",
    "created_at": "2026-02-26T01:44:00Z",
    "last_heartbeat": "2026-02-26T11:59:00Z",
    "crashed_at": None,
    "terminated_at": None,
    "predecessor_id": None,
    "metadata": {"spawned_by": "guardian"},
}


def test_register_writes_union_of_fields_and_signals(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    record = registry.register("worker", "parser", tmux_session="rune-w", pid=42, node_id="n1")
    fields = json.loads(registry.path_for("worker-parser").read_text())
    assert fields["agent_id"] == "worker-parser-20260226T120000Z"
    assert fields["last_seen"] == fields["last_heartbeat"] == "2026-02-26T12:00:00Z"
    for name in (
        "session_id",
        "worktree",
        "worktree_path",
        "crashed_at",
        "terminated_at",
        "predecessor_id",
        "metadata",
        "bead_id",
        "hook_path",
    ):
        assert name in fields
    assert record.liveness == "green" and record.status == "active"
    [signal] = Signals(Project(project)).pending()
    assert signal.signal_type == "AGENT_REGISTERED"
    assert signal.payload["agent_id"] == fields["agent_id"]


def test_liveness_thresholds_follow_the_clock(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock), LivenessSettings(60, 300))
    registry.register("worker", "a")
    expected = [(119, "green"), (1, "yellow"), (179, "yellow"), (1, "red")]
    for step, colour in expected:
        clock.advance(step)
        assert registry.get("worker-a").liveness == colour
    assert [r.key for r in registry.stale()] == ["worker-a"]
    registry.heartbeat("worker-a")
    assert registry.get("worker-a").liveness == "green" and registry.stale() == []


def test_crash_once_and_terminate(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    registry.register("worker", "a")
    record, changed = registry.mark_crashed("worker-a", "session vanished")
    again, changed_again = registry.mark_crashed("worker-a")
    assert (changed, changed_again) == (True, False)
    assert record.liveness == again.liveness == "red"
    assert record.get("metadata")["crashed_reason"] == "session vanished"
    crashes = Signals(Project(project)).pending(signal_type="AGENT_CRASHED")
    assert len(crashes) == 1
    with pytest.raises(RuneError, match="crashed"):
        registry.heartbeat("worker-a")
    record, _ = registry.mark_terminated("worker-a")
    assert record.liveness == "grey" and record.get("terminated_at")
    with pytest.raises(RuneError, match="already terminated"):
        registry.mark_crashed("worker-a")


def test_reads_harness_file_unchanged(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    path = registry.paths.identities / "orchestrator-impl_auth.json"
    atomic_write_bytes(path, json.dumps(HARNESS_IDENTITY).encode())
    [record] = registry.list()
    assert record.key == "orchestrator-impl_auth"
    assert record.liveness == "green" and record.age_seconds == 60
    assert record.worktree == "/repo/.worktrees/auth"
    assert record.to_json()["metadata"] == {"spawned_by": "guardian"}
    registry.heartbeat("orchestrator-impl_auth")
    fields = json.loads(path.read_text())
    assert fields["metadata"] == {"spawned_by": "guardian"}  # unknown fields survive
    assert fields["last_heartbeat"] == fields["last_seen"]


def test_unreadable_files_become_red_records(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    registry.register("worker", "ok")
    atomic_write_bytes(registry.paths.identities / "worker-bad.json", b'{"agent_id": "w')
    atomic_write_bytes(registry.paths.identities / "worker-list.json", b"[]")
    atomic_write_bytes(registry.paths.identities / ".worker-x.json.1.tmp", b"{")
    records = {r.key: r for r in registry.list()}
    assert set(records) == {"worker-ok", "worker-bad", "worker-list"}
    assert records["worker-bad"].to_json() == {
        "key": "worker-bad",
        "liveness": "red",
        "error": "not valid JSON (Unterminated string starting at; line 1 column 14)",
    }
    with pytest.raises(RuneError, match="unreadable"):
        registry.get("worker-bad")


def test_respawn_chain_keeps_predecessors(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    first = registry.register("orchestrator", "auth")
    registry.mark_crashed("orchestrator-auth")
    clock.advance(5)
    second = registry.register("orchestrator", "auth", predecessor_id=first.get("agent_id"))
    registry.mark_crashed("orchestrator-auth")
    clock.advance(5)
    registry.register("orchestrator", "auth", predecessor_id=second.get("agent_id"))
    chain = registry.chain("orchestrator-auth")
    assert [r.get("agent_id") for r in chain] == [
        "orchestrator-auth-20260226T120010Z",
        "orchestrator-auth-20260226T120005Z",
        "orchestrator-auth-20260226T120000Z",
    ]
    assert [r.status for r in chain] == ["active", "crashed", "crashed"]


def test_a_successor_in_the_same_second_gets_its_own_id(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    first = registry.register("orchestrator", "auth")
    registry.mark_crashed("orchestrator-auth")
    second = registry.register("orchestrator", "auth", predecessor_id=first.get("agent_id"))
    assert second.get("agent_id") != first.get("agent_id")
    assert second.get("agent_id") == "orchestrator-auth-20260226T120001Z"
    chain = registry.chain("orchestrator-auth")
    assert [r.get("agent_id") for r in chain] == [second.get("agent_id"), first.get("agent_id")]


def test_links_out_of_the_root_are_neither_read_nor_written(
    project: Path, clock: ManualClock, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text('{"agent_id": "x", "secret": "outside-root-data"}')
    registry = Registry(Project(project, clock))
    registry.paths.identities.mkdir(parents=True)
    (registry.paths.identities / "evil-link.json").symlink_to(outside / "secret.json")
    (registry.paths.identities / "worker-dir.json").mkdir()
    [link, directory] = registry.list()
    assert link.error == "a symbolic link (not followed)"
    assert directory.error == "is a directory, not a file"
    assert "secret" not in json.dumps([r.to_json() for r in registry.list()])

    registry.paths.identities.rename(tmp_path / "moved")
    registry.paths.identities.symlink_to(outside, target_is_directory=True)
    with pytest.raises(RuneError, match="leads outside the project root"):
        registry.register("worker", "x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.json"]


def test_a_lost_signal_is_an_error_not_silence(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    registry.paths.signals.parent.mkdir(parents=True)
    registry.paths.signals.write_text("not a directory")
    with pytest.raises(RuneError, match="AGENT_REGISTERED signal could not be written") as caught:
        registry.register("worker", "a")
    assert caught.value.exit_code == 1 and "is not a directory" in caught.value.message


def test_future_heartbeats_do_not_vouch_for_an_agent(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    registry.register("worker", "a")
    registry.update("worker-a", {"last_seen": "2999-01-01T00:00:00Z", "last_heartbeat": None})
    assert registry.get("worker-a").liveness == "yellow"


def test_a_value_that_is_not_json_is_unreadable(project: Path, clock: ManualClock) -> None:
    registry = Registry(Project(project, clock))
    atomic_write_bytes(registry.paths.identities / "worker-nan.json", b'{"x": NaN}')
    assert "NaN is not a JSON value" in (registry.list()[0].error or "")


@pytest.mark.parametrize("name", ["../x", "a/b", "", "x;ls", "a b"])
def test_bad_names_write_nothing(project: Path, name: str) -> None:
    with pytest.raises(InvalidInput):
        Registry(Project(project)).register("worker", name)
    assert not (project / ".claude").exists()


def test_thresholds_come_from_talisman(project: Path) -> None:
    atomic_write_bytes(
        project / ".claude" / "talisman.yml",
        b"runeconsole:\n  heartbeat_interval_seconds: 5\n  stale_after_seconds: 30\n",
    )
    settings = LivenessSettings.from_talisman(Talisman.load(project))
    assert (settings.green_below, settings.stale_after) == (10, 30)
    atomic_write_bytes(
        project / ".claude" / "talisman.yml",
        b"runeconsole:\n  heartbeat_interval_seconds: 50\n  stale_after_seconds: 30\n",
    )
    with pytest.raises(RuneError, match="stale_after_seconds"):
        LivenessSettings.from_talisman(Talisman.load(project))
    # Green up to 2 x 200 s would run past a 300 s stale threshold: yellow could never show.
    atomic_write_bytes(
        project / ".claude" / "talisman.yml", b"runeconsole:\n  heartbeat_interval_seconds: 200\n"
    )
    talisman = Talisman.load(project, strict=False)
    assert LivenessSettings.from_talisman(talisman) == LivenessSettings()
    assert (
        "must be more than heartbeat_interval_seconds x green_multiplier (400)"
        in talisman.problems[0]
    )


@pytest.mark.e2e
def test_writer_killed_mid_write_never_leaves_a_torn_file(project: Path) -> None:
    """Real processes killed with SIGKILL while rewriting one identity file."""
    import os
    import random
    import signal
    import time

    from runeconsole.core.files import read_json_object

    registry = Registry(Project(project))
    registry.register("worker", "victim")
    path = registry.path_for("worker-victim")
    rng = random.Random(5)
    for _ in range(60):
        pid = os.fork()
        if pid == 0:  # the writer: rewrite the file until killed
            try:
                n = 0
                while True:
                    n += 1
                    registry.update("worker-victim", {"metadata": {"n": n, "pad": "x" * 20000}})
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.002, 0.02))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        assert read_json_object(path)["agent_id"]
    registry.list()
    assert [n for n in os.listdir(path.parent) if n.startswith(".")] == []


def test_ending_a_named_identity_leaves_a_stopped_or_replaced_one_alone(
    project: Path, clock: ManualClock
) -> None:
    registry = Registry(Project(project, clock))
    first = registry.register("worker", "a").get("agent_id")
    registry.mark_terminated("worker-a", "killed by the operator")
    record, changed = registry.mark_crashed("worker-a", "session gone", agent_id=first)
    assert (record.status, changed) == ("terminated", False)
    clock.advance(1)
    second = registry.register("worker", "a").get("agent_id")
    record, changed = registry.mark_crashed("worker-a", "session gone", agent_id=first)
    assert (record.get("agent_id"), record.status, changed) == (second, "active", False)
    record, changed = registry.mark_crashed("worker-a", "session gone", agent_id=second)
    assert (record.status, changed) == ("crashed", True)
    crashes = Signals(Project(project)).pending(signal_type="AGENT_CRASHED")
    assert [s.payload["agent_id"] for s in crashes] == [second]


def test_last_seen_is_the_newer_name_and_created_at_when_neither_parses() -> None:
    at = "2026-02-26T12:00:00Z"
    later = "2026-02-26T12:05:00Z"
    assert last_seen({"last_seen": at, "last_heartbeat": at}) == parse_iso(at)
    assert last_seen({"last_seen": at, "last_heartbeat": later}) == parse_iso(later)
    assert last_seen({"last_seen": later, "last_heartbeat": "garbage"}) == parse_iso(later)
    assert last_seen({"last_seen": "x", "last_heartbeat": "x", "created_at": at}) == parse_iso(at)
    assert last_seen({"created_at": at}) == parse_iso(at)
    assert last_seen({}) is None
