"""The `agents` / `agent` CLI contract that scripts rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.core.files import atomic_write_bytes


def test_register_heartbeat_crash_terminate_roundtrip(project: Path, cli) -> None:
    root = ("--root", str(project))
    result = cli(
        "agent",
        "register",
        "--role",
        "worker",
        "--name",
        "parser",
        "--pid",
        "7",
        "--tmux-session",
        "rune-worker-parser",
        "--node-id",
        "n1",
        *root,
    )
    assert result.code == 0 and "registered worker-parser" in result.out
    assert cli("agent", "heartbeat", "worker-parser", *root).code == 0
    listed = cli("agents", "--json", *root).json()
    [agent] = listed
    assert agent["key"] == "worker-parser"
    assert agent["liveness"] == "green"
    assert isinstance(agent["age_seconds"], float)
    assert agent["pid"] == 7 and agent["node_id"] == "n1"
    assert cli("agent", "crash", "worker-parser", "--reason", "oom", *root).code == 0
    again = cli("agent", "crash", "worker-parser", *root)
    assert again.code == 0 and "nothing changed" in again.out
    [agent] = cli("agents", "--json", *root).json()
    assert (agent["status"], agent["liveness"]) == ("crashed", "red")
    assert cli("agent", "terminate", "worker-parser", "--json", *root).json()["liveness"] == "grey"


@pytest.mark.parametrize("name", ["../x", "a/b", "", "x;rm -rf ~", "$(id)", "a b"])
def test_bad_names_exit_2_and_write_nothing(project: Path, cli, name: str) -> None:
    result = cli("agent", "register", "--role", "worker", "--name", name, "--root", str(project))
    assert result.code == 2
    assert "not allowed" in result.err or "must not be empty" in result.err
    assert "Traceback" not in result.err
    assert not (project / ".claude").exists()
    bad_key = cli("agent", "heartbeat", name or "-", "--root", str(project))
    assert bad_key.code in (1, 2) and "Traceback" not in bad_key.err


def test_unreadable_file_is_listed_not_fatal(project: Path, cli) -> None:
    cli("agent", "register", "--role", "worker", "--name", "ok", "--root", str(project))
    identities = project / ".claude" / "state" / "identities"
    atomic_write_bytes(identities / "worker-torn.json", b'{"status": "act')
    result = cli("agents", "--json", "--root", str(project))
    assert result.code == 0
    torn = next(a for a in result.json() if a["key"] == "worker-torn")
    assert torn["liveness"] == "red" and "not valid JSON" in torn["error"]
    table = cli("agents", "--root", str(project))
    assert table.code == 0 and "unreadable: not valid JSON" in table.out


def test_stale_only(project: Path, cli) -> None:
    identities = project / ".claude" / "state" / "identities"
    for name, seen in (("old", "2020-01-01T00:00:00Z"), ("new", "2999-01-01T00:00:00Z")):
        body = {"role": "worker", "name": name, "status": "active", "last_heartbeat": seen}
        atomic_write_bytes(identities / f"worker-{name}.json", json.dumps(body).encode())
    stale = cli("agents", "--json", "--stale-only", "--root", str(project)).json()
    assert [a["key"] for a in stale] == ["worker-old"]


def test_unknown_agent_and_missing_root(project: Path, cli, tmp_path: Path) -> None:
    result = cli("agent", "heartbeat", "worker-nobody", "--root", str(project))
    assert result.code == 1 and "register it first" in result.err
    result = cli("agents", "--root", str(tmp_path / "missing"))
    assert result.code == 2 and "no such directory" in result.err


def test_outside_a_repository_asks_for_root(tmp_path: Path, run_cli) -> None:
    result = run_cli("agents", cwd=tmp_path)
    assert result.returncode == 2 and "--root" in result.stderr


@pytest.mark.e2e
def test_root_defaults_to_git_toplevel(project: Path, run_cli) -> None:
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    run_cli("agent", "register", "--role", "worker", "--name", "w", cwd=sub)
    assert (project / ".claude" / "state" / "identities" / "worker-w.json").exists()
    assert json.loads(run_cli("agents", "--json", cwd=sub).stdout)[0]["key"] == "worker-w"


def test_a_talisman_typo_does_not_stop_heartbeats(project: Path, cli) -> None:
    root = ("--root", str(project))
    assert cli("agent", "register", "--role", "worker", "--name", "a", *root).code == 0
    atomic_write_bytes(
        project / ".claude" / "talisman.yml", b"runeconsole:\n  stale_after_seconds: 5m\n"
    )
    result = cli("agent", "heartbeat", "worker-a", *root)
    assert result.code == 0
    assert "warning:" in result.err and "stale_after_seconds is '5m'" in result.err
    atomic_write_bytes(project / ".claude" / "talisman.yml", b"runeconsole: [1, 2\n")
    result = cli("agents", *root)
    assert result.code == 0 and "not valid YAML (line 2, column 1)" in result.err


def test_a_file_where_the_state_directory_belongs_is_a_clear_error(project: Path, cli) -> None:
    (project / ".claude" / "state").mkdir(parents=True)
    (project / ".claude" / "state" / "identities").write_text("oops")
    result = cli("agents", "--root", str(project))
    assert result.code == 1 and "it should be a directory" in result.err
    result = cli("agent", "register", "--role", "worker", "--name", "a", "--root", str(project))
    assert result.code == 1 and "internal error" not in result.err, result.err


def test_the_table_names_liveness_and_stale_only_says_none_are_stale(project: Path, cli) -> None:
    root = ("--root", str(project))
    cli("agent", "register", "--role", "worker", "--name", "a", *root)
    table = cli("agents", *root).out
    assert "● green" in table  # readable without colour (a pipe, a colour-blind reader)
    stale = cli("agents", "--stale-only", *root)
    assert stale.code == 0 and "no stale agents" in stale.out
