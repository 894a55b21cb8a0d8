"""The resume steps that judge a migrated checkpoint against the project as it is now: the
plan's freshness, the phases' statuses and order, and the completed phases' artifacts
(a changed or missing one sends its phase back to pending). Each adds what it finds and
changes to the ``ResumePlan``; none writes a file."""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any

from runeconsole.core import frontmatter
from runeconsole.core.errors import RuneError
from runeconsole.core.files import read_bytes
from runeconsole.core.timeutil import parse_iso
from runeconsole.core.validate import contained
from runeconsole.services.checkpoints.artifacts import bare_hash, file_sha256
from runeconsole.services.checkpoints.plan import ResumePlan, demotion_warning
from runeconsole.services.checkpoints.schema import (
    COMPLETED,
    FAILED,
    PENDING,
    PHASE_ORDER,
    PHASE_STATUSES,
    RESUMABLE,
    TIMEOUT,
    phase_items,
    phase_status,
)
from runeconsole.services.checkpoints.schema import (
    RETIRED_PHASES as RETIRED,
)

PLAN_LIMIT = 4 * 1024 * 1024


def check_freshness(root: Path, cp: dict[str, Any], plan: ResumePlan) -> None:
    """Say when the plan file's ``git_sha`` moved on since the checkpoint; the freshness
    check itself belongs to the arc."""
    plan_file = cp.get("plan_file")
    if not isinstance(plan_file, str) or not plan_file:
        return
    try:
        path = contained(root, plan_file)
        meta = frontmatter.parse(read_bytes(path, PLAN_LIMIT).decode("utf-8"))[1]
    except (RuneError, UnicodeDecodeError, frontmatter.FrontmatterError) as exc:
        plan.warnings.append(
            f"plan {plan_file}: frontmatter unreadable ({exc}); freshness re-check skipped"
        )
        return
    freshness = cp.get("freshness")
    freshness = freshness if isinstance(freshness, dict) else {}
    git_sha, recorded = meta.get("git_sha"), freshness.get("git_sha")
    if git_sha and git_sha != recorded and freshness.get("status") != "STALE-OVERRIDE":
        plan.warnings.append(
            f"plan git_sha changed since the checkpoint ({recorded} -> {git_sha}): "
            "re-run the freshness check"
        )


def validate_order(cp: dict[str, Any], plan: ResumePlan) -> None:
    """Statuses normalised (``timeout`` is ``failed``, an unknown one ``pending``), and
    completed phases checked to be in PHASE_ORDER's time order."""
    phases = cp["phases"]
    for name, data in phase_items(phases, plan.warnings):
        status = data.get("status")
        if status == TIMEOUT:
            data["status"] = FAILED
            plan.changes.append(f"phases.{name}: timeout -> failed")
        elif status not in PHASE_STATUSES:
            data["status"] = PENDING
            plan.warnings.append(
                f"phases.{name}: unknown status {reprlib.repr(status)}; set to pending"
            )
    for name, data in phase_items(phases):
        if name not in PHASE_ORDER and data.get("status") in RESUMABLE and name not in RETIRED:
            plan.warnings.append(
                f"phases.{name} ({data['status']}) is not in this runeconsole's PHASE_ORDER: "
                "a newer tool may run it; resume goes by PHASE_ORDER and never starts there"
            )
    stamps = [(n, _stamp(phases.get(n))) for n in PHASE_ORDER]
    for index, (name, stamp) in enumerate(stamps):
        if stamp is None or phase_status(phases.get(name)) != COMPLETED:
            continue
        for later, later_stamp in stamps[index + 1 :]:
            if later_stamp is not None and later_stamp < stamp:
                plan.warnings.append(
                    f"phase order: {later} has an earlier timestamp than completed {name}"
                )


def verify_artifacts(root: Path, cp: dict[str, Any], plan: ResumePlan) -> None:
    """A completed phase whose artifact changed or vanished goes back to pending; an
    artifact path outside the project root refuses the whole resume."""
    for name, data in phase_items(cp["phases"]):
        artifact = data.get("artifact")
        if data.get("status") != COMPLETED or artifact is None:
            continue
        if not isinstance(artifact, str) or not artifact:
            raise RuneError(f"phases.{name}.artifact {reprlib.repr(artifact)} is not a path")
        try:
            path = contained(root, artifact)
        except RuneError:
            raise RuneError(
                f"phases.{name}.artifact {artifact} escapes the project root "
                f"{root} — refusing to resume this checkpoint"
            ) from None
        expected = bare_hash(data.get("artifact_hash"))
        if expected is None:
            plan.warnings.append(f"phases.{name}: no artifact_hash recorded; not verified")
            continue
        found, instead = file_sha256(path)
        if found != expected:
            data["status"] = PENDING
            plan.demoted.append(name)
            plan.warnings.append(demotion_warning(name, artifact, expected, found, instead))
            plan.changes.append(f"phases.{name}: completed -> pending (artifact hash)")


def _stamp(data: Any) -> Any:
    if not isinstance(data, dict):
        return None
    return parse_iso(data.get("completed_at")) or parse_iso(data.get("started_at"))
