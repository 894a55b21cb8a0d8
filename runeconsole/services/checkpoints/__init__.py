"""Arc checkpoints ``.claude/arc/{id}/checkpoint.json`` and ``--resume``.

Resuming runs the steps in the Rune plugin's order: discovery, nonce and ownership
checks, schema migration v1 -> v20 (each step exactly as the plugin's), the plan
freshness re-check, phase-order validation, artifact hash verification with
demotion, orphan cleanup and the resume of the work phase's suspended tasks. Every
change is described as it is made, so ``dry_run`` reports the same plan and writes
nothing. Phase keys, team names and paths are validated before any file-system
operation, and nothing outside the project root and the Claude config dir is ever
removed or rewritten: real paths (symlinks resolved) are checked before every write,
and a refused item is reported with the reason. A checkpoint that cannot be read falls
back to a fresh start.

One job a module: ``schema`` (the shape and the statuses) and ``migrations`` are pure;
``ownership``, ``steps``, ``artifacts``, ``orphans`` and ``suspended_tasks`` are the
resume steps; ``plan`` is what they report; ``service.Checkpoints`` runs them. The names
callers use are re-exported here.
"""

from runeconsole.services.checkpoints.migrations import MIGRATIONS, TIER_STANDARD, migrate
from runeconsole.services.checkpoints.ownership import OwnedByLiveSession
from runeconsole.services.checkpoints.plan import PhaseView, ResumePlan
from runeconsole.services.checkpoints.schema import (
    CHECKPOINT_FILE,
    COMPLETED,
    FORBIDDEN_PHASE_KEYS,
    PHASE_ORDER,
    PHASE_STATUSES,
    SCHEMA_VERSION,
    CorruptCheckpoint,
    NewerCheckpoint,
)
from runeconsole.services.checkpoints.service import Checkpoints

__all__ = [
    "CHECKPOINT_FILE",
    "COMPLETED",
    "FORBIDDEN_PHASE_KEYS",
    "MIGRATIONS",
    "PHASE_ORDER",
    "PHASE_STATUSES",
    "SCHEMA_VERSION",
    "TIER_STANDARD",
    "Checkpoints",
    "CorruptCheckpoint",
    "NewerCheckpoint",
    "OwnedByLiveSession",
    "PhaseView",
    "ResumePlan",
    "migrate",
]
