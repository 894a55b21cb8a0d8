"""Helpers shared by the suspended-task, checkpoint and pane tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import ManualClock
from runeconsole.services.project import Project
from runeconsole.services.suspension import Suspension, SuspensionSettings

HERE = Path(__file__).resolve().parent
LOCAL_RUNE_CHECKPOINTS = HERE / "fixtures" / "rune-checkpoints"
OWN_CHECKPOINTS = HERE / "fixtures" / "checkpoints"


def suspension(root: Path, clock: ManualClock | None = None, **settings: Any) -> Suspension:
    return Suspension(Project(root, clock or ManualClock()), SuspensionSettings(**settings))


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
    service = suspension(root, clock, **settings)
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


def task_file(chome: Path, team: str, name: str = "7", **fields: Any) -> Path:
    """A Claude Code task file as Claude Code writes it, with fields of its own."""
    body = {
        "id": name,
        "subject": "Refactor the parser",
        "description": "File Ownership: src/parser.py",
        "status": "in_progress",
        "owner": "rune-smith-1",
        "blocks": [],
        "blockedBy": [],
        "metadata": {"wave": 1},
        **fields,
    }
    path = chome / "tasks" / team / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=2))
    return path


def write_checkpoint(root: Path, cp: dict[str, Any], directory: str | None = None) -> Path:
    path = root / ".claude" / "arc" / (directory or cp["id"]) / "checkpoint.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cp, indent=2))
    return path


def load_fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    return child.pid


def tree(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``root`` with its mtime and bytes (to prove nothing was written)."""
    out = {}
    for dirpath, _, files in os.walk(root):
        if "/.git" in dirpath or dirpath.endswith(".git"):
            continue
        for name in files:
            path = Path(dirpath) / name
            out[str(path.relative_to(root))] = (path.stat().st_mtime_ns, path.read_bytes())
    return out


ALL_CHECKPOINT_FIXTURES = sorted(
    [*LOCAL_RUNE_CHECKPOINTS.glob("*.json"), *OWN_CHECKPOINTS.glob("*.json")],
    key=lambda p: int(p.stem.split("_v")[1]),
)


def build_scene(root: Path, clock: ManualClock) -> None:
    """A project with one context file per verdict and three checkpoints (pane tests)."""
    from runeconsole.adapters import git
    from runeconsole.services.suspension import with_resume_count

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
    write_checkpoint(root, load_fixture(LOCAL_RUNE_CHECKPOINTS / "checkpoint_v4.json"))
    v19 = load_fixture(OWN_CHECKPOINTS / "checkpoint_v19.json")
    v19["owner_pid"] = None
    write_checkpoint(root, v19)
    bad = root / ".claude/arc/arc-1999/checkpoint.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{ truncated")
