"""Tasks under retention: a landed or dropped task older than the policy leaves for the
archive with its attempts' output; one still at work, however old, never does."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from runeconsole.core.timeutil import iso_z
from tests.services.retention.test_retention import archived_ids
from tests.support.cli import CliResult

Cli = Callable[..., CliResult]
NOW = datetime.now(UTC)


def task(root: Path, task_id: str, state: str, days_ago: float) -> Path:
    directory = root / ".claude" / "state" / "tasks"
    (directory / task_id).mkdir(parents=True, exist_ok=True)
    (directory / task_id / "attempt-1-test.log").write_text("ok\n")
    when = iso_z(NOW - timedelta(days=days_ago))
    fields = {"task_id": task_id, "state": state, "created_at": when, "attempts": []}
    if state in ("landed", "dropped"):
        fields[f"{state}_at"] = when
    path = directory / f"{task_id}.json"
    path.write_text(json.dumps(fields))
    return path


def test_old_landed_and_dropped_tasks_leave_with_their_output_and_working_ones_stay(
    project: Path, cli: Cli
) -> None:
    old_landed = task(project, "old-landed", "landed", 40)
    old_dropped = task(project, "old-dropped", "dropped", 31)
    recent = task(project, "recent", "landed", 2)
    working = task(project, "still-working", "working", 400)
    (project / ".claude/state/tasks/broken.json").write_text("{half")

    result = cli("prune", "--json", "--root", str(project))

    assert result.code == 0, result.err
    report = {k["kind"]: k for k in result.json()["kinds"]}["tasks"]
    assert report["archived"] == 2 and report["pending"] == 1
    assert not old_landed.exists() and not old_dropped.exists()
    assert not (project / ".claude/state/tasks/old-landed").exists()
    assert recent.exists() and working.exists()
    assert (project / ".claude/state/tasks/broken.json").exists()
    assert sorted(archived_ids(project, "tasks")) == ["old-dropped", "old-landed"]
