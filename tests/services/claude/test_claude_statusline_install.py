"""``claude install`` chains the user's status line behind ours; ``uninstall`` gives it back
exactly (the whole file byte for byte, when nothing else changed since)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from runeconsole.services.claude.install.statusline_install import carried, is_ours
from tests.support.cli import CliResult

THEIRS = {"type": "command", "command": "~/bin/line.sh --short 'a b'", "padding": 0}


def local(project: Path) -> Path:
    return project / ".claude" / "settings.local.json"


def write(path: Path, raw: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw)
    return path.read_bytes()


def line(path: Path) -> dict:
    return json.loads(path.read_text())["statusLine"]


def test_install_chains_their_line_and_uninstall_puts_the_file_back_byte_for_byte(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    # Four spaces, their own key order: a layout our writer would not produce.
    before = write(
        local(project),
        '{\n    "statusLine": {"command": "~/bin/line.sh --short \'a b\'", '
        '"padding": 0, "type": "command"},\n    "model": "opus"\n}\n',
    )
    result = cli("claude", "install", "--root", str(project))
    assert result.code == 0, result.err
    assert "status line: ours, then ~/bin/line.sh --short 'a b'" in result.out
    ours = line(local(project))
    assert is_ours(ours) and ours["padding"] == 0
    flag, theirs = carried(ours)  # type: ignore[misc]
    assert flag == "--previous" and list(theirs) == ["command", "padding", "type"]
    words = shlex.split(ours["command"])
    assert words[1:6] == ["-P", "-m", "runeconsole", "claude", "statusline"]
    again = cli("claude", "install", "--root", str(project))
    assert "nothing changed" in again.out
    result = cli("claude", "uninstall", "--root", str(project))
    assert result.code == 0 and "byte for byte" in result.out
    assert local(project).read_bytes() == before


def test_what_the_user_changed_meanwhile_stays_and_their_line_comes_back(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    write(local(project), json.dumps({"statusLine": THEIRS}, indent=2) + "\n")
    cli("claude", "install", "--root", str(project))
    data = json.loads(local(project).read_text())
    data["env"] = {"FOO": "1"}  # an edit of theirs after the install
    local(project).write_text(json.dumps(data, indent=2) + "\n")
    cli("claude", "uninstall", "--root", str(project))
    assert json.loads(local(project).read_text()) == {"statusLine": THEIRS, "env": {"FOO": "1"}}


def test_without_a_line_of_theirs_ours_stands_alone_and_leaves_with_the_hooks(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    cli("claude", "install", "--root", str(project))
    ours = line(local(project))
    assert is_ours(ours) and carried(ours) is None and "padding" not in ours
    cli("claude", "uninstall", "--root", str(project))
    assert json.loads(local(project).read_text()) == {}


def test_a_line_of_a_less_specific_file_is_chained_and_left_where_it_is(
    project: Path, cli: Callable[..., CliResult], private_claude_config: Path
) -> None:
    user = private_claude_config / "settings.json"
    before = write(user, json.dumps({"statusLine": THEIRS}))
    cli("claude", "install", "--root", str(project))
    flag, theirs = carried(line(local(project)))  # type: ignore[misc]
    assert (flag, theirs) == ("--beneath", THEIRS)
    cli("claude", "uninstall", "--root", str(project))
    assert "statusLine" not in json.loads(local(project).read_text())
    assert user.read_bytes() == before


@pytest.mark.parametrize("value", ['"echo hi"', "[1]", "7"])
def test_a_status_line_that_is_not_an_object_is_refused(
    project: Path, cli: Callable[..., CliResult], value: str
) -> None:
    before = write(local(project), '{"statusLine": ' + value + "}\n")
    for action in ("install", "uninstall"):
        result = cli("claude", action, "--root", str(project))
        assert result.code == 2 and "nothing was changed" in result.err
    assert local(project).read_bytes() == before


def test_status_says_what_the_status_line_runs(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    write(local(project), json.dumps({"statusLine": THEIRS}))
    assert "the user's own" in cli("claude", "status", "--root", str(project)).out
    cli("claude", "install", "--root", str(project))
    rows = cli("claude", "status", "--json", "--root", str(project)).json()["scopes"]  # type: ignore[index]
    assert rows[0]["status_line"] == "ours, then ~/bin/line.sh --short 'a b'"
