"""The journal of actions in flight, with real processes: a command killed with -9 in the
middle leaves a record that says what of it stands; an action that ends, done or refused,
leaves none."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.core.crash_points import PAUSE_AT_ENV, PAUSE_DIR_ENV
from runeconsole.core.errors import RuneError
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.journal import Journal
from runeconsole.services.project import Project
from tests.support.cli import cli_env
from tests.support.polling import wait_until

pytestmark = pytest.mark.timeout(120)


def killed_at(root: Path, tmp_path: Path, point: str, *command: str) -> None:
    env = {**cli_env(), PAUSE_AT_ENV: point, PAUSE_DIR_ENV: str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "runeconsole", *command, "--root", str(root)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_until((tmp_path / f"{point}.paused").exists, what=f"the command to stop at {point}")
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@pytest.mark.parametrize(
    ("point", "outcome"),
    [
        ("action-rule", "nothing was written: do it again"),
        ("action-rule-written", ".claude/state/permission-rules.json written: it had finished"),
    ],
)
@pytest.mark.e2e
def test_a_command_killed_mid_action_is_listed_once_with_what_stands(
    project: Path, tmp_path: Path, run_cli, point: str, outcome: str
) -> None:
    killed_at(project, tmp_path, point, "permissions", "deny", "Bash", "rm -rf /")

    listed = run_cli("interrupted", "--json", "--root", str(project))

    [action] = json.loads(listed.stdout)
    assert action["what"] == "adding the rule deny Bash 'rm -rf /' for all agents"
    assert action["via"] == "cli" and action["message"].endswith(outcome)
    again = run_cli("interrupted", "--root", str(project))
    assert again.stdout.strip() == "No action was cut short."


def test_an_action_that_ends_done_or_refused_leaves_no_record(project: Path) -> None:
    permissions = Permissions(Project(project))
    permissions.add_rule("allow", "Bash", "make", None)
    with pytest.raises(RuneError):
        permissions.remove_rule("r-0000000000")
    assert not list((ProjectPaths(project).state / "actions").iterdir())


def test_an_action_still_under_way_is_not_reported(project: Path) -> None:
    journal = Journal(ProjectPaths(project))
    from datetime import UTC, datetime

    with journal.action("rule", "adding a rule", [project / "x"], datetime.now(UTC)):
        assert journal.interrupted() == []
