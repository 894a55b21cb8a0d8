"""Arc checkpoints ``.claude/arc/{id}/checkpoint.json`` and ``--resume`` (seed 002).

Resuming runs the seed's steps in its order: discovery, nonce and ownership
checks, schema migration v1 -> v19 (each step exactly as listed), the plan
freshness re-check, phase-order validation, artifact hash verification with
demotion, orphan cleanup and the suspended-task resume of step 7a. Every change
is described as it is made, so ``dry_run`` reports the same plan and writes
nothing. Phase keys, team names and paths are validated before any file-system
operation, and nothing outside the project root and the Claude config dir is
ever removed or rewritten: real paths (symlinks resolved) are checked before every
write, and a refused item is reported with the reason. A checkpoint that cannot
be read falls back to a fresh start.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import re
import reprlib
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from runeconsole.adapters import tasks as task_files
from runeconsole.adapters.tasks import TaskStore, TaskWrite
from runeconsole.core import frontmatter
from runeconsole.core.errors import InvalidInput, RuneError, UnreadableFile
from runeconsole.core.files import (
    atomic_write_json,
    parse_json_object,
    read_bytes,
    read_json_object,
)
from runeconsole.core.locks import locked
from runeconsole.core.pids import pid_alive
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.core.validate import Outside, contained, validate_id
from runeconsole.services.project import Project
from runeconsole.services.suspension import GitView, ResumeRefused, Suspension

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
PENDING, IN_PROGRESS, COMPLETED, FAILED = "pending", "in_progress", "completed", "failed"
SKIPPED, TIMEOUT, CANCELLED = "skipped", "timeout", "cancelled"
PHASE_STATUSES = (PENDING, IN_PROGRESS, COMPLETED, FAILED, SKIPPED, TIMEOUT, CANCELLED)
RESUMABLE = (PENDING, IN_PROGRESS, FAILED)
FINISHED = (COMPLETED, SKIPPED, CANCELLED)
FORBIDDEN_PHASE_KEYS = frozenset({"__proto__", "constructor", "prototype"})
SCHEMA_VERSION = 19
CHECKPOINT_ID = re.compile(r"^arc-[a-zA-Z0-9_-]+$")
SESSION_NONCE = re.compile(r"^[0-9a-f]{12}$")
STATE_FILE_TYPES = ("work", "review", "mend", "audit", "forge", "gap-fix", "inspect")
ORPHAN_STALE_SECONDS = 1800
MAX_PID = 2**22
TIER_STANDARD = {"name": "STANDARD", "maxCycles": 3, "minCycles": 2}
CHECKPOINT_FILE = "checkpoint.json"


class CorruptCheckpoint(RuneError):
    """The checkpoint cannot be used at all: the arc starts fresh."""


class NewerCheckpoint(RuneError):
    """Written by a newer tool: not corrupt, just not ours to migrate (left untouched)."""


class OwnedByLiveSession(RuneError):
    """Another arc session, still running, owns the checkpoint."""

    def __init__(self, pid: int) -> None:
        super().__init__(f"Checkpoint owned by live PID {pid} — another arc session is active")
        self.pid = pid


def phase_entry(status: str, **extra: Any) -> dict[str, Any]:
    return {"status": status, "artifact": None, "artifact_hash": None, "team_name": None, **extra}


def parse_pid(value: Any) -> int | None:
    """``owner_pid`` as written (number or string); ``None`` unless a plausible pid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and 0 < value < MAX_PID:
        return value
    return None


