"""Arc checkpoints: migration v1 -> v20, checks, demotion, cleanup, suspended tasks."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.errors import RuneError
from runeconsole.demo.suspended import CHECKPOINTS as DEMO_CHECKPOINTS
from runeconsole.services.checkpoints import (
    FORBIDDEN_PHASE_KEYS,
    MIGRATIONS,
    PHASE_ORDER,
    PHASE_STATUSES,
    SCHEMA_VERSION,
    TIER_STANDARD,
    Checkpoints,
    CorruptCheckpoint,
    migrate,
)
from runeconsole.services.project import Project
from runeconsole.services.suspension import with_resume_count
from tests.support.paths import SHARED_FIXTURES
from tests.support.suspended import (
    LOCAL_RUNE_CHECKPOINTS,
    OWN_CHECKPOINTS,
    dead_pid,
    load_fixture,
    modify,
    suspension,
    task_file,
    tree,
    write_checkpoint,
    write_context,
)

ARTIFACT_KEYS = {"status", "artifact", "artifact_hash", "team_name"}
UNTRACKED_BY_MIGRATION = {"semantic_verification", "codex_gap_analysis", "pre_ship_validation"}
ALL_FIXTURES = sorted(
    [*LOCAL_RUNE_CHECKPOINTS.glob("*.json"), *OWN_CHECKPOINTS.glob("*.json")],
    key=lambda p: int(p.stem.split("_v")[1]),
)


def service(root: Path, clock: ManualClock | None = None, pid: int = 4242) -> Checkpoints:
    clock = clock or ManualClock()
    return Checkpoints(Project(root, clock), session_pid=pid, suspension=suspension(root, clock))


def latest(**phases: dict[str, Any]) -> dict[str, Any]:
    """A current checkpoint: every fixture phase migrated, then ``phases`` merged in."""
    cp = load_fixture(LOCAL_RUNE_CHECKPOINTS / "checkpoint_v1.json")
    migrate(cp)
    for name, data in phases.items():
        cp["phases"].setdefault(name, {}).update(data)
    return cp


def assert_valid_latest(cp: dict[str, Any]) -> None:
    assert cp["schema_version"] == SCHEMA_VERSION
    phases = cp["phases"]
    for name in PHASE_ORDER:
        if name in UNTRACKED_BY_MIGRATION:
            continue
        assert name in phases, name
    for name, data in phases.items():
        assert data["status"] in PHASE_STATUSES, (name, data)
        assert "started_at" in data and "completed_at" in data
        assert "artifacts" not in data
    assert isinstance(phases["work"]["suspended_tasks"], list)
    tier = cp["convergence"]["tier"]
    assert isinstance(tier, dict) and {"name", "maxCycles", "minCycles"} <= set(tier)
    for key in ("freshness", "arc_config", "pr_url", "shard", "parent_plan", "completed_at"):
        assert key in cp
    assert "audit_convergence" not in cp
    assert cp["flags"]["skip_freshness"] in (True, False)
    assert cp["flags"]["no_test"] in (True, False)
    assert set(cp["stagnation"]) >= {"error_patterns", "file_velocity", "budget"}
    assert set(cp["totals"]) >= {"phase_times", "total_duration_ms", "cost_at_completion"}
    assert isinstance(cp["todos_base"], str) and cp["todos_base"]
    for name in ("audit", "audit_mend", "audit_verify"):
        assert phases[name]["status"] == "skipped"


# -- fixtures ----------------------------------------------------------------------------------


def test_every_version_has_a_fixture() -> None:
    versions = sorted(int(p.stem.split("_v")[1]) for p in ALL_FIXTURES)
    assert versions == list(range(1, SCHEMA_VERSION + 1))


@pytest.mark.skipif(
    not (SHARED_FIXTURES / "rune-checkpoints").is_dir(), reason="shared fixtures absent"
)
def test_local_copies_match_the_shared_fixtures() -> None:
    for shared in (SHARED_FIXTURES / "rune-checkpoints").glob("*.json"):
        assert (LOCAL_RUNE_CHECKPOINTS / shared.name).read_bytes() == shared.read_bytes()


@pytest.mark.parametrize("fixture", ALL_FIXTURES, ids=lambda p: p.stem)
def test_every_fixture_migrates_to_a_valid_latest(fixture: Path) -> None:
    cp = load_fixture(fixture)
    original = copy.deepcopy(cp)
    changes = migrate(cp)
    assert_valid_latest(cp)
    assert len(changes) == SCHEMA_VERSION - (original.get("schema_version") or 1)
    assert cp["id"] == original["id"] and cp["plan_file"] == original["plan_file"]
    again = copy.deepcopy(cp)
    assert migrate(again) == [] and again == cp


@pytest.mark.parametrize("fixture", ALL_FIXTURES, ids=lambda p: p.stem)
def test_every_fixture_resumes(project: Path, chome: Path, fixture: Path) -> None:
    cp = load_fixture(fixture)
    path = write_checkpoint(project, cp)
    plan = service(project).resume()
    assert plan.action in ("resume", "complete"), plan.message
    written = json.loads(path.read_text())
    assert_valid_latest(written)
    assert written["owner_pid"] == 4242 and written["config_dir"] == str(chome)


def test_real_v4_checkpoint_demotes_its_missing_artifacts(project: Path, chome: Path) -> None:
    write_checkpoint(project, load_fixture(LOCAL_RUNE_CHECKPOINTS / "checkpoint_v4.json"))
    plan = service(project).resume(dry_run=True)
    assert plan.demoted == [
        "forge",
        "plan_review",
        "verification",
        "work",
        "gap_analysis",
        "code_review",
        "mend",
        "verify_mend",
    ]
    assert plan.resume_from == "forge"
    assert plan.checkpoint["phases"]["audit"]["status"] == "skipped"  # v13, not demoted


# -- every migration step ----------------------------------------------------------------------


def at(version: int, **extra: Any) -> dict[str, Any]:
    """A minimal checkpoint at ``version`` (phases as v1 had them)."""
    cp = {
        "id": "arc-1",
        "schema_version": version,
        "session_nonce": "aabbccddeeff",
        "flags": {},
        "phases": {
            name: {"status": "pending", "artifact": None, "artifact_hash": None, "team_name": None}
            for name in ("forge", "plan_review", "work", "code_review", "mend", "audit")
        },
    }
    cp.update(extra)
    return cp


def step(target: int, cp: dict[str, Any]) -> dict[str, Any]:
    MIGRATIONS[target](cp, [])
    return cp


def skipped_entry(**extra: Any) -> dict[str, Any]:
    return {
        "status": "skipped",
        "artifact": None,
        "artifact_hash": None,
        "team_name": None,
        **extra,
    }


def pending_entry(**extra: Any) -> dict[str, Any]:
    return {
        "status": "pending",
        "artifact": None,
        "artifact_hash": None,
        "team_name": None,
        **extra,
    }


def test_step_v1_to_v2() -> None:
    cp = step(2, at(1))
    assert cp["phases"]["plan_refine"] == skipped_entry()
    assert cp["phases"]["verification"] == skipped_entry()


def test_step_v2_to_v3() -> None:
    cp = step(3, at(2))
    assert cp["phases"]["verify_mend"] == skipped_entry()
    assert cp["convergence"] == {"round": 0, "max_rounds": 2, "history": []}


def test_step_v3_to_v4() -> None:
    assert step(4, at(3))["phases"]["gap_analysis"] == skipped_entry()


def test_step_v4_to_v5() -> None:
    cp = step(5, at(4, flags={"approve": True}))
    assert cp["freshness"] is None
    assert cp["flags"] == {"approve": True, "skip_freshness": False}


def test_step_v5_to_v6_standard_tier_and_max_rounds() -> None:
    cp = step(6, at(5, convergence={"round": 0, "max_rounds": 2, "history": []}))
    assert cp["convergence"]["tier"] == TIER_STANDARD
    assert cp["convergence"]["max_rounds"] == 3


def test_step_v5_to_v6_keeps_max_rounds_of_a_convergence_in_progress() -> None:
    cp = step(6, at(5, convergence={"round": 1, "max_rounds": 2, "history": [{}]}))
    assert cp["convergence"]["max_rounds"] == 2
    assert cp["convergence"]["tier"] == TIER_STANDARD


def test_step_v6_to_v7() -> None:
    cp = step(7, at(6, pr_url="https://example.invalid/pr/1"))
    assert cp["phases"]["ship"] == pending_entry()
    assert cp["phases"]["merge"] == pending_entry()
    assert cp["arc_config"] is None
    assert cp["pr_url"] == "https://example.invalid/pr/1"


@pytest.mark.parametrize(
    ("tier", "expected"),
    [
        ({"name": "LIGHT", "maxCycles": 2}, {"name": "LIGHT", "maxCycles": 2, "minCycles": 1}),
        (
            {"name": "THOROUGH", "maxCycles": 5},
            {"name": "THOROUGH", "maxCycles": 5, "minCycles": 2},
        ),
        ({"name": "LIGHT", "minCycles": 3}, {"name": "LIGHT", "minCycles": 3}),
        (None, TIER_STANDARD),
        ("STANDARD", TIER_STANDARD),
        ([1, 2], TIER_STANDARD),
    ],
)
def test_step_v7_to_v8_min_cycles_and_corrupt_tier_guard(tier: Any, expected: Any) -> None:
    cp = step(8, at(7, convergence={"round": 0, "tier": tier}))
    assert cp["convergence"]["tier"] == expected


def test_step_v7_to_v8_without_convergence() -> None:
    assert step(8, at(7))["convergence"] == {"tier": TIER_STANDARD}


def test_step_v8_to_v9() -> None:
    cp = step(9, at(8))
    assert cp["phases"]["goldmask_verification"] == pending_entry()
    assert cp["phases"]["goldmask_correlation"] == pending_entry()
    assert cp["phases"]["test"] == pending_entry(
        tiers_run=[], pass_rate=None, coverage_pct=None, has_frontend=False
    )


def test_step_v9_to_v10() -> None:
    cp = step(10, at(9))
    assert cp["phases"]["gap_remediation"] == skipped_entry(fixed_count=None, deferred_count=None)


def test_step_v10_to_v11() -> None:
    cp = step(11, at(10))
    assert cp["phases"]["audit_mend"] == skipped_entry()
    assert cp["phases"]["audit_verify"] == skipped_entry()
    assert cp["audit_convergence"] == {
        "round": 0,
        "max_rounds": 2,
        "tier": {"name": "LIGHT", "maxCycles": 2, "minCycles": 1},
        "history": [],
    }


def test_step_v11_to_v12() -> None:
    assert step(12, at(11))["shard"] is None
    assert step(12, at(11, shard={"index": 2}))["shard"] == {"index": 2}


def test_step_v12_to_v13_skips_audit_phases_and_keeps_their_data() -> None:
    cp = at(12, audit_convergence={"round": 1})
    cp["phases"]["audit"] = {
        "status": "in_progress",
        "artifact": "tmp/arc/audit.md",
        "artifact_hash": "ab",
        "team_name": "arc-audit-1",
    }
    step(13, cp)
    assert cp["phases"]["audit"] == {
        "status": "skipped",
        "artifact": "tmp/arc/audit.md",
        "artifact_hash": "ab",
        "team_name": "arc-audit-1",  # kept so orphan cleanup still removes the team
    }
    assert cp["phases"]["audit_mend"] == {"status": "skipped"}
    assert cp["phases"]["audit_verify"] == {"status": "skipped"}
    assert "audit_convergence" not in cp


def test_step_v13_to_v14() -> None:
    assert step(14, at(13))["parent_plan"] is None
    assert step(14, at(13, parent_plan="plans/p.md"))["parent_plan"] == "plans/p.md"


def test_step_v14_to_v15() -> None:
    cp = step(15, at(14, flags=None))
    assert cp["stagnation"] == {"error_patterns": [], "file_velocity": [], "budget": None}
    assert cp["flags"] == {"no_test": False}
    cp = step(15, at(14, flags={"no_test": True}, stagnation={"budget": 5}))
    assert cp["flags"]["no_test"] is True and cp["stagnation"] == {"budget": 5}


def test_step_v15_to_v16() -> None:
    assert step(16, at(15))["phases"]["work"]["suspended_tasks"] == []
    cp = at(15)
    del cp["phases"]["work"]
    with pytest.raises(CorruptCheckpoint, match=r"phases\.work"):
        step(16, cp)


def test_step_v16_to_v17() -> None:
    cp = at(16)
    cp["phases"]["bot_review_wait"] = pending_entry()
    step(17, cp)
    for name in (
        "task_decomposition",
        "test_coverage_critique",
        "release_quality_check",
        "pr_comment_resolution",
    ):
        assert cp["phases"][name] == skipped_entry(), name
    assert cp["phases"]["bot_review_wait"] == pending_entry()


def test_step_v17_to_v18() -> None:
    cp = at(17)
    cp["phases"]["design_verification"] = skipped_entry()
    cp["phases"]["design_iteration"] = {}  # an object, so `!phases[phase]` keeps it
    step(18, cp)
    assert cp["phases"]["design_extraction"] == pending_entry()
    assert cp["phases"]["design_verification"] == skipped_entry()
    assert cp["phases"]["design_iteration"] == {}


def test_step_v18_to_v19() -> None:
    cp = at(18, completed_at="")
    cp["phases"]["forge"] = {"status": "completed", "artifacts": "tmp/a.md", "started_at": "T"}
    cp["phases"]["mend"] = {"status": "completed", "artifacts": "x", "artifact": "y"}
    cp["phases"]["__proto__"] = "ignored"
    step(19, cp)
    assert cp["phases"]["forge"] == {
        "status": "completed",
        "artifact": "tmp/a.md",
        "started_at": "T",
        "completed_at": None,
    }
    assert cp["phases"]["mend"]["artifact"] == "y" and cp["phases"]["mend"]["artifacts"] == "x"
    assert cp["phases"]["__proto__"] == "ignored"
    assert cp["totals"] == {
        "phase_times": {},
        "total_duration_ms": None,
        "cost_at_completion": None,
    }
    assert cp["completed_at"] is None
    kept = step(19, at(18, totals={"phase_times": {"a": 1}}, completed_at="2026-01-01T00:00:00Z"))
    assert kept["totals"] == {"phase_times": {"a": 1}}
    assert kept["completed_at"] == "2026-01-01T00:00:00Z"
    # `!checkpoint.totals` as JavaScript reads it: an empty object is kept, 0 is not.
    assert step(19, at(18, totals={}))["totals"] == {}
    assert step(19, at(18, completed_at=0))["completed_at"] is None


def test_step_v19_to_v20() -> None:
    cp = at(19)
    step(20, cp)
    assert cp["todos_base"] == f"tmp/arc/{cp['id']}/todos/"
    kept = step(20, at(19, todos_base="tmp/elsewhere/todos/"))
    assert kept["todos_base"] == "tmp/elsewhere/todos/"
    nulled = step(20, at(19, todos_base=None))
    assert nulled["todos_base"] == f"tmp/arc/{nulled['id']}/todos/"


def test_every_step_is_tested() -> None:
    names = {name for name in globals() if name.startswith("test_step_v")}
    for target in MIGRATIONS:
        assert any(n.startswith(f"test_step_v{target - 1}_to_v{target}") for n in names), target


def test_missing_schema_version_means_v1() -> None:
    cp = at(1)
    del cp["schema_version"]
    assert len(migrate(cp)) == 19 and cp["schema_version"] == 20


@pytest.mark.parametrize("version", ["3", 0, -1, True, 2.5])
def test_bad_schema_version_is_corrupt(version: Any) -> None:
    with pytest.raises(CorruptCheckpoint):
        migrate(at(1, schema_version=version))


@pytest.mark.parametrize("version", [21, 99])
def test_a_newer_schema_is_refused_not_called_corrupt(
    project: Path, chome: Path, version: int
) -> None:
    with pytest.raises(RuneError) as raised:
        migrate(at(1, schema_version=version))
    assert not isinstance(raised.value, CorruptCheckpoint)
    cp = latest()
    cp["schema_version"] = version
    cp["phases"] = "a newer layout"  # whatever a newer tool writes, it is not ours to judge
    path = write_checkpoint(project, cp)
    before = path.read_bytes()
    [plan] = service(project).list()
    assert plan.action == "newer" and plan.fresh_start is None
    assert f"schema_version {version} is newer" in plan.message
    assert "upgrade runeconsole" in plan.message.lower()
    assert "fresh start" not in plan.message and "without --resume" not in plan.message
    for dry_run in (True, False):
        with pytest.raises(RuneError, match="newer"):
            service(project).resume(dry_run=dry_run)
    assert path.read_bytes() == before


def test_a_failed_migration_reports_no_ownership_claim(project: Path, chome: Path) -> None:
    cp = at(15)
    del cp["phases"]["work"]  # v15 -> v16 needs it: corrupt, a fresh start
    cp["owner_pid"] = dead_pid()
    write_checkpoint(project, cp)
    plan = service(project).resume(dry_run=True)
    assert plan.action == "fresh_start" and plan.changes == []
    assert not any("claim" in w for w in plan.warnings)


# -- property: migration is idempotent ----------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
phase_data = st.dictionaries(
    st.sampled_from(["status", "artifact", "artifacts", "team_name", "started_at", "x"]),
    json_values,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(
    version=st.integers(1, SCHEMA_VERSION),
    phases=st.dictionaries(
        st.sampled_from([*PHASE_ORDER, "audit", "custom"]), phase_data, max_size=8
    ),
    extra=st.dictionaries(
        st.sampled_from(["convergence", "flags", "freshness", "totals", "completed_at", "shard"]),
        json_values,
        max_size=4,
    ),
)
@pytest.mark.e2e
def test_migrating_twice_changes_nothing(version: int, phases: dict, extra: dict) -> None:
    phases.setdefault("work", {"status": "pending"})
    cp = {"id": "arc-p", "schema_version": version, "phases": phases, **extra}
    migrate(cp)
    assert cp["schema_version"] == SCHEMA_VERSION
    once = copy.deepcopy(cp)
    assert migrate(cp) == []
    assert cp == once


# -- nonce and ownership --------------------------------------------------------------------------


@pytest.mark.parametrize("nonce", [None, "", "AABBCCDDEEFF", "aabbccddeef", "aabbccddeeff0", 12])
def test_bad_session_nonce_is_refused(project: Path, chome: Path, nonce: Any) -> None:
    cp = latest()
    cp["session_nonce"] = nonce
    path = write_checkpoint(project, cp)
    before = path.read_bytes()
    with pytest.raises(RuneError, match="Invalid session_nonce in checkpoint — possible tampering"):
        service(project).resume()
    assert path.read_bytes() == before


def test_other_config_dir_is_refused(project: Path, chome: Path) -> None:
    cp = latest()
    cp["config_dir"] = "/somewhere/else/.claude"
    write_checkpoint(project, cp)
    with pytest.raises(RuneError, match="belongs to different config dir"):
        service(project).resume()


def test_same_config_dir_written_with_a_trailing_slash_is_ours(project: Path, chome: Path) -> None:
    cp = latest()
    cp["config_dir"] = f"{chome}/"
    write_checkpoint(project, cp)
    assert service(project).resume().action == "resume"


def test_live_owner_is_refused(project: Path, chome: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        cp = latest()
        cp["owner_pid"] = str(owner.pid)  # written as a string by some versions
        path = write_checkpoint(project, cp)
        before = path.read_bytes()
        with pytest.raises(RuneError, match=f"owned by live PID {owner.pid}"):
            service(project).resume()
        assert path.read_bytes() == before
        assert service(project, pid=owner.pid).resume().action == "resume"  # our own session
    finally:
        owner.kill()
        owner.wait(timeout=30)


def test_dead_owner_is_claimed(project: Path, chome: Path) -> None:
    cp = latest()
    cp["owner_pid"] = dead_pid()
    cp["config_dir"] = str(chome)
    path = write_checkpoint(project, cp)
    plan = service(project, pid=5151).resume()
    assert any("claim ownership" in c for c in plan.changes)
    assert json.loads(path.read_text())["owner_pid"] == 5151


@pytest.mark.parametrize("pid", [0, -1, "abc", True, 10**12])
def test_implausible_owner_pid_is_claimed_with_a_warning(
    project: Path, chome: Path, pid: Any
) -> None:
    cp = latest()
    cp["owner_pid"] = pid
    write_checkpoint(project, cp)
    plan = service(project).resume()
    assert any("not a process id" in w for w in plan.warnings)


# -- phase order ----------------------------------------------------------------------------------


def test_timeout_becomes_failed_and_resume_starts_there(project: Path, chome: Path) -> None:
    cp = latest(forge={"status": "completed"}, plan_review={"status": "timeout"})
    write_checkpoint(project, cp)
    plan = service(project).resume()
    assert plan.checkpoint["phases"]["plan_review"]["status"] == "failed"
    assert plan.resume_from == "plan_review"


def test_order_is_checked_by_phase_order_not_numbers(project: Path, chome: Path) -> None:
    cp = latest(
        forge={"status": "completed", "completed_at": "2026-02-26T02:00:00Z"},
        plan_review={"status": "completed", "completed_at": "2026-02-26T01:00:00Z"},
    )
    cp["phase_sequence"] = 99
    write_checkpoint(project, cp)
    plan = service(project).resume(dry_run=True)
    assert any(
        "plan_review has an earlier timestamp than completed forge" in w for w in plan.warnings
    )


def test_unknown_status_is_reset_to_pending(project: Path, chome: Path) -> None:
    write_checkpoint(project, latest(forge={"status": "exploded"}))
    plan = service(project).resume(dry_run=True)
    assert plan.checkpoint["phases"]["forge"]["status"] == "pending"
    assert any("unknown status" in w for w in plan.warnings)


def test_all_finished_means_nothing_to_resume(project: Path, chome: Path) -> None:
    cp = latest()
    for data in cp["phases"].values():
        data["status"] = "completed"
    write_checkpoint(project, cp)
    plan = service(project).resume()
    assert plan.action == "complete" and plan.resume_from is None


# -- artifacts ------------------------------------------------------------------------------------


def with_artifact(project: Path, content: bytes, recorded: str) -> dict[str, Any]:
    artifact = project / "tmp/arc/arc-1707849600000/plan-review.md"
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_bytes(content)
    return latest(
        forge={"status": "completed"},
        plan_review={
            "status": "completed",
            "artifact": "tmp/arc/arc-1707849600000/plan-review.md",
            "artifact_hash": recorded,
        },
    )


@pytest.mark.parametrize("prefix", ["", "sha256:"])
def test_matching_artifact_keeps_the_phase(project: Path, chome: Path, prefix: str) -> None:
    digest = hashlib.sha256(b"review").hexdigest()
    write_checkpoint(project, with_artifact(project, b"review", prefix + digest))
    plan = service(project).resume()
    assert plan.demoted == []
    assert plan.checkpoint["phases"]["plan_review"]["status"] == "completed"
    assert plan.resume_from == "design_extraction"  # v18 added it as pending


def test_modified_artifact_demotes_with_the_seed_warning(project: Path, chome: Path) -> None:
    expected = hashlib.sha256(b"review").hexdigest()
    found = hashlib.sha256(b"edited").hexdigest()
    path = write_checkpoint(project, with_artifact(project, b"edited", f"sha256:{expected}"))
    plan = service(project).resume()
    assert plan.demoted == ["plan_review"]
    assert (
        "WARNING: Artifact for Phase 2 (plan-review.md) has been modified since checkpoint.\n"
        f"Hash expected: sha256:{expected}\n"
        f"Hash found: sha256:{found}\n"
        'Demoting Phase 2 to "pending" — will re-run plan review.'
    ) in plan.warnings
    assert json.loads(path.read_text())["phases"]["plan_review"]["status"] == "pending"
    assert plan.resume_from == "plan_review"


def test_missing_artifact_demotes(project: Path, chome: Path) -> None:
    cp = with_artifact(project, b"x", "00")
    (project / cp["phases"]["plan_review"]["artifact"]).unlink()
    write_checkpoint(project, cp)
    plan = service(project).resume(dry_run=True)
    assert plan.demoted == ["plan_review"]
    assert any("Hash found: (file missing)" in w for w in plan.warnings)


def test_an_artifact_that_is_a_directory_is_reported_as_one(project: Path, chome: Path) -> None:
    cp = with_artifact(project, b"x", "00")
    artifact = project / cp["phases"]["plan_review"]["artifact"]
    artifact.unlink()
    artifact.mkdir()
    write_checkpoint(project, cp)
    plan = service(project).resume(dry_run=True)
    assert plan.demoted == ["plan_review"]
    warning = next(w for w in plan.warnings if "plan-review.md" in w)
    assert "(plan-review.md) is a directory, not a file." in warning
    assert "Hash found: (a directory)" in warning and "missing" not in warning


@pytest.mark.parametrize("artifact", ["../outside.md", "/etc/passwd", "tmp/link/secret.md", "a\0b"])
def test_artifact_escaping_the_root_is_an_error(project: Path, chome: Path, artifact: str) -> None:
    outside = project.parent / "outside-dir"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (project / "tmp").mkdir()
    (project / "tmp/link").symlink_to(outside)
    cp = latest(forge={"status": "completed", "artifact": artifact, "artifact_hash": "00"})
    path = write_checkpoint(project, cp)
    before = tree(project)
    with pytest.raises(RuneError, match=r"escapes the project root|not a usable path"):
        service(project).resume()
    after = {k: v for k, v in tree(project).items() if "/.locks/" not in k}
    assert after == before
    assert path.read_bytes() == before[str(path.relative_to(project))][1]


def test_absent_hash_is_not_verified(project: Path, chome: Path) -> None:
    write_checkpoint(project, with_artifact(project, b"x", None))
    plan = service(project).resume(dry_run=True)
    assert plan.demoted == [] and any("no artifact_hash" in w for w in plan.warnings)


# -- orphan cleanup -----------------------------------------------------------------------------


def team_dirs(chome: Path, team: str) -> list[Path]:
    dirs = [chome / "teams" / team, chome / "tasks" / team]
    for d in dirs:
        d.mkdir(parents=True)
        (d / "1.json").write_text("{}")
    return dirs


def test_orphaned_teams_are_removed_and_phases_reset(project: Path, chome: Path) -> None:
    done = team_dirs(chome, "arc-forge-1")
    crashed = team_dirs(chome, "arc-work-1")
    keep = team_dirs(chome, "someone-else")
    cp = latest(
        forge={"status": "completed", "team_name": "arc-forge-1"},
        work={"status": "in_progress", "team_name": "arc-work-1"},
    )
    path = write_checkpoint(project, cp)
    plan = service(project).resume()
    assert not any(d.exists() for d in done + crashed)
    assert all(d.exists() for d in keep)
    work = json.loads(path.read_text())["phases"]["work"]
    assert work["status"] == "pending" and work["team_name"] is None
    assert json.loads(path.read_text())["phases"]["forge"]["team_name"] == "arc-forge-1"
    assert plan.resume_from == "design_extraction"  # v18 added it as pending


@pytest.mark.parametrize("team", ["../../victim", "a b", "x/..", "..", "name;rm"])
def test_bad_team_names_touch_nothing(project: Path, chome: Path, team: str) -> None:
    victim = chome.parent / "victim"
    victim.mkdir()
    write_checkpoint(project, latest(work={"status": "failed", "team_name": team}))
    plan = service(project).resume()
    assert victim.exists()
    assert any("Invalid team name" in w for w in plan.warnings)


def test_symlinked_team_dir_is_unlinked_not_followed(project: Path, chome: Path) -> None:
    outside = chome.parent / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (chome / "teams").mkdir()
    (chome / "teams" / "arc-x").symlink_to(outside)
    write_checkpoint(project, latest(work={"status": "failed", "team_name": "arc-x"}))
    service(project).resume()
    assert (outside / "keep.txt").exists()
    assert not os.path.lexists(chome / "teams" / "arc-x")


def test_teams_dir_pointing_outside_the_config_dir_is_left(project: Path, chome: Path) -> None:
    outside = chome.parent / "elsewhere"
    (outside / "arc-x").mkdir(parents=True)
    (chome / "teams").symlink_to(outside)
    write_checkpoint(project, latest(work={"status": "failed", "team_name": "arc-x"}))
    plan = service(project).resume()
    assert (outside / "arc-x").exists()
    assert any("outside" in w for w in plan.warnings)


def test_forbidden_phase_keys_are_ignored(project: Path, chome: Path) -> None:
    kept = team_dirs(chome, "arc-proto")
    cp = latest()
    for key in FORBIDDEN_PHASE_KEYS:
        cp["phases"][key] = {"status": "in_progress", "team_name": "arc-proto"}
    write_checkpoint(project, cp)
    plan = service(project).resume()
    assert all(d.exists() for d in kept)
    assert plan.checkpoint["phases"]["__proto__"] == {
        "status": "in_progress",
        "team_name": "arc-proto",
    }


def state_file(project: Path, kind: str, body: Any) -> Path:
    path = project / "tmp" / f".rune-{kind}-20260226.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    return path


def test_stale_state_files_are_marked_crash_recovered(project: Path, chome: Path) -> None:
    clock = ManualClock()
    stale = state_file(project, "work", {"status": "active", "started": "2026-02-26T11:00:00Z"})
    fresh = state_file(project, "review", {"status": "active", "started": "2026-02-26T11:45:00Z"})
    undated = state_file(project, "gap-fix", {"status": "active"})
    done = state_file(project, "mend", {"status": "completed", "started": "2020-01-01T00:00:00Z"})
    broken = state_file(project, "forge", "{not json")
    fresh_before, done_before = fresh.read_bytes(), done.read_bytes()
    write_checkpoint(project, latest())
    plan = service(project, clock).resume()
    for path in (stale, undated):
        state = json.loads(path.read_text())
        assert state["status"] == "completed" and state["crash_recovered"] is True
        assert state["completed"] == "2026-02-26T12:00:00Z"
    assert fresh.read_bytes() == fresh_before and done.read_bytes() == done_before
    assert any("Unreadable state file tmp/.rune-forge-20260226.json" in w for w in plan.warnings)
    assert broken.read_text() == "{not json"


def test_state_files_behind_a_symlinked_tmp_are_not_rewritten(
    project: Path, chome: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-tmp"
    outside.mkdir()
    stale = outside / ".rune-work-20260226.json"
    stale.write_text(json.dumps({"status": "active", "started": "2020-01-01T00:00:00Z"}))
    before = stale.read_bytes()
    (project / "tmp").symlink_to(outside)
    write_checkpoint(project, latest())
    plan = service(project).resume()
    assert stale.read_bytes() == before
    assert any(
        "tmp/.rune-work-20260226.json" in w and "outside the project root" in w
        for w in plan.warnings
    )
    assert not any("crash_recovered" in c for c in plan.changes)


# -- step 7a: suspended tasks -------------------------------------------------------------------


def test_suspended_tasks_are_resumed_and_cleared(project: Path, chome: Path) -> None:
    modify(project, "src/parser.py")
    good = write_context(project, task="7", arc="arc-1707849600000")
    corrupt = write_context(project, task="8", arc="arc-1707849600000")
    corrupt.write_text(corrupt.read_text().replace("formatter", "FORMATTER"))
    rel = lambda p: str(p.relative_to(project))  # noqa: E731
    cp = latest(work={"status": "failed"})
    cp["phases"]["work"]["suspended_tasks"] = [
        {"task_id": "7", "context_path": rel(good), "reason": "turn_limit"},
        {"task_id": "8", "context_path": rel(corrupt), "reason": "signal"},
        {"task_id": "9", "context_path": "tmp/work/../../etc/passwd", "reason": "signal"},
        {"task_id": "10", "context_path": "/etc/passwd", "reason": "signal"},
        {"task_id": "11", "context_path": "tmp/work/x/context/a/11.md", "reason": "signal"},
        "garbage",
    ]
    path = write_checkpoint(project, cp)
    plan = service(project).resume()
    assert list(plan.injections) == ["7"]
    assert "(resume_count: 1/2, reason: turn_limit):" in plan.injections["7"]
    assert suspension(project).read(good).resume_count == 1
    warnings = "\n".join(plan.warnings)
    assert "Suspended task #8: context integrity check FAILED (expected" in warnings
    assert '#9: invalid context path "tmp/work/../../etc/passwd"' in warnings
    assert "#10: invalid context path" in warnings
    assert "#11: context file missing" in warnings
    assert json.loads(path.read_text())["phases"]["work"]["suspended_tasks"] == []


def test_suspended_tasks_wait_while_work_is_completed(project: Path, chome: Path) -> None:
    good = write_context(project, task="7", arc="arc-1707849600000")
    cp = latest(work={"status": "completed"})
    entry = {"task_id": "7", "context_path": str(good.relative_to(project)), "reason": "signal"}
    cp["phases"]["work"]["suspended_tasks"] = [entry]
    write_checkpoint(project, cp)
    plan = service(project).resume()
    assert plan.injections == {}
    assert plan.checkpoint["phases"]["work"]["suspended_tasks"] == [entry]


def test_step_7a_updates_task_files_as_the_seed_does(project: Path, chome: Path) -> None:
    good = write_context(project, task="7", arc="arc-1707849600000")
    spent = write_context(project, task="8", arc="arc-1707849600000")
    spent.write_text(with_resume_count(spent.read_text(), 2))
    tasks = {n: task_file(chome, "arc-session-2", n, metadata={"suspended": True}) for n in "78"}
    crashed = task_file(chome, "arc-work-1", "7")
    cp = latest(work={"status": "failed", "team_name": "arc-work-1"})
    cp["phases"]["work"]["suspended_tasks"] = [
        {"task_id": n, "context_path": str(p.relative_to(project)), "reason": "turn_limit"}
        for n, p in (("7", good), ("8", spent))
    ]
    write_checkpoint(project, cp)
    # Without --team the only team on record is the crashed one, which ORCH-1 removes.
    dry = service(project).resume(dry_run=True)
    assert [t.written for t in dry.task_writes] == [False, False]
    assert all("removed by orphan cleanup" in t.reason for t in dry.task_writes)
    assert crashed.exists()
    plan = service(project).resume(team="arc-session-2")
    assert [(t.task_id, t.written) for t in plan.task_writes] == [("7", True), ("8", True)]
    seven, eight = (json.loads(tasks[n].read_text()) for n in "78")
    assert seven["status"] == "pending" and seven["metadata"] == {"suspended": False}
    assert eight["status"] == "in_progress"
    assert eight["metadata"] == {"suspended": False, "permanently_failed": True}
    assert plan.to_json()["task_updates"][0]["written"] is True


# -- corrupt checkpoints and dry runs -----------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("", "empty"),
        ("[]", "expected a JSON object"),
        ('{"id": "arc-1", "phases": []}', "phases is missing or not an object"),
        ('{"id": "x/../y", "phases": {}}', "does not match"),
        ('{"id": "arc-1", "phases": {"work": 3}}', "phases.work is not an object"),
        ('{"id": "arc-1", "schema_version": 0, "phases": {}}', "outside 1..20"),
        ('{"id": "arc-1", "session_nonce": "aabbccddeeff", "phases": {}}', "phases.work"),
    ],
)
def test_corrupt_checkpoint_falls_back_to_a_fresh_start(
    project: Path, chome: Path, content: str, reason: str
) -> None:
    path = project / ".claude/arc/arc-1/checkpoint.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    plan = service(project).resume()
    assert plan.action == "fresh_start"
    assert reason in plan.message and "fresh start" in plan.message
    assert path.read_text() == content


def test_dry_run_writes_nothing_at_all(project: Path, chome: Path) -> None:
    team_dirs(chome, "arc-work-1")
    state_file(project, "work", {"status": "active"})
    good = write_context(project, task="7", arc="arc-1707849600000")
    cp = load_fixture(LOCAL_RUNE_CHECKPOINTS / "checkpoint_v4.json")
    cp["phases"]["work"]["status"] = "failed"
    cp["phases"]["work"]["team_name"] = "arc-work-1"
    cp["phases"]["work"]["suspended_tasks"] = [
        {"task_id": "7", "context_path": str(good.relative_to(project)), "reason": "signal"}
    ]
    write_checkpoint(project, cp)
    before_project, before_chome = tree(project), tree(chome)
    plan = service(project).resume(dry_run=True)
    assert tree(project) == before_project and tree(chome) == before_chome
    assert not plan.written
    assert any(c.startswith("would remove") for c in plan.changes)
    assert any("migrate v4 -> v5" in c for c in plan.changes)
    assert "7" in plan.injections


def test_discovery_picks_the_newest_checkpoint(project: Path, chome: Path) -> None:
    old = latest()
    old["id"] = "arc-old"
    new = latest()
    new["id"] = "arc-new"
    old_path = write_checkpoint(project, old)
    new_path = write_checkpoint(project, new)
    os.utime(old_path, (1_000_000, 1_000_000))
    os.utime(new_path, (2_000_000, 2_000_000))
    assert service(project).checkpoint_files() == [new_path, old_path]
    assert service(project).resume(dry_run=True).checkpoint_id == "arc-new"
    assert service(project).resume("arc-old", dry_run=True).checkpoint_id == "arc-old"
    with pytest.raises(RuneError):
        service(project).resume("../arc-old")
    with pytest.raises(RuneError, match="no checkpoint"):
        service(project).resume("arc-missing")


@pytest.mark.parametrize("named", [True, False])
def test_a_symlinked_checkpoint_dir_is_refused(
    project: Path, chome: Path, tmp_path: Path, named: bool
) -> None:
    outside = tmp_path / "outside-arc"
    cp = latest()
    cp["id"] = "arc-e"
    write_checkpoint(project, cp, directory="../../../outside-arc")  # lands outside the root
    before = (outside / "checkpoint.json").read_bytes()
    if named:  # .claude/arc/arc-e -> outside
        (project / ".claude/arc").mkdir(parents=True, exist_ok=True)
        (project / ".claude/arc/arc-e").symlink_to(outside)
    else:  # .claude/arc -> a directory outside holding arc-e
        (tmp_path / "arcs").mkdir()
        outside.rename(tmp_path / "arcs/arc-e")
        outside = tmp_path / "arcs/arc-e"
        (project / ".claude").mkdir(exist_ok=True)
        if (project / ".claude/arc").exists():
            (project / ".claude/arc").rmdir()
        (project / ".claude/arc").symlink_to(tmp_path / "arcs")
    for dry_run in (True, False):
        with pytest.raises(RuneError, match="outside the project root"):
            service(project).resume("arc-e" if named else None, dry_run=dry_run)
    assert (outside / "checkpoint.json").read_bytes() == before
    if not named:
        [listed] = service(project).list()
        assert listed.action == "blocked" and "outside the project root" in listed.message


def test_no_checkpoint(project: Path, chome: Path) -> None:
    with pytest.raises(RuneError, match="nothing to resume"):
        service(project).resume()


def test_list_never_raises_and_reports_each(project: Path, chome: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = latest()
        live["id"] = "arc-live"
        live["owner_pid"] = owner.pid
        write_checkpoint(project, live)
        bad = project / ".claude/arc/arc-bad/checkpoint.json"
        bad.parent.mkdir(parents=True)
        bad.write_text("{")
        write_checkpoint(project, load_fixture(LOCAL_RUNE_CHECKPOINTS / "checkpoint_v3.json"))
        plans = {p.path.parent.name: p for p in service(project).list()}
        assert plans["arc-live"].action == "active"
        assert plans["arc-live"].active_pid == owner.pid
        assert plans["arc-live"].checkpoint["schema_version"] == SCHEMA_VERSION  # shown migrated
        assert plans["arc-bad"].action == "fresh_start"
        assert plans["arc-1707849600000"].action == "resume"
    finally:
        owner.kill()
        owner.wait(timeout=30)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    statuses=st.lists(
        st.sampled_from(PHASE_STATUSES), min_size=len(PHASE_ORDER), max_size=len(PHASE_ORDER)
    )
)
def test_resume_from_is_the_first_unfinished_phase_in_order(
    tmp_path: Path, statuses: list[str]
) -> None:
    cp = latest()
    for name, status in zip(PHASE_ORDER, statuses, strict=True):
        cp["phases"][name] = {"status": status, "artifact": None, "team_name": None}
    plan = service(tmp_path).plan(tmp_path / "c.json", dry_run=True, data=json.dumps(cp).encode())
    normalised = ["failed" if s == "timeout" else s for s in statuses]
    expected = next(
        (
            n
            for n, s in zip(PHASE_ORDER, normalised, strict=True)
            if s in ("pending", "in_progress", "failed")
        ),
        None,
    )
    assert plan.resume_from == expected


@pytest.mark.parametrize("name", ["checkpoint_v4.json", "checkpoint_v19.json"])
def test_the_demo_scene_checkpoints_are_the_fixtures(name: str) -> None:
    fixture = next(path for path in ALL_FIXTURES if path.name == name)
    assert (DEMO_CHECKPOINTS / name).read_bytes() == fixture.read_bytes()
