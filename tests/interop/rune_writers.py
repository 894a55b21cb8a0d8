"""Files in the Rune plugin's formats, built as its documented writers build them: the arc
checkpoint as ``arc-checkpoint-init.md`` writes it (schema v20 since the plugin's
v1.121.0, with ``todos_base``), the orchestrator's question and answer persistence files
as ``question-relay.md``'s ``jq -n`` commands write them (``options`` a string, ``seq`` a
number, nothing else), and a background worker's ``tmp/work/{ts}/questions/`` file."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

# PHASE_ORDER as the plugin iterates it today.
PHASE_ORDER = (
    "forge", "plan_review", "plan_refine", "verification", "semantic_verification",
    "design_extraction", "task_decomposition", "work", "design_verification", "gap_analysis",
    "codex_gap_analysis", "gap_remediation", "goldmask_verification", "code_review",
    "goldmask_correlation", "mend", "verify_mend", "design_iteration", "test",
    "test_coverage_critique", "pre_ship_validation", "release_quality_check", "ship",
    "bot_review_wait", "pr_comment_resolution", "merge",
)  # fmt: skip


def _atomic(path: Path, data: bytes, mode: int = 0o644) -> Path:
    """``mktemp`` in the directory, then ``mv``: how the plugin's writers land a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".q-", suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return path


def arc_checkpoint(
    root: Path,
    arc_id: str,
    *,
    config_dir: str,
    owner_pid: str,
    schema_version: int = 20,
    phases: dict[str, dict[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    """``.claude/arc/{id}/checkpoint.json`` as the init writer writes it (``owner_pid`` the
    string ``$PPID`` gives, ``config_dir`` as ``pwd -P`` prints it)."""
    entries: dict[str, dict[str, Any]] = {}
    for name in PHASE_ORDER:
        entry: dict[str, Any] = {
            "status": "pending",
            "artifact": None,
            "artifact_hash": None,
            "team_name": None,
            "started_at": None,
            "completed_at": None,
        }
        if name == "work":
            entry["suspended_tasks"] = []
        if name == "test":
            entry.update(tiers_run=[], pass_rate=None, coverage_pct=None, has_frontend=False)
        entries[name] = entry
    for name, data in (phases or {}).items():
        entries.setdefault(name, {}).update(data)
    checkpoint = {
        "id": arc_id,
        "schema_version": schema_version,
        "plan_file": "plans/feature-plan.md",
        "config_dir": config_dir,
        "owner_pid": owner_pid,
        "session_id": "0b5c9a4e-2f1d-4c8b-9e7a-3d2f1c0b9a8e",
        "flags": {
            "approve": False,
            "no_forge": False,
            "skip_freshness": False,
            "confirm": False,
            "no_test": False,
            "bot_review": False,
            "no_bot_review": False,
        },
        "arc_config": None,
        "pr_url": None,
        "freshness": None,
        "session_nonce": "3fa1c2d4e5b6",
        "phase_sequence": 0,
        "parent_plan": {
            "path": None,
            "children_dir": None,
            "child_seq": None,
            "feature_branch": None,
            "skip_branch": False,
            "skip_ship_pr": False,
        },
        "stagnation": {"error_patterns": [], "file_velocity": [], "budget": None},
        "phases": entries,
        "convergence": {
            "round": 0,
            "max_rounds": 3,
            "history": [],
            "original_changed_files": [],
            "tier": {"name": "STANDARD", "maxCycles": 3, "minCycles": 2},
        },
        "shard": None,
        "commits": [],
        "started_at": "2026-02-26T01:45:00.000Z",
        "updated_at": "2026-02-26T01:45:00.000Z",
        "totals": {"phase_times": {}, "total_duration_ms": None, "cost_at_completion": None},
        "completed_at": None,
        "todos_base": f"tmp/arc/{arc_id}/todos/",
        **extra,
    }
    path = root / ".claude" / "arc" / arc_id / "checkpoint.json"
    return _atomic(path, json.dumps(checkpoint, indent=2).encode())


def signal_dir(root: Path, timestamp: str = "20260226-014500") -> Path:
    """``mkdir -m 700 -p tmp/.rune-signals/rune-work-{TIMESTAMP}``."""
    directory = root / "tmp" / ".rune-signals" / f"rune-work-{timestamp}"
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    return directory


def orchestrator_question(
    directory: Path,
    task_id: str,
    seq: int,
    question: str,
    options: list[str],
    *,
    urgency: str = "blocking",
    context: str = "",
) -> Path:
    """``{task}.q{seq}.question`` as ``jq -n --arg …`` writes it: every field a string but
    ``seq``; ``options`` is the JSON array text the orchestrator passed as one argument."""
    body = {
        "task_id": task_id,
        "question": question,
        "urgency": urgency,
        "options": json.dumps(options),
        "context": context,
        "seq": seq,
    }
    return _atomic(directory / f"{task_id}.q{seq}.question", json.dumps(body, indent=2).encode())


def background_question(
    root: Path, timestamp: str, task_id: str, question: str, options: list[str]
) -> Path:
    """``tmp/work/{timestamp}/questions/{task-id}.question``, a background worker's own."""
    body = {
        "task_id": task_id,
        "question": question,
        "urgency": "blocking",
        "options": ", ".join(options),
        "context": "",
        "worker_name": "rune-smith-2",
    }
    path = root / "tmp" / "work" / timestamp / "questions" / f"{task_id}.question"
    return _atomic(path, json.dumps(body, indent=2).encode())
