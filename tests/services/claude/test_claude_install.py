"""``runeconsole claude install|uninstall|status``: our hook entries merged into Claude
Code's settings files without disturbing anything else in them."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge.presence import ConsolePresence
from runeconsole.services.claude.install.install import HOOK_EVENTS, hook_command, is_ours
from tests.support.cli import CliResult

THEIRS = {
    "permissions": {"allow": ["Bash(git status)"]},
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}
        ],
        "TeammateIdle": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
}


def local(project: Path) -> Path:
    return project / ".claude" / "settings.local.json"


def write(path: Path, data: object) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = (json.dumps(data, indent=4) + "\n").encode()
    path.write_bytes(raw)
    return raw


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak-*"))


def test_install_merges_ours_and_keeps_every_other_key_and_hook(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    path = local(project)
    before = write(path, THEIRS)
    result = cli("claude", "install", "--root", str(project))
    assert result.code == 0, result.err
    data = json.loads(path.read_text())
    assert data["permissions"] == THEIRS["permissions"] and data["model"] == "opus"
    assert data["hooks"]["TeammateIdle"] == THEIRS["hooks"]["TeammateIdle"]
    pre = data["hooks"]["PreToolUse"]
    assert pre[0] == THEIRS["hooks"]["PreToolUse"][0]  # theirs first, where it was
    assert pre[1] == {
        "matcher": "*",
        "hooks": [{"type": "command", "command": hook_command(), "timeout": 3600}],
    }
    assert set(data["hooks"]) == {event for event, _, _ in HOOK_EVENTS} | {"TeammateIdle"}
    (backup,) = backups(path)
    assert backup.read_bytes() == before
    assert "the previous file is kept as" in result.out


def test_a_second_install_changes_no_byte_and_keeps_no_second_backup(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    write(local(project), THEIRS)
    cli("claude", "install", "--root", str(project))
    after_first = local(project).read_bytes()
    # Whatever the user adds after ours stays after it, untouched, on the next install.
    data = json.loads(after_first)
    data["hooks"]["PreToolUse"].append(
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "lint"}]}
    )
    local(project).write_text(json.dumps(data, indent=2) + "\n")
    edited = local(project).read_bytes()
    result = cli("claude", "install", "--root", str(project))
    assert result.code == 0 and "nothing changed" in result.out
    assert local(project).read_bytes() == edited
    assert len(backups(local(project))) == 1


def test_uninstall_takes_out_exactly_ours(project: Path, cli: Callable[..., CliResult]) -> None:
    write(local(project), THEIRS)
    cli("claude", "install", "--root", str(project))
    assert cli("claude", "uninstall", "--root", str(project)).code == 0
    assert json.loads(local(project).read_text()) == THEIRS
    again = cli("claude", "uninstall", "--root", str(project))
    assert again.code == 0 and "not installed" in again.out


def test_uninstall_from_a_file_that_only_held_ours_leaves_an_empty_object(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    cli("claude", "install", "--root", str(project))
    assert not backups(local(project))  # nothing was there to keep
    cli("claude", "uninstall", "--root", str(project))
    assert json.loads(local(project).read_text()) == {}


def test_an_old_entry_of_ours_is_replaced_in_place(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    old = "/old/venv/bin/runeconsole claude hook"
    assert is_ours(old) and not is_ours("~/bin/guard.sh") and not is_ours("claude hook")
    write(local(project), {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": old}]}]}})
    cli("claude", "install", "--root", str(project))
    stop = json.loads(local(project).read_text())["hooks"]["Stop"]
    assert stop == [{"hooks": [{"type": "command", "command": hook_command(), "timeout": 30}]}]


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b'{"hooks": []}', b'{"hooks": {"Stop": {}}}', b"\xff\xfe"],
)
def test_a_malformed_file_is_refused_and_left_untouched(
    project: Path, cli: Callable[..., CliResult], content: bytes
) -> None:
    path = local(project)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    for action in ("install", "uninstall"):
        result = cli("claude", action, "--root", str(project))
        assert result.code == 2, result.err
        assert str(path) in result.err and "nothing was changed" in result.err
    assert path.read_bytes() == content
    assert not backups(path)


def test_dry_run_prints_the_result_and_changes_nothing(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    before = write(local(project), THEIRS)
    result = cli("claude", "install", "--dry-run", "--root", str(project))
    assert result.code == 0
    printed = json.loads(result.out)
    assert printed["model"] == "opus" and "SessionEnd" in printed["hooks"]
    assert local(project).read_bytes() == before and not backups(local(project))


def test_project_and_user_scopes(
    project: Path, cli: Callable[..., CliResult], private_claude_config: Path
) -> None:
    assert cli("claude", "install", "--scope", "project", "--root", str(project)).code == 0
    assert (project / ".claude" / "settings.json").exists()
    assert cli("claude", "install", "--scope", "user", "--root", str(project)).code == 0
    user = private_claude_config / "settings.json"
    assert "SessionStart" in json.loads(user.read_text())["hooks"]
    status = cli("claude", "status", "--json", "--root", str(project)).json()
    by_scope = {row["scope"]: row for row in status["scopes"]}  # type: ignore[index]
    assert by_scope["local"]["events"] == []
    assert by_scope["project"]["complete"] and by_scope["project"]["current"]
    assert by_scope["user"]["path"] == str(user) and by_scope["user"]["complete"]
    assert status["console_open"] is False  # type: ignore[index]


def test_status_says_which_scopes_have_the_hooks_and_whether_a_console_is_open(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    cli("claude", "install", "--root", str(project))
    text = cli("claude", "status", "--root", str(project)).out
    assert (
        f"installed ({len(HOOK_EVENTS)} of {len(HOOK_EVENTS)} events)" in text
        and "not installed" in text
    )
    assert "console: not open" in text
    presence = ConsolePresence(ProjectPaths(project))
    assert presence.try_hold()
    try:
        status = cli("claude", "status", "--json", "--root", str(project)).json()
        assert status["console_open"] is True  # type: ignore[index]
        assert status["console_pid"] == os.getpid()  # type: ignore[index]
    finally:
        presence.release()


def test_no_worktree_event_is_hooked_so_claude_code_keeps_making_its_own_worktrees() -> None:
    # A WorktreeCreate hook replaces Claude Code's own `git worktree add` (its documented use:
    # other version control); ours would take `claude --worktree` and `/batch` away from it.
    # Their worktrees are read from git instead (`runeconsole worktrees`).
    events = {event for event, _, _ in HOOK_EVENTS}
    assert not events & {"WorktreeCreate", "WorktreeRemove"}
