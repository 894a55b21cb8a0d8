"""``Background.sync`` on what ``claude agents --json --all`` says, with a double of
Claude Code's command line (the real one is driven in tests/e2e/test_claude_background.py;
here, the cases it cannot stage at will: a session no hook told of, one that ended with
no hook to say so, one of another project, and Claude Code's output malformed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from runeconsole.adapters.claude_cli import ClaudeCli
from runeconsole.adapters.terminal_screen import plain, replay
from runeconsole.core.errors import RuneError
from runeconsole.services.claude.background.sessions import Background
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry


class Listed(ClaudeCli):
    """Claude Code's command line answering ``agents --json --all`` with ``entries``."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        super().__init__("claude")
        self.entries = entries

    def sessions(self, cwd: Path | None = None) -> list[dict[str, Any]]:
        return self.entries


def entry(root: Path, short: str, **more: Any) -> dict[str, Any]:
    return {
        "pid": os.getpid(),  # a process that runs
        "id": short,
        "cwd": str(root),
        "kind": "background",
        "startedAt": 1795636769097,
        "sessionId": f"{short}-95de-4339-b885-227c5e801e71",
        "name": "working",
        "status": "idle",
        "state": "working",
        **more,
    }


def test_a_session_no_hook_told_of_is_registered_and_one_gone_is_terminated(
    project: Path,
) -> None:
    cli = Listed([entry(project, "9580fa2c"), entry(project / "sub", "0badc0de", pid=None)])
    (project / "sub").mkdir()
    background = Background(Project(project), cli=cli)
    report = background.sync()
    assert report.registered == ["claude-project-9580fa2c"]  # the stopped one is not
    record = Registry(Project(project)).get("claude-project-9580fa2c")
    assert (record.get("kind"), record.get("background_id")) == ("background", "9580fa2c")
    assert (record.get("session_name"), record.get("background_state")) == ("working", "working")
    assert record.metadata["found_by"] == "claude agents"
    assert background.sync().registered == []  # known now: kept, not registered again
    cli.entries = [entry(project, "9580fa2c", pid=None, state="stopped")]
    report = background.sync()
    assert report.ended == ["claude-project-9580fa2c"]
    record = Registry(Project(project)).get("claude-project-9580fa2c")
    assert record.status == "terminated"
    assert "background session 9580fa2c stopped" in record.metadata["terminated_reason"]
    cli.entries = []
    assert background.sync().ended == []  # once


def test_a_session_of_another_project_is_not_ours(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cli = Listed([entry(elsewhere, "9580fa2c"), {"kind": "interactive", "pid": 1}])
    report = Background(Project(project), cli=cli).sync()
    assert report.sessions == [] and report.registered == []


def test_a_background_agent_with_no_session_any_more_says_gone(project: Path) -> None:
    registry = Registry(Project(project))
    registry.register("worker", "parser", worktree=str(project))
    registry.update("worker-parser", {"kind": "background", "background_id": "0badc0de"})
    report = Background(Project(project), cli=Listed([])).sync()
    assert report.ended == ["worker-parser"]
    reason = registry.get("worker-parser").metadata["terminated_reason"]
    assert reason == "Claude Code background session 0badc0de gone"


def test_an_agent_that_is_no_background_session_is_refused(project: Path) -> None:
    registry = Registry(Project(project))
    registry.register("worker", "parser", worktree=str(project))
    with pytest.raises(RuneError, match="not a Claude Code background session"):
        Background(Project(project), cli=Listed([])).logs("worker-parser")


def test_a_short_id_is_the_only_thing_put_on_claudes_command_line(project: Path) -> None:
    with pytest.raises(RuneError, match="not a background session's short id"):
        ClaudeCli("claude").stop("--all")


def test_a_logs_replay_puts_each_write_where_the_cursor_moves_it() -> None:
    output = (
        "\x1b[2J\x1b[H\n\x1b[1B\x1b[38;2;215;119;87m ▐▛█\x1b[12G\x1b[1mClaude Code\n"
        "\x1b[3B\x1b[48;2;55;55;55m❯ Say hello\x1b[49m\n\x1b[H\n\x1b[6B● Hello."
    )
    lines = replay(output, width=40, height=10)
    assert plain(lines).splitlines() == [
        "",
        " ▐▛█       Claude Code",
        "",
        "",
        "❯ Say hello",
        "",
        "● Hello.",
    ]
    bold = [span for span in lines[1] if span.text == "Claude Code"]
    assert bold and bold[0].bold and bold[0].fg == "d77757"
