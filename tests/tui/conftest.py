"""Fixtures of the console's tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.support.console import changes_looked
from tests.support.paths import SNAP


@pytest.fixture
def snap_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where a snapshot's project goes: ``runeconsole-snap``, a relative path, in a fresh
    temp dir made the working directory, so the root the console shows (and every path
    under it) reads the same on every run."""
    monkeypatch.chdir(tmp_path)
    return SNAP


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """The plugin's ``snap_compare``, after the agents' changes have been looked at (a
    worker's work, otherwise drawn or not depending on timing)."""

    def compare(app: Any, *args: Any, run_before: Any = None, **kwargs: Any) -> bool:
        async def before(pilot: Pilot) -> None:
            await changes_looked(pilot)
            if run_before is not None:
                result = run_before(pilot)
                if result is not None:
                    await result

        return snap_compare(app, *args, run_before=before, **kwargs)

    return compare
