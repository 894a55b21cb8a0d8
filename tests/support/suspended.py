"""Helpers shared by the suspended-task, checkpoint and pane tests; the scene and its
writers live in ``runeconsole.demo.suspended`` (the screenshots use them too)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from runeconsole.adapters.clock import ManualClock
from runeconsole.demo.suspended import build_scene, modify, write_checkpoint, write_context
from runeconsole.services.project import Project
from runeconsole.services.suspension import Suspension, SuspensionSettings
from tests.support.paths import FIXTURES

LOCAL_RUNE_CHECKPOINTS = FIXTURES / "rune-checkpoints"
OWN_CHECKPOINTS = FIXTURES / "checkpoints"


def suspension(root: Path, clock: ManualClock | None = None, **settings: Any) -> Suspension:
    return Suspension(Project(root, clock or ManualClock()), SuspensionSettings(**settings))


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


__all__ = [
    "ALL_CHECKPOINT_FIXTURES",
    "build_scene",
    "dead_pid",
    "load_fixture",
    "modify",
    "suspension",
    "task_file",
    "tree",
    "write_checkpoint",
    "write_context",
]
