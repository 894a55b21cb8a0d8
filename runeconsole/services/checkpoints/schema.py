"""The checkpoint's shape: the phases in their order, the statuses a phase may have, and
the checks every resume step relies on (anything else is corrupt: a fresh start).

Pure: nothing here reads or writes a file.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterator
from typing import Any

from runeconsole.core.errors import RuneError

PHASE_ORDER = (
    "forge",
    "plan_review",
    "plan_refine",
    "verification",
    "semantic_verification",
    "design_extraction",
    "task_decomposition",
    "work",
    "design_verification",
    "gap_analysis",
    "codex_gap_analysis",
    "gap_remediation",
    "goldmask_verification",
    "code_review",
    "goldmask_correlation",
    "mend",
    "verify_mend",
    "design_iteration",
    "test",
    "test_coverage_critique",
    "pre_ship_validation",
    "release_quality_check",
    "ship",
    "bot_review_wait",
    "pr_comment_resolution",
    "merge",
)
# Phases the plugin no longer runs (audit moved into code review in v13); old checkpoints
# keep them, skipped.
RETIRED_PHASES = ("audit", "audit_mend", "audit_verify")
PENDING, IN_PROGRESS, COMPLETED, FAILED = "pending", "in_progress", "completed", "failed"
SKIPPED, TIMEOUT, CANCELLED = "skipped", "timeout", "cancelled"
PHASE_STATUSES = (PENDING, IN_PROGRESS, COMPLETED, FAILED, SKIPPED, TIMEOUT, CANCELLED)
RESUMABLE = (PENDING, IN_PROGRESS, FAILED)
FINISHED = (COMPLETED, SKIPPED, CANCELLED)
FORBIDDEN_PHASE_KEYS = frozenset({"__proto__", "constructor", "prototype"})
SCHEMA_VERSION = 20  # the Rune plugin writes v20 since its v1.121.0
CHECKPOINT_ID = re.compile(r"^arc-[a-zA-Z0-9_-]+$")
CHECKPOINT_FILE = "checkpoint.json"


class CorruptCheckpoint(RuneError):
    """The checkpoint cannot be used at all: the arc starts fresh."""


class NewerCheckpoint(RuneError):
    """Written by a newer tool: not corrupt, just not ours to migrate (left untouched)."""


def phase_entry(status: str, **extra: Any) -> dict[str, Any]:
    return {"status": status, "artifact": None, "artifact_hash": None, "team_name": None, **extra}


def check_shape(cp: Any) -> None:
    """What every step relies on; anything else is corrupt (a fresh start)."""
    if not isinstance(cp, dict):
        raise CorruptCheckpoint(f"expected a JSON object, found {type(cp).__name__}")
    version = cp.get("schema_version")
    if type(version) is int and version > SCHEMA_VERSION:  # before the shape: it may differ
        raise NewerCheckpoint(
            f"checkpoint schema_version {version} is newer than this runeconsole understands "
            f"(up to {SCHEMA_VERSION}): it was written by a newer tool. Upgrade runeconsole to "
            "resume it; the checkpoint was left as it is."
        )
    if not isinstance(cp.get("id"), str) or not CHECKPOINT_ID.fullmatch(cp["id"]):
        raise CorruptCheckpoint(
            f"id {reprlib.repr(cp.get('id'))} does not match {CHECKPOINT_ID.pattern}"
        )
    phases = cp.get("phases")
    if not isinstance(phases, dict):
        raise CorruptCheckpoint("phases is missing or not an object")
    for name, data in phases.items():
        if name not in FORBIDDEN_PHASE_KEYS and not isinstance(data, dict):
            raise CorruptCheckpoint(f"phases.{name} is not an object")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise CorruptCheckpoint(f"schema_version {reprlib.repr(version)} is not a whole number")
    if isinstance(version, int) and not 1 <= version <= SCHEMA_VERSION:
        raise CorruptCheckpoint(
            f"schema_version {version} is outside 1..{SCHEMA_VERSION} (this tool's range)"
        )


def phase_items(
    phases: dict[str, Any], warnings: list[str] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Phases safe to act on: forbidden keys are skipped (and told to ``warnings``)."""
    for name, data in phases.items():
        if name in FORBIDDEN_PHASE_KEYS:
            if warnings is not None:
                warnings.append(f"phase key {name!r} is forbidden; ignored")
            continue
        yield name, data


def phase_status(data: Any) -> str | None:
    return data.get("status") if isinstance(data, dict) else None
