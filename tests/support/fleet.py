"""Roots for the tests of many sources: a git repository with some workers registered, and
a fleet file listing them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runeconsole.adapters import git
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry


def project_root(tmp_path: Path, name: str, *agents: str) -> Path:
    """``tmp_path/name``: a git repository with a ``worker-AGENT`` registered per agent."""
    root = tmp_path / name
    git.init_repo(root)
    registry = Registry(Project(root))
    for agent in agents:
        registry.register("worker", agent)
    return root


def fleet_file(tmp_path: Path, *sources: dict[str, Any]) -> Path:
    """``tmp_path/fleet.yml`` listing these sources (JSON, which YAML reads as it is)."""
    path = tmp_path / "fleet.yml"
    path.write_text(
        json.dumps(
            [{k: str(v) if isinstance(v, Path) else v for k, v in s.items()} for s in sources]
        )
    )
    return path
