"""Sub-agent output gates."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.outputs import (
    HARD_FAIL,
    PASS,
    SENTINEL,
    SOFT_CONTINUE,
    check_file,
    session_dir_from_live_state,
    verify,
)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "session"
    path.mkdir()
    (path / "plan-researcher.md").write_text(f"findings\n{SENTINEL}\n")
    (path / "plan-critic.md").write_text("half written, no sentinel\n")
    (path / "retro-expert.md").write_text("")
    return path


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (f"a\n{SENTINEL}\n", None),
        (f"a\n{SENTINEL}", None),
        (f"{SENTINEL}\r\n", None),
        (f"a\r\n{SENTINEL}\r\n", None),
        # the gate wants "the exact line <!-- AGENT_COMPLETE --> as the last line"
        (f"a\n{SENTINEL}\n\n  \n", "not the exact last line"),
        (f"a\n{SENTINEL}\n\n", "not the exact last line"),
        (f"a\n{SENTINEL}  \n", "not the exact last line"),
        (f"a\n  {SENTINEL}\n", "not the exact last line"),
        ("", "empty"),
        ("\n \n", "empty"),
        ("a\n", "incomplete"),
        (f"{SENTINEL}\nmore after\n", "incomplete"),
        (f"a {SENTINEL}\n", "incomplete"),
        ("x" * 10000 + f"\n{SENTINEL}\n", None),
    ],
)
def test_file_validity(tmp_path: Path, content: str, problem: str | None) -> None:
    path = tmp_path / "out.md"
    path.write_text(content)
    result = check_file(path)
    assert (result is None) if problem is None else (problem in result)


def test_missing_and_directory(tmp_path: Path) -> None:
    assert check_file(tmp_path / "nope.md") == "missing"
    assert check_file(tmp_path) == "is a directory, not a file"
    (tmp_path / "pipe.md").unlink(missing_ok=True)
    os.mkfifo(tmp_path / "pipe.md")
    assert check_file(tmp_path / "pipe.md") == "not a regular file"
    (tmp_path / "sub").mkdir()
    result = verify(tmp_path, ["sub"], [])
    assert result.checks[0].problem == "is a directory, not a file"
    assert "sub: is a directory" in "\n".join(result.lines())


def test_pass_when_everything_is_complete(session: Path) -> None:
    result = verify(session, ["plan-researcher.md"], [])
    assert result.gate == PASS and result.exit_code == 0 and result.relaunch == []


def test_hard_fail_on_an_invalid_critical_output(session: Path) -> None:
    result = verify(session, ["plan-researcher.md", "plan-critic.md"], ["retro-expert.md"])
    assert result.gate == HARD_FAIL and result.exit_code == 1
    assert result.relaunch == ["plan-critic.md", "retro-expert.md"]
    lines = result.lines()
    assert lines[-1] == "PERSISTENCE_GATE=HARD_FAIL"
    assert f"INVALID (critical): {session / 'plan-critic.md'}" in lines[0]
    assert "RELAUNCH: plan-critic.md retro-expert.md" in lines


def test_soft_continue_with_an_omission_note(session: Path) -> None:
    result = verify(session, ["plan-researcher.md"], ["retro-expert.md", "absent.md"])
    assert result.gate == SOFT_CONTINUE and result.exit_code == 0
    lines = result.lines()
    assert lines[-1] == "PERSISTENCE_GATE=SOFT_CONTINUE"
    assert any(
        li.startswith("WARNING: optional outputs omitted: retro-expert.md, absent.md")
        for li in lines
    )


@pytest.mark.parametrize("name", ["../x.md", "a/b.md", ".hidden", "", "a\0b"])
def test_names_must_be_plain_file_names(session: Path, name: str) -> None:
    with pytest.raises(InvalidInput):
        verify(session, [name], [])


def test_no_names_and_missing_dir(session: Path) -> None:
    with pytest.raises(InvalidInput):
        verify(session, [], [])
    with pytest.raises(RuneError, match="does not exist"):
        verify(session / "nope", ["a.md"], [])


def test_session_dir_from_live_state(project: Path) -> None:
    with pytest.raises(RuneError, match="unreadable"):
        session_dir_from_live_state(project)
    (project / ".cwf").mkdir()
    state = project / ".cwf/cwf-state.yaml"
    state.write_text("live:\n  dir: .cwf/projects/260226-01-plan\n  phase: plan\n")
    assert session_dir_from_live_state(project) == project / ".cwf/projects/260226-01-plan"
    state.write_text("live: {}\n")
    with pytest.raises(RuneError, match=r"live\.dir is not set"):
        session_dir_from_live_state(project)
    state.write_text("live: [\n")
    with pytest.raises(RuneError, match="not valid YAML"):
        session_dir_from_live_state(project)


def test_cli(project: Path, cli: Callable[..., object]) -> None:
    session = project / ".cwf/projects/s1"
    session.mkdir(parents=True)
    (session / "a.md").write_text(f"x\n{SENTINEL}\n")
    (project / ".cwf/cwf-state.yaml").write_text("live:\n  dir: .cwf/projects/s1\n")
    ok = cli(
        "outputs", "verify", "--root", str(project), "--critical", "a.md", "--optional", "b.md"
    )
    assert ok.code == 0 and ok.out.splitlines()[-1] == "PERSISTENCE_GATE=SOFT_CONTINUE"
    bad = cli(
        "outputs", "verify", str(session), "--critical", "a.md", "--critical", "c.md", "--json"
    )
    assert bad.code == 1
    assert bad.json()["gate"] == "HARD_FAIL" and bad.json()["relaunch"] == ["c.md"]
    assert cli("outputs", "verify", str(session), "--critical", "../a.md").code == 2
