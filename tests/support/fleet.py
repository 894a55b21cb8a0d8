"""Roots for the tests of many sources: a git repository with some workers registered."""

from __future__ import annotations

from pathlib import Path

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
