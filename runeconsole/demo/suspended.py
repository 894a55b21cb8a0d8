"""The suspended-task scene, for the screenshots and the Suspended pane's tests: one
context file per verdict (valid, stale, exhausted, corrupt, unreadable) and arc
checkpoints of two schema versions beside a truncated one.

The two checkpoints in ``checkpoints/`` are byte-for-byte copies of the test fixtures
(``tests/fixtures/``), which a test keeps identical.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from runeconsole.adapters import git
from runeconsole.adapters.clock import ManualClock
from runeconsole.services.project import Project
from runeconsole.services.suspension import Suspension, SuspensionSettings, with_resume_count

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"


def modify(root: Path, name: str, text: str = "changed\n") -> None:
    """Change (or create and track) ``name`` so ``git diff HEAD`` lists it."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text("original\n")
        subprocess.run(["git", "add", name], cwd=root, check=True, timeout=30)
        subprocess.run(["git", "commit", "-qm", f"add {name}"], cwd=root, check=True, timeout=30)
    path.write_text(text)


def write_context(
    root: Path,
    task: str = "7",
    arc: str = "arc-1700000000000",
    *,
    body: str = "Parser refactor done; formatter next.",
    targets: tuple[str, ...] = (),
    clock: ManualClock | None = None,
    stash: bool = False,
    team: str | None = None,
    **settings: Any,
) -> Path:
    """Suspend task ``task`` of ``arc`` as a worker does; the context file's path."""
    service = Suspension(Project(root, clock or ManualClock()), SuspensionSettings(**settings))
    result = service.suspend(
        team=team,
        task_id=task,
        worker="rune-smith-1",
        arc_id=arc,
        reason="turn_limit",
        last_action="Completed parser refactor; formatter.py next",
        file_targets=list(targets),
        body=body,
        stamp="20260226-014400",
        stash=stash,
    )
    return result.path


def write_checkpoint(root: Path, cp: dict[str, Any], directory: str | None = None) -> Path:
    """``cp`` as ``.claude/arc/<id>/checkpoint.json``, as the arc writes it."""
    path = root / ".claude" / "arc" / (directory or cp["id"]) / "checkpoint.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cp, indent=2))
    return path


def build_scene(root: Path, clock: ManualClock) -> None:
    """A git project at ``root`` with the scene's context files and checkpoints."""
    git.init_repo(root)
    modify(root, "src/parser.py")
    modify(root, "src/lexer.py")
    write_context(root, "7", "arc-1707849600000", clock=clock)
    clock.advance(95)
    write_context(root, "8", "arc-1707849600000", clock=clock, body="Lexer half done.")
    stale = write_context(root, "9", "arc-1707849600000", clock=clock)
    stale.write_text(with_resume_count(stale.read_text().replace("src/lexer.py", "src/gone.py"), 0))
    clock.advance(600)
    exhausted = write_context(root, "12", "arc-1710000000019", clock=clock)
    exhausted.write_text(with_resume_count(exhausted.read_text(), 2))
    corrupt = write_context(root, "13", "arc-1710000000019", clock=clock)
    corrupt.write_text(corrupt.read_text().replace("next", "NEXT"))
    broken = root / "tmp/work/20260226-014400/context/arc-1710000000019/14.md"
    broken.write_text("---\nstatus: suspended\nresume_count: [\n---\n")
    clock.advance(3600)
    write_checkpoint(root, json.loads((CHECKPOINTS / "checkpoint_v4.json").read_text()))
    v19 = json.loads((CHECKPOINTS / "checkpoint_v19.json").read_text())
    v19["owner_pid"] = None
    write_checkpoint(root, v19)
    bad = root / ".claude/arc/arc-1999/checkpoint.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{ truncated")
