"""Orphan cleanup on resume: the team and task dirs a crashed arc left in the Claude config
dir, and the sub-commands' state files it left ``active`` under ``tmp/``.

Nothing outside the config dir or the project root is removed or rewritten: the real
path of each is checked first, and a refused one is reported with the reason. Warnings
keep the ``ORCH-1:`` prefix the Rune plugin prints, so readers of either find them.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import Clock
from runeconsole.core.errors import InvalidInput, UnreadableFile
from runeconsole.core.files import atomic_write_json, read_json_object
from runeconsole.core.timeutil import iso_z, parse_iso
from runeconsole.core.validate import Outside, contained
from runeconsole.services.checkpoints.plan import ResumePlan
from runeconsole.services.checkpoints.schema import FINISHED, PENDING, phase_items

STATE_FILE_TYPES = ("work", "review", "mend", "audit", "forge", "gap-fix", "inspect")
ORPHAN_STALE_SECONDS = 1800
TEAM_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")


class OrphanCleanup:
    def __init__(self, root: Path, config_dir: Path, clock: Clock) -> None:
        self.root = root
        self.config_dir = config_dir
        self.clock = clock

    def run(self, cp: dict[str, Any], plan: ResumePlan, dry_run: bool) -> None:
        """Remove every phase's team dirs; an unfinished phase whose team is gone goes back
        to pending. Then stale state files are marked ``crash_recovered``."""
        for name, data in phase_items(cp["phases"]):
            team = data.get("team_name")
            if not team or not isinstance(team, str):
                continue
            if not TEAM_NAME.fullmatch(team) or ".." in team:
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
