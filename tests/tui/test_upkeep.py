"""The console keeps its root pruned: once a day, in a worker, saying what it moved; and a
Permissions pane over months of decisions reads only what it shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runeconsole.services.claude.permissions.service import (
    RECENT,
    PermissionRequest,
    Permissions,
)
from runeconsole.services.project import Project
from runeconsole.services.retention import Retention
from runeconsole.tui.console.app import create_app
from runeconsole.tui.panes.permissions_pane import LocalPermissionsPane
from tests.support.old_records import decided_requests
from tests.support.polling import until

pytestmark = pytest.mark.timeout(120)
NOW = datetime.now(UTC)


async def test_the_console_prunes_when_a_prune_is_due_and_says_what_it_moved(
    project: Path,
) -> None:
    decided_requests(project, 30, newest=NOW - timedelta(days=20), days=5)
    app = create_app(project, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        app.upkeep.check()
        await until(pilot, lambda: app.upkeep.last_report is not None)
        assert app.upkeep.last_report == "archived 30 permissions"
        await until(pilot, lambda: any("archived 30" in n.message for n in app._notifications))
        assert Permissions(Project(project)).requests() == []
        app.upkeep.last_report = None
        app.upkeep.check()  # not due again today: nothing runs
        await pilot.pause(0.3)
        assert app.upkeep.last_report is None
    assert not Retention(Project(project)).due()


async def test_the_permissions_pane_reads_the_latest_decisions_only(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = decided_requests(project, 500, newest=NOW, days=2)
    read: list[Path] = []
    reading = PermissionRequest.read.__func__  # type: ignore[attr-defined]

    def counted(cls: type, path: Path) -> PermissionRequest:
        read.append(path)
        return reading(cls, path)

    monkeypatch.setattr(PermissionRequest, "read", classmethod(counted))
    app = create_app(project, watch=False, tick_seconds=0)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.query_one(LocalPermissionsPane)
        await until(pilot, lambda: len(pane.records) == RECENT)
        assert set(pane.records) == set(ids[-RECENT:])
        assert len(read) == RECENT
