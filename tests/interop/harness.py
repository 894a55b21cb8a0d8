"""The claude-code-harness side: the files its own scripts wrote (``data/harness-written``,
copied from the shared fixtures; its README says how they were made), and its readers'
rules as that README documents them, to check what runeconsole leaves for them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
HARNESS = DATA / "harness-written"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "interop"
BRANCHES = {"impl_auth": "worktree-impl_auth", "impl_db": "worktree-impl_db"}
MERGE_READY = "20261123T182326Z-runner-guardian-MERGE_READY.json"


def copy_harness_state(root: Path) -> None:
    """The harness's ``.claude`` as its scripts left it, into ``root``."""
    shutil.copytree(HARNESS / ".claude", root / ".claude", dirs_exist_ok=True)


def signals_dir(root: Path) -> Path:
    return root / ".claude" / "attractor" / "signals"


def harness_signal_names(root: Path) -> list[str]:
    """What the harness's ``list_signals`` sees: ``*.json`` in the directory, by name."""
    directory = signals_dir(root)
    return (
        sorted(n for n in os.listdir(directory) if n.endswith(".json"))
        if directory.exists()
        else []
    )


def harness_target(name: str) -> str | None:
    """The target the harness reads from a signal file's name
    (``{timestamp}-{source}-{target}-{TYPE}.json``, split on the first three dashes)."""
    parts = name[: -len(".json")].split("-", 3)
    return parts[2] if len(parts) >= 3 else None


def harness_wait_for_signal(root: Path, target: str) -> dict[str, Any] | None:
    """``wait_for_signal.py --target T`` as documented: the oldest signal whose name has
    ``T`` as its target, read and moved to ``processed/``; it matches on the target only."""
    for name in harness_signal_names(root):
        if harness_target(name) == target:
            path = signals_dir(root) / name
            body = json.loads(path.read_text())
            (signals_dir(root) / "processed").mkdir(exist_ok=True)
            path.rename(signals_dir(root) / "processed" / name)
            return body
    return None


def fixture_payload(name: str) -> dict[str, Any]:
    return json.loads((HARNESS / ".claude" / "attractor" / "signals" / name).read_text())
