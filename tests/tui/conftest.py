"""Fixtures of the console's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import SNAP


@pytest.fixture
def snap_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where a snapshot's project goes: ``runeconsole-snap``, a relative path, in a fresh
    temp dir made the working directory, so the root the console shows (and every path
    under it) reads the same on every run."""
    monkeypatch.chdir(tmp_path)
    return SNAP
