"""Arc checkpoints as the Rune plugin writes them today: schema v20, today's PHASE_ORDER,
phases it may add, a newer schema, a symlinked config dir, and whose pid a claim records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.adapters.claude_process import is_claude_code
from runeconsole.core.pids import ancestors
from runeconsole.core.validate import real_path
from runeconsole.services.checkpoints import PHASE_ORDER, SCHEMA_VERSION, Checkpoints
from runeconsole.services.project import Project
from runeconsole.tui.panes.suspended_pane import phase_strip
from tests.interop import rune_writers
from tests.interop.rune_writers import arc_checkpoint
from tests.support.cli import cli_env
from tests.support.suspended import dead_pid

ARC = "arc-1771000000000"


@pytest.fixture
def chome(private_claude_config: Path) -> str:
    """The Claude config dir as the plugin records it (``pwd -P``)."""
    return str(real_path(private_claude_config))


def resume(cli: Callable, root: Path, *extra: str) -> tuple[int, dict]:
    result = cli(
        "checkpoint", "resume", "--session-pid", "4242", "--json", *extra, "--root", str(root)
    )
    return result.code, json.loads(result.out) if result.out else {}


def test_runeconsole_iterates_the_plugins_phase_order_of_today() -> None:
    assert PHASE_ORDER == rune_writers.PHASE_ORDER
    assert SCHEMA_VERSION == 20


def test_a_v20_checkpoint_resumes_and_stays_v20(project: Path, cli, chome: str) -> None:
    path = arc_checkpoint(
        project, ARC, config_dir=chome, owner_pid=str(dead_pid()),
        phases={"forge": {"status": "completed"}},
    )  # fmt: skip

    code, plan = resume(cli, project)

    assert code == 0, plan
    assert (plan["action"], plan["resume_from"]) == ("resume", "plan_review")
    assert not any(change.startswith("migrate") for change in plan["changes"])
    saved = json.loads(path.read_text())
    assert saved["schema_version"] == 20
    assert saved["todos_base"] == f"tmp/arc/{ARC}/todos/"
    assert saved["owner_pid"] == 4242 and saved["config_dir"] == chome


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        ("absent", f"tmp/arc/{ARC}/todos/"),
        (None, f"tmp/arc/{ARC}/todos/"),
        ("tmp/arc/elsewhere/todos/", "tmp/arc/elsewhere/todos/"),
    ],
)
def test_v19_to_v20_sets_todos_base_unless_it_has_one(
    project: Path, cli, chome: str, recorded: str | None, expected: str
) -> None:
    path = arc_checkpoint(
        project, ARC, config_dir=chome, owner_pid=str(dead_pid()), schema_version=19
    )
    checkpoint = json.loads(path.read_text())
    if recorded == "absent":
        del checkpoint["todos_base"]
    else:
        checkpoint["todos_base"] = recorded
    path.write_text(json.dumps(checkpoint))

    code, plan = resume(cli, project)

    assert code == 0, plan
    assert [c for c in plan["changes"] if c.startswith("migrate")] == [
        f"migrate v19 -> v20: set todos_base = {expected!r}"
        if recorded != "tmp/arc/elsewhere/todos/"
        else "migrate v19 -> v20: no change"
    ]
    saved = json.loads(path.read_text())
    assert (saved["schema_version"], saved["todos_base"]) == (20, expected)


def test_phases_the_order_does_not_know_are_shown_not_hidden(
    project: Path, cli, chome: str
) -> None:
    arc_checkpoint(
        project, ARC, config_dir=chome, owner_pid=str(dead_pid()),
        phases={"quantum_review": {"status": "pending", "artifact": None}},
    )  # fmt: skip

    listed = cli("checkpoint", "list", "--json", "--root", str(project)).json()
    table = cli("checkpoint", "list", "--root", str(project)).out

    [plan] = listed
    unknown = [p for p in plan["phases"] if not p["known"]]
    assert unknown == [
        {"name": "quantum_review", "status": "pending", "demoted": False, "tracked": True,
         "known": False, "retired": False}
    ]  # fmt: skip
    assert any("quantum_review" in w and "PHASE_ORDER" in w for w in plan["warnings"])
    assert "not in PHASE_ORDER: quantum_review" in table
    [resumable] = Checkpoints(Project(project), session_pid=1).list()
    strip = phase_strip(resumable).plain
    assert strip.endswith("+○") and len(strip) == len(PHASE_ORDER) + 2


def test_a_newer_schema_stays_listed_read_only_and_is_never_rewritten(
    project: Path, cli, chome: str
) -> None:
    path = arc_checkpoint(
        project, ARC, config_dir=chome, owner_pid=str(dead_pid()), schema_version=21
    )
    before = path.read_bytes()

    [listed] = cli("checkpoint", "list", "--json", "--root", str(project)).json()
    table = cli("checkpoint", "list", "--root", str(project)).out
    code, _ = resume(cli, project)
    refused = cli("checkpoint", "resume", "--session-pid", "4242", "--root", str(project))

    assert listed["action"] == "newer" and listed["from_version"] == 21
    assert "newer than this runeconsole" in listed["message"]
    assert [p["name"] for p in listed["phases"]][: len(PHASE_ORDER)] == list(PHASE_ORDER)
    assert "newer" in table
    assert code == 1 and refused.code == 1 and "newer" in refused.err
    assert path.read_bytes() == before


# -- a symlinked config dir -------------------------------------------------------------------


@pytest.mark.parametrize("recorded_as", ["resolved", "the link"])
def test_a_symlinked_config_dir_is_the_same_config_dir(
    project: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded_as: str
) -> None:
    real = tmp_path / "real-claude"
    real.mkdir()
    link = tmp_path / "link-claude"
    link.symlink_to(real)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(link))
    recorded = str(real) if recorded_as == "resolved" else str(link)  # Rune: `pwd -P`
    path = arc_checkpoint(project, ARC, config_dir=recorded, owner_pid=str(dead_pid()))

    code, plan = resume(cli, project)

    assert code == 0, plan
    assert json.loads(path.read_text())["config_dir"] == str(real)  # recorded as Rune does


def test_another_config_dir_is_still_refused(project: Path, cli, tmp_path: Path) -> None:
    other = tmp_path / "other-claude"
    other.mkdir()
    path = arc_checkpoint(project, ARC, config_dir=str(other), owner_pid=str(dead_pid()))
    before = path.read_bytes()
    code, _ = resume(cli, project)
    assert code == 1 and path.read_bytes() == before


# -- whose pid a claim records -----------------------------------------------------------------


def test_the_claim_records_the_claude_code_session_not_the_short_lived_shell(
    project: Path, chome: str, tmp_path: Path
) -> None:
    """Claude Code's Bash tool runs each command in a shell of its own: the nearest
    ``claude`` above that shell is the session, and its pid is what the claim records."""
    path = arc_checkpoint(project, ARC, config_dir=chome, owner_pid=str(dead_pid()))
    out, pid_file = tmp_path / "resume.json", tmp_path / "claude.pid"
    claude = tmp_path / "bin" / "claude"  # a process named claude, as Claude Code names itself
    claude.parent.mkdir()
    command = f"{sys.executable} -m runeconsole checkpoint resume --json --root {project} > {out}"
    claude.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nsh -c '{command}; true'\n")
    claude.chmod(0o755)

    subprocess.run([str(claude)], env=cli_env(), timeout=120, check=True)

    session = int(pid_file.read_text())
    plan = json.loads(out.read_text())
    assert (plan["session_pid"], plan["session_pid_found_by"]) == (session, "claude")
    assert json.loads(path.read_text())["owner_pid"] == session
    assert not any("Claude Code process" in w for w in plan["warnings"])


@pytest.mark.e2e
def test_without_claude_code_above_the_parent_is_claimed_and_the_json_says_so(
    project: Path, chome: str, run_cli
) -> None:
    if any(is_claude_code(pid) for pid in [os.getpid(), *ancestors(os.getpid())]):
        pytest.skip("the tests themselves run under Claude Code")
    arc_checkpoint(project, ARC, config_dir=chome, owner_pid=str(dead_pid()))

    result = run_cli("checkpoint", "resume", "--json", "--root", str(project))

    plan = json.loads(result.stdout)
    assert result.returncode == 0, result.stderr
    assert (plan["session_pid"], plan["session_pid_found_by"]) == (os.getpid(), "parent")
    assert any("no Claude Code process above this command" in w for w in plan["warnings"])


def test_a_given_session_pid_wins(project: Path, cli, chome: str) -> None:
    arc_checkpoint(project, ARC, config_dir=chome, owner_pid=str(dead_pid()))
    _, plan = resume(cli, project)
    assert (plan["session_pid"], plan["session_pid_found_by"]) == (4242, "given")