def bare_hash(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    value = value.strip().lower()
    return value.removeprefix("sha256:")


MISSING, DIRECTORY, NOT_A_FILE = "file missing", "a directory", "not a regular file"


def file_sha256(path: Path) -> tuple[str | None, str]:
    """The hex SHA-256 of a regular file, or ``None`` and what is there instead (a FIFO
    or device would block or never end, so only regular files are read)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None, MISSING
    if stat.S_ISDIR(mode):
        return None, DIRECTORY
    if not stat.S_ISREG(mode):
        return None, NOT_A_FILE
    try:
        return _hash_file(path), ""
    except OSError:
        return None, MISSING


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


# -- schema migration (seed 002 step 3, v1 -> v19) -------------------------------------------

Log = list[str]


def js_falsy(value: Any) -> bool:
    """JavaScript's ``!value`` (the seed's tests): an empty object or array is truthy."""
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
    return cp["phases"]


def _add_phases(cp: dict[str, Any], log: Log, entries: dict[str, dict[str, Any]]) -> None:
    for name, entry in entries.items():
        _default(_phases(cp), name, entry, log, "phases.")


def _flags(cp: dict[str, Any], log: Log) -> dict[str, Any]:
    if not isinstance(cp.get("flags"), dict):
        cp["flags"] = {}
        log.append("set flags = {}")
    return cp["flags"]


def _convergence(cp: dict[str, Any], log: Log) -> dict[str, Any]:
    if not isinstance(cp.get("convergence"), dict):
        cp["convergence"] = {}
        log.append("set convergence = {}")
    return cp["convergence"]


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
    stagnation = {"error_patterns": [], "file_velocity": [], "budget": None}
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
}


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


def migrate(cp: dict[str, Any]) -> list[str]:
    """Bring a checkpoint to v19 in place, step by step; what changed, per step."""
    check_shape(cp)
    changes = []
    version = cp.get("schema_version") or 1
    for target, step in MIGRATIONS.items():
        if version < target:
            log: Log = []
            step(cp, log)
            cp["schema_version"] = version = target
            changes.append(f"migrate v{target - 1} -> v{target}: {'; '.join(log) or 'no change'}")
    return changes


# -- resume (seed 002 steps 1-7a) ------------------------------------------------------------


@dataclass
class PhaseView:
    name: str
    status: str
    number: int | None
    demoted: bool = False
    tracked: bool = True


@dataclass
class ResumePlan:
    """What resuming a checkpoint does (or did): every change, warning and the next phase."""

    path: Path
    checkpoint_id: str = ""
    from_version: int | None = None
    checkpoint: dict[str, Any] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    demoted: list[str] = field(default_factory=list)
    resume_from: str | None = None
    injections: dict[str, str] = field(default_factory=dict)
    task_writes: list[TaskWrite] = field(default_factory=list)
    removed_teams: set[str] = field(default_factory=set)
    fresh_start: str | None = None
    blocked: str | None = None
    active_pid: int | None = None
    written: bool = False

    @property
    def action(self) -> str:
        """``resume``, ``complete``, ``active`` (a live session owns it), ``blocked`` or
        ``fresh_start``."""
        if self.fresh_start:
            return "fresh_start"
        if self.active_pid is not None:
            return "active"
        if self.blocked:
            return "blocked"
        return "resume" if self.resume_from else "complete"

    @property
    def message(self) -> str:
        if self.fresh_start:
            return (
                f"checkpoint {self.path} is corrupt ({self.fresh_start}); falling back to a "
                "fresh start: run the arc again without --resume"
            )
        if self.blocked:
            return self.blocked
        if self.resume_from is None:
            return f"{self.checkpoint_id}: every phase is finished; nothing to resume"
        return f"{self.checkpoint_id}: resume from phase {self.resume_from}"

    def phases(self) -> list[PhaseView]:
        """PHASE_ORDER first (untracked ones marked), then any other phases recorded."""
        phases = self.checkpoint.get("phases")
        phases = phases if isinstance(phases, dict) else {}
        views = []
        for number, name in enumerate(PHASE_ORDER, 1):
            status = _shown_status(phases.get(name)) if name in phases else "absent"
            views.append(PhaseView(name, status, number, name in self.demoted, name in phases))
        for name, data in phases.items():
            if name not in PHASE_ORDER and name not in FORBIDDEN_PHASE_KEYS:
                views.append(PhaseView(name, _shown_status(data), None, name in self.demoted))
        return views

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "id": self.checkpoint_id,
            "plan_file": self.checkpoint.get("plan_file"),
            "action": self.action,
            "message": self.message,
            "from_version": self.from_version,
            "schema_version": self.checkpoint.get("schema_version"),
            "resume_from": self.resume_from,
            "changes": self.changes,
            "warnings": self.warnings,
            "demoted": self.demoted,
            "phases": [
                {"name": v.name, "status": v.status, "demoted": v.demoted, "tracked": v.tracked}
                for v in self.phases()
            ],
            "injections": self.injections,
            "task_updates": [task.to_json() for task in self.task_writes],
            "written": self.written,
        }


@dataclass
class Claim:
    """What claiming ownership changes and warns about (step 2c)."""

    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def demotion_warning(
    name: str, artifact: str, expected: str, found: str | None, instead: str = MISSING
) -> str:
    """The seed's hash-mismatch warning, word for word (``instead``: what is there when
    there is no file to hash)."""
    number = PHASE_ORDER.index(name) + 1 if name in PHASE_ORDER else name
    label = os.path.basename(artifact)
    found_line = f"sha256:{found}" if found else f"({instead})"
    verbs = {MISSING: "is missing", DIRECTORY: "is a directory, not a file"}
    verb = "has been modified since checkpoint" if found else verbs.get(instead, f"is {instead}")
    return (
        f"WARNING: Artifact for Phase {number} ({label}) {verb}.\n"
        f"Hash expected: sha256:{expected}\n"
        f"Hash found: {found_line}\n"
        f'Demoting Phase {number} to "pending" — will re-run {name.replace("_", " ")}.'
    )


class Checkpoints:
    def __init__(
        self,
        project: Project,
        *,
        config_dir: Path | None = None,
        session_pid: int | None = None,
        suspension: Suspension | None = None,
    ) -> None:
        self.project = project
        self.root, self.paths, self.clock = project.root, project.paths, project.clock
        self.config_dir = config_dir or task_files.config_dir()
        self.session_pid = session_pid if session_pid is not None else os.getppid()
        self.suspension = suspension or Suspension(
            project, tasks=TaskStore(self.config_dir / "tasks")
        )

    # -- discovery -------------------------------------------------------------------------

    def checkpoint_files(self) -> list[Path]:
        """``.claude/arc/*/checkpoint.json``, newest first by mtime."""
        found = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.paths.arc):
                path = Path(entry.path) / CHECKPOINT_FILE
                with contextlib.suppress(OSError):
                    if (
                        entry.is_dir(follow_symlinks=False)
                        and path.is_file()
                        and not path.is_symlink()
                    ):
                        found.append((path.stat().st_mtime, path))
        return [path for _, path in sorted(found, key=lambda item: (-item[0], str(item[1])))]

    def path_for(self, checkpoint_id: str | None) -> Path:
        if checkpoint_id is None:
            files = self.checkpoint_files()
            if not files:
                raise RuneError(f"no checkpoint under {self.paths.arc}: nothing to resume")
            return self._inside_root(files[0])
        validate_id(checkpoint_id, "checkpoint id")
        if not CHECKPOINT_ID.fullmatch(checkpoint_id):
            raise RuneError(f"checkpoint id {checkpoint_id!r} must look like arc-…")
        path = self.paths.arc / checkpoint_id / CHECKPOINT_FILE
        if not path.is_file():
            raise RuneError(f"no checkpoint {checkpoint_id} ({path} does not exist)")
        return self._inside_root(path)

    def _inside_root(self, path: Path) -> Path:
        """``path`` if its real path is under the real root: resuming rewrites it, and a
        symlinked ``.claude/arc`` or ``arc-…`` dir must not carry that write outside."""
        try:
            contained(self.root, path)
        except InvalidInput as exc:
            raise InvalidInput(f"checkpoint refused: {exc.message}") from None
        return path

    def list(self, view: GitView | None = None) -> list[ResumePlan]:
        """Every checkpoint as a dry-run resume would see it (never raises for content)."""
        view = view or self.suspension.git_view()
        plans = []
        for path in self.checkpoint_files():
            try:
                self._inside_root(path)
            except InvalidInput as exc:  # shown, with the reason resume would refuse it
                plans.append(ResumePlan(path, blocked=exc.message))
                continue
            plans.append(self.plan(path, dry_run=True, view=view))
        return plans

    # -- resuming --------------------------------------------------------------------------

    def resume(
        self, checkpoint_id: str | None = None, *, dry_run: bool = False, team: str | None = None
    ) -> ResumePlan:
        """Resume the named (or newest) checkpoint; refusals raise, corruption starts fresh.

        ``team`` names the task list whose files step 7a updates (default: the team the
        context or the work phase records)."""
        if team is not None:
            validate_id(team, "team")
        path = self.path_for(checkpoint_id)
        if dry_run:
            plan = self.plan(path, dry_run=True, team=team)
        else:
            lock = self.paths.lock_for(f"checkpoint-{path.parent.name}")
            with locked(lock, what=str(path)):
                plan = self.plan(path, dry_run=False, team=team)
        if plan.blocked:
            raise RuneError(plan.blocked)
        return plan

    def plan(
        self,
        path: Path,
        *,
        dry_run: bool,
        view: GitView | None = None,
        data: bytes | None = None,
        team: str | None = None,
    ) -> ResumePlan:
        """Run the resume steps on ``path`` (or on ``data`` as its content)."""
        plan = ResumePlan(path)
        cp: Any = None
        try:
            raw = read_bytes(path) if data is None else data
            cp = parse_json_object(path, raw)
            ident, version = cp.get("id"), cp.get("schema_version")
            plan.checkpoint_id = ident if isinstance(ident, str) else ""
            plan.from_version = version if type(version) is int else None
            check_shape(cp)
            self._check_nonce(cp)
            claim = self._check_owner(cp)
            migrated = migrate(cp)
            plan.warnings += claim.warnings  # only once the claim will really happen
            plan.changes += claim.changes + migrated
        except UnreadableFile as exc:
            plan.fresh_start = exc.reason
            return plan
        except CorruptCheckpoint as exc:
            plan.fresh_start = exc.message
            plan.checkpoint = cp if isinstance(cp, dict) else {}
            return plan
        except RuneError as exc:
            plan.blocked = exc.message
            plan.active_pid = exc.pid if isinstance(exc, OwnedByLiveSession) else None
            plan.checkpoint = json.loads(raw)
            with contextlib.suppress(RuneError):
                migrate(plan.checkpoint)  # shown as it would be, for the console
            return plan
        plan.checkpoint = cp
        if path.parent.name != plan.checkpoint_id:
            plan.warnings.append(f"checkpoint id {plan.checkpoint_id} differs from its directory")
        try:
            self._freshness(cp, plan)
            self._validate_order(cp, plan)
            self._verify_artifacts(cp, plan)
        except RuneError as exc:
            plan.blocked = exc.message
            return plan
        work_team = cp["phases"]["work"].get("team_name")  # before cleanup clears it
        self._cleanup_orphans(cp, plan, dry_run)
        plan.resume_from = next(
            (n for n in PHASE_ORDER if _status(cp["phases"].get(n)) in RESUMABLE), None
        )
        recorded = work_team if isinstance(work_team, str) else None
        self._resume_suspended(cp, plan, dry_run, view, team, recorded)
        if not dry_run:
            atomic_write_json(self._inside_root(path), cp)
            plan.written = True
        return plan

    def _check_nonce(self, cp: dict[str, Any]) -> None:
        nonce = cp.get("session_nonce")
        if not isinstance(nonce, str) or not SESSION_NONCE.fullmatch(nonce):
            raise RuneError("Invalid session_nonce in checkpoint — possible tampering")

    def _check_owner(self, cp: dict[str, Any]) -> Claim:
        """Step 2c: refuse a live owner; claim the checkpoint for this session (in ``cp``;
        the returned notes are reported only if the resume goes on)."""
        claim = Claim()
        chome = str(self.config_dir)
        recorded = cp.get("config_dir")
        if recorded and os.path.normpath(str(recorded)) != os.path.normpath(chome):
            raise RuneError(
                f"Checkpoint belongs to different config dir ({recorded} ≠ {chome}) "
                "— aborting resume"
            )
        owner = cp.get("owner_pid")
        if owner is not None and owner != "":
            pid = parse_pid(owner)
            if pid is None:
                claim.warnings.append(
                    f"owner_pid {reprlib.repr(owner)} is not a process id; claiming"
                )
            elif pid != self.session_pid and pid_alive(pid):
                raise OwnedByLiveSession(pid)
        if parse_pid(owner) != self.session_pid or recorded != chome:
            claim.changes.append(f"claim ownership: owner_pid {owner} -> {self.session_pid}")
        cp["owner_pid"] = self.session_pid
        cp["config_dir"] = chome
        return claim

    def _freshness(self, cp: dict[str, Any], plan: ResumePlan) -> None:
        """Step 3r: say when the plan moved on; the check itself belongs to the arc."""
        plan_file = cp.get("plan_file")
        if not isinstance(plan_file, str) or not plan_file:
            return
        try:
            path = contained(self.root, plan_file)
            meta = frontmatter.parse(read_bytes(path, 4 * 1024 * 1024).decode("utf-8"))[1]
        except (RuneError, UnicodeDecodeError, frontmatter.FrontmatterError) as exc:
            plan.warnings.append(
                f"plan {plan_file}: frontmatter unreadable ({exc}); freshness re-check skipped"
            )
            return
        freshness = cp.get("freshness") if isinstance(cp.get("freshness"), dict) else {}
        git_sha, recorded = meta.get("git_sha"), freshness.get("git_sha")
        if git_sha and git_sha != recorded and freshness.get("status") != "STALE-OVERRIDE":
            plan.warnings.append(
                f"plan git_sha changed since the checkpoint ({recorded} -> {git_sha}): "
                "re-run the freshness check"
            )

    def _validate_order(self, cp: dict[str, Any], plan: ResumePlan) -> None:
        """Step 4: statuses normalised, and completed phases in PHASE_ORDER time order."""
        phases = cp["phases"]
        for name, data in _phase_items(phases, plan):
            status = data.get("status")
            if status == TIMEOUT:
                data["status"] = FAILED
                plan.changes.append(f"phases.{name}: timeout -> failed")
            elif status not in PHASE_STATUSES:
                data["status"] = PENDING
                plan.warnings.append(
                    f"phases.{name}: unknown status {reprlib.repr(status)}; set to pending"
                )
        stamps = [(n, _stamp(phases.get(n))) for n in PHASE_ORDER]
        for index, (name, stamp) in enumerate(stamps):
            if stamp is None or _status(phases.get(name)) != COMPLETED:
                continue
            for later, later_stamp in stamps[index + 1 :]:
                if later_stamp is not None and later_stamp < stamp:
                    plan.warnings.append(
                        f"phase order: {later} has an earlier timestamp than completed {name}"
                    )

    def _verify_artifacts(self, cp: dict[str, Any], plan: ResumePlan) -> None:
        """Step 5: a completed phase whose artifact changed or vanished goes back to pending."""
        for name, data in _phase_items(cp["phases"]):
            artifact = data.get("artifact")
            if data.get("status") != COMPLETED or artifact is None:
                continue
            if not isinstance(artifact, str) or not artifact:
                raise RuneError(f"phases.{name}.artifact {reprlib.repr(artifact)} is not a path")
            try:
                path = contained(self.root, artifact)
            except RuneError:
                raise RuneError(
                    f"phases.{name}.artifact {artifact} escapes the project root "
                    f"{self.root} — refusing to resume this checkpoint"
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

    def _cleanup_orphans(self, cp: dict[str, Any], plan: ResumePlan, dry_run: bool) -> None:
        """Step 6 (ORCH-1): orphaned team dirs and stale sub-command state files."""
        for name, data in _phase_items(cp["phases"]):
            team = data.get("team_name")
            if not team or not isinstance(team, str):
                continue
            if not re.fullmatch(r"[a-zA-Z0-9_-]+", team) or ".." in team:
                plan.warnings.append(
                    f'ORCH-1: Invalid team name for phase {name}: "{team}" — skipping'
                )
                continue
            plan.removed_teams.add(team)
            for kind in ("teams", "tasks"):
                self._remove_team_dir(self.config_dir / kind / team, plan, dry_run)
            if data.get("status") in FINISHED:
                continue
            data["team_name"] = None
            data["status"] = PENDING
            plan.changes.append(f"phases.{name}: orphaned team {team} cleared; status -> pending")
        for state in self._state_files():
            self._recover_state_file(state, plan, dry_run)

    def _remove_team_dir(self, path: Path, plan: ResumePlan, dry_run: bool) -> None:
        if not os.path.lexists(path):
            return
        try:
            contained(self.config_dir, path.parent, "the Claude config dir")
        except Outside as exc:
            plan.warnings.append(f"ORCH-1: {path} resolves outside {exc.root}; not removed")
            return
        plan.changes.append(f"{'would remove' if dry_run else 'removed'} {path}")
        if dry_run:
            return
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
        else:
            shutil.rmtree(path, ignore_errors=True)

    def _state_files(self) -> Iterator[Path]:
        tmp = self.root / "tmp"
        for kind in STATE_FILE_TYPES:
            for path in sorted(tmp.glob(f".rune-{kind}-*.json")):
                if path.is_file() and not path.is_symlink():
                    yield path

    def _recover_state_file(self, path: Path, plan: ResumePlan, dry_run: bool) -> None:
        rel = path.relative_to(self.root).as_posix()
        try:
            contained(self.root, path)
        except InvalidInput as exc:  # a symlinked tmp/: rewriting would write outside
            plan.warnings.append(f"ORCH-1: state file {rel} refused: {exc.message} — skipping")
            return
        try:
            state = read_json_object(path)
        except UnreadableFile:
            plan.warnings.append(f"ORCH-1: Unreadable state file {rel} — skipping")
            return
        started = parse_iso(state.get("started"))
        now = self.clock.now()
        stale = started is None or (now - started).total_seconds() > ORPHAN_STALE_SECONDS
        if state.get("status") != "active" or not stale:
            return
        plan.warnings.append(f"ORCH-1: Stale state file: {rel} — marking crash_recovered")
        plan.changes.append(f"{rel}: status active -> completed (crash_recovered)")
        if not dry_run:
            state.update(status="completed", completed=iso_z(now), crash_recovered=True)
            atomic_write_json(path, state)

    def _resume_suspended(
        self,
        cp: dict[str, Any],
        plan: ResumePlan,
        dry_run: bool,
        view: GitView | None,
        team: str | None,
        work_team: str | None,
    ) -> None:
        """Step 7a: verified context of suspended work tasks, injected into the next wave,
        and their task files updated (``team``, else the context's, else ``work_team``)."""
        work = cp["phases"]["work"]
        tasks = work.get("suspended_tasks")
        if work.get("status") not in (PENDING, FAILED) or not tasks:
            return
        if not isinstance(tasks, list):
            plan.warnings.append("phases.work.suspended_tasks is not a list; ignored")
            return
        view = view or self.suspension.git_view()
        for entry in tasks:
            task_id, context_path, reason = _suspended_entry(entry)
            try:
                validate_id(task_id, "suspended task id")
                if not context_path.startswith("tmp/work/") or ".." in context_path:
                    raise RuneError(f'invalid context path "{context_path}" — skipping')
                path = contained(self.root, context_path)
                if not path.is_file():
                    raise RuneError(f"context file missing at {context_path} — cold restart")
                result = self.suspension.resume(
                    path, dry_run=dry_run, reason=reason, view=view, team=team,
                    recorded_team=work_team,
                )  # fmt: skip
            except RuneError as exc:
                message = exc.message.removeprefix(f"task #{task_id}: ")
                plan.warnings.append(f"Suspended task #{task_id}: {message}")
                if isinstance(exc, ResumeRefused) and exc.task is not None:
                    plan.task_writes.append(self._after_cleanup(exc.task, plan))
                continue
            if result.task is not None:
                plan.task_writes.append(self._after_cleanup(result.task, plan))
            plan.warnings += result.warnings
            plan.injections[task_id] = result.injection
            plan.changes.append(
                f"task #{task_id}: resume_count -> {result.resume_count} ({context_path})"
            )
        work["suspended_tasks"] = []
        plan.changes.append("phases.work.suspended_tasks cleared")

    def _after_cleanup(self, task: TaskWrite, plan: ResumePlan) -> TaskWrite:
        """A task list that orphan cleanup removes holds no task to update: say so (a dry
        run would otherwise find the files it has not removed yet)."""
        if task.written or task.team not in plan.removed_teams:
            return task
        return replace(
            task,
            dry_run=False,
            reason=f"task list {task.team} is removed by orphan cleanup (ORCH-1); "
            "pass --team for the resuming session's list",
        )


def _shown_status(data: Any) -> str:
    status = data.get("status") if isinstance(data, dict) else None
    return status if isinstance(status, str) else "?"


def _status(data: Any) -> str | None:
    return data.get("status") if isinstance(data, dict) else None


def _stamp(data: Any) -> Any:
    if not isinstance(data, dict):
        return None
    return parse_iso(data.get("completed_at")) or parse_iso(data.get("started_at"))


def _phase_items(
    phases: dict[str, Any], plan: ResumePlan | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Phases safe to act on: forbidden keys are skipped (and reported once)."""
    for name, data in phases.items():
        if name in FORBIDDEN_PHASE_KEYS:
            if plan is not None:
                plan.warnings.append(f"phase key {name!r} is forbidden; ignored")
            continue
        yield name, data


def _suspended_entry(entry: Any) -> tuple[str, str, str]:
    if not isinstance(entry, dict):
        return "?", "", "unknown"
    task = entry.get("task_id")
    path = entry.get("context_path")
    reason = entry.get("reason")
    return (
        str(task) if isinstance(task, str | int) and not isinstance(task, bool) else "?",
        path if isinstance(path, str) else "",
        reason if isinstance(reason, str) else "unknown",
    )
