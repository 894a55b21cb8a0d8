"""Schema migration v1 -> v20: one step per version, each exactly as the Rune plugin's
own migration does it (JavaScript's ``??`` and ``!`` semantics included), each change
logged so a dry run can list it.

Pure: the steps change the checkpoint in memory only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from runeconsole.services.checkpoints.schema import (
    FORBIDDEN_PHASE_KEYS,
    PENDING,
    SKIPPED,
    CorruptCheckpoint,
    check_shape,
    phase_entry,
)

TIER_STANDARD = {"name": "STANDARD", "maxCycles": 3, "minCycles": 2}
Log = list[str]


def js_falsy(value: Any) -> bool:
    """JavaScript's ``!value``, as the plugin's migration tests it: an empty object or
    array is truthy."""
    if value is None or value is False or value == "":
        return True
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value == 0 or value != value  # 0 and NaN
    return False


def _default(mapping: dict[str, Any], key: str, value: Any, log: Log, where: str = "") -> None:
    """``mapping[key] = mapping[key] ?? value`` (JavaScript's ``??``), logged when it changes."""
    if mapping.get(key) is not None or (key in mapping and value is None):
        return
    mapping[key] = copy.deepcopy(value)
    log.append(f"set {where}{key} = {value!r}")


def _phases(cp: dict[str, Any]) -> dict[str, Any]:
    phases: dict[str, Any] = cp["phases"]
    return phases


def _add_phases(cp: dict[str, Any], log: Log, entries: dict[str, dict[str, Any]]) -> None:
    for name, entry in entries.items():
        _default(_phases(cp), name, entry, log, "phases.")


def _flags(cp: dict[str, Any], log: Log) -> dict[str, Any]:
    if not isinstance(cp.get("flags"), dict):
        cp["flags"] = {}
        log.append("set flags = {}")
    flags: dict[str, Any] = cp["flags"]
    return flags


def _convergence(cp: dict[str, Any], log: Log) -> dict[str, Any]:
    if not isinstance(cp.get("convergence"), dict):
        cp["convergence"] = {}
        log.append("set convergence = {}")
    convergence: dict[str, Any] = cp["convergence"]
    return convergence


def v1_to_v2(cp: dict[str, Any], log: Log) -> None:
    _add_phases(
        cp, log, {"plan_refine": phase_entry(SKIPPED), "verification": phase_entry(SKIPPED)}
    )


def v2_to_v3(cp: dict[str, Any], log: Log) -> None:
    _add_phases(cp, log, {"verify_mend": phase_entry(SKIPPED)})
    _default(cp, "convergence", {"round": 0, "max_rounds": 2, "history": []}, log)


def v3_to_v4(cp: dict[str, Any], log: Log) -> None:
    _add_phases(cp, log, {"gap_analysis": phase_entry(SKIPPED)})


def v4_to_v5(cp: dict[str, Any], log: Log) -> None:
    _default(cp, "freshness", None, log)
    _default(_flags(cp, log), "skip_freshness", False, log, "flags.")


def v5_to_v6(cp: dict[str, Any], log: Log) -> None:
    # STANDARD as a safe default; re-selecting a tier would use stale git state.
    convergence = _convergence(cp, log)
    _default(convergence, "tier", TIER_STANDARD, log, "convergence.")
    round_ = convergence.get("round")
    in_progress = isinstance(round_, int | float) and not isinstance(round_, bool) and round_ > 0
    if not in_progress and convergence.get("max_rounds") != TIER_STANDARD["maxCycles"]:
        convergence["max_rounds"] = TIER_STANDARD["maxCycles"]
        log.append(f"set convergence.max_rounds = {TIER_STANDARD['maxCycles']}")


def v6_to_v7(cp: dict[str, Any], log: Log) -> None:
    _add_phases(cp, log, {"ship": phase_entry(PENDING), "merge": phase_entry(PENDING)})
    _default(cp, "arc_config", None, log)
    _default(cp, "pr_url", None, log)


def v7_to_v8(cp: dict[str, Any], log: Log) -> None:
    convergence = cp.get("convergence")
    tier = convergence.get("tier") if isinstance(convergence, dict) else None
    if isinstance(tier, dict):
        _default(tier, "minCycles", 1 if tier.get("name") == "LIGHT" else 2, log, "tier.")
        return
    convergence = _convergence(cp, log)
    convergence["tier"] = dict(TIER_STANDARD)
    log.append(f"replaced corrupt convergence.tier with {TIER_STANDARD!r}")


def v8_to_v9(cp: dict[str, Any], log: Log) -> None:
    test = phase_entry(PENDING, tiers_run=[], pass_rate=None, coverage_pct=None, has_frontend=False)
    _add_phases(
        cp,
        log,
        {
            "goldmask_verification": phase_entry(PENDING),
            "goldmask_correlation": phase_entry(PENDING),
            "test": test,
        },
    )


def v9_to_v10(cp: dict[str, Any], log: Log) -> None:
    entry = phase_entry(SKIPPED, fixed_count=None, deferred_count=None)
    _add_phases(cp, log, {"gap_remediation": entry})


def v10_to_v11(cp: dict[str, Any], log: Log) -> None:
    _add_phases(cp, log, {"audit_mend": phase_entry(SKIPPED), "audit_verify": phase_entry(SKIPPED)})
    tier = {"name": "LIGHT", "maxCycles": 2, "minCycles": 1}
    _default(
        cp, "audit_convergence", {"round": 0, "max_rounds": 2, "tier": tier, "history": []}, log
    )


def v11_to_v12(cp: dict[str, Any], log: Log) -> None:
    _default(cp, "shard", None, log)


def v12_to_v13(cp: dict[str, Any], log: Log) -> None:
    # Audit now runs inside code review; team_name is kept so orphan cleanup still runs.
    phases = _phases(cp)
    for name in ("audit", "audit_mend", "audit_verify"):
        old = phases.get(name)
        phases[name] = {**(old if isinstance(old, dict) else {}), "status": SKIPPED}
        log.append(f"set phases.{name}.status = 'skipped'")
    if "audit_convergence" in cp:
        del cp["audit_convergence"]
        log.append("removed audit_convergence")


def v13_to_v14(cp: dict[str, Any], log: Log) -> None:
    _default(cp, "parent_plan", None, log)


def v14_to_v15(cp: dict[str, Any], log: Log) -> None:
    stagnation: dict[str, Any] = {"error_patterns": [], "file_velocity": [], "budget": None}
    _default(cp, "stagnation", stagnation, log)
    _default(_flags(cp, log), "no_test", False, log, "flags.")


def v15_to_v16(cp: dict[str, Any], log: Log) -> None:
    work = _phases(cp).get("work")
    if not isinstance(work, dict):
        raise CorruptCheckpoint("phases.work is missing or not an object")
    _default(work, "suspended_tasks", [], log, "phases.work.")


def v16_to_v17(cp: dict[str, Any], log: Log) -> None:
    names = (
        "task_decomposition",
        "test_coverage_critique",
        "release_quality_check",
        "bot_review_wait",
        "pr_comment_resolution",
    )
    _add_phases(cp, log, {name: phase_entry(SKIPPED) for name in names})


def v17_to_v18(cp: dict[str, Any], log: Log) -> None:
    phases = _phases(cp)
    for name in ("design_extraction", "design_verification", "design_iteration"):
        if js_falsy(phases.get(name)):
            phases[name] = phase_entry(PENDING)
            log.append(f"set phases.{name} = pending")


def v18_to_v19(cp: dict[str, Any], log: Log) -> None:
    timed: Log = []
    for name, data in _phases(cp).items():
        if name in FORBIDDEN_PHASE_KEYS:
            continue
        _default(data, "started_at", None, timed)
        _default(data, "completed_at", None, timed)
        if "artifacts" in data and "artifact" not in data:
            data["artifact"] = data.pop("artifacts")
            log.append(f"renamed phases.{name}.artifacts to artifact")
    if timed:
        log.append(f"set {len(timed)} phase timing fields (started_at, completed_at) = None")
    if js_falsy(cp.get("totals")):
        cp["totals"] = {"phase_times": {}, "total_duration_ms": None, "cost_at_completion": None}
        log.append(
            "set totals = {phase_times: {}, total_duration_ms: None, cost_at_completion: None}"
        )
    if js_falsy(cp.get("completed_at")) and not (
        "completed_at" in cp and cp["completed_at"] is None
    ):
        cp["completed_at"] = None
        log.append("set completed_at = None")


def v19_to_v20(cp: dict[str, Any], log: Log) -> None:
    # Where the arc's todo files live: a value the checkpoint has is kept.
    ident = cp.get("id")
    if cp.get("todos_base") is None and isinstance(ident, str) and ident:
        cp["todos_base"] = f"tmp/arc/{ident}/todos/"
        log.append(f"set todos_base = {cp['todos_base']!r}")


MIGRATIONS: dict[int, Callable[[dict[str, Any], Log], None]] = {
    2: v1_to_v2,
    3: v2_to_v3,
    4: v3_to_v4,
    5: v4_to_v5,
    6: v5_to_v6,
    7: v6_to_v7,
    8: v7_to_v8,
    9: v8_to_v9,
    10: v9_to_v10,
    11: v10_to_v11,
    12: v11_to_v12,
    13: v12_to_v13,
    14: v13_to_v14,
    15: v14_to_v15,
    16: v15_to_v16,
    17: v16_to_v17,
    18: v17_to_v18,
    19: v18_to_v19,
    20: v19_to_v20,
}


def migrate(cp: dict[str, Any]) -> list[str]:
    """Bring a checkpoint to the newest schema in place, step by step; what changed, per
    step."""
    check_shape(cp)
    changes = []
    version = cp.get("schema_version") or 1
    for target, step in MIGRATIONS.items():
        if version < target:
            log: Log = []
            step(cp, log)
            cp["schema_version"] = version = target
            changes.append(f"migrate v{target - 1} -> v{target}: {'; '.join(log) or 'no change'}")
    if not isinstance(cp["phases"].get("work"), dict):  # every version since v16 has one
        raise CorruptCheckpoint("phases.work is missing or not an object")
    return changes
