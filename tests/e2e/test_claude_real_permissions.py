"""The real Claude Code binary's permission prompts decided from the console: a Bash call
denied in the modal with a reason (the pane says so, the model is told), one allowed with
``runeconsole permissions decide`` (the command runs), and one nobody decides in time
(Claude Code's own dialog appears). Skipped, saying why, where the binary is missing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.claude.permissions.service import Permissions
from runeconsole.services.project import Project
from runeconsole.tui.console.app import create_app
from runeconsole.tui.modals.permission_modal import PermissionModal
from runeconsole.tui.panes.permissions_pane import LocalPermissionsPane
from tests.support.claude import in_thread, install
from tests.support.claude_api import text_turn, tool_turn
from tests.support.claude_binary import BASH_INPUT, ClaudeSession, binary, new_project
from tests.support.cli import cli_env
from tests.support.polling import until

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]

DENIED_INPUT = {"command": "rm -rf src", "description": "Remove the sources"}
LATE_INPUT = {"command": "touch too-late", "description": "Make another file"}


def say_yes(session: ClaudeSession) -> None:
    """Yes in Claude Code's own dialog (a key that lands while the dialog is still being
    drawn is dropped: pressed again until the dialog is gone)."""
    for _ in range(5):
        session.keys("Enter")
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and "Do you want to proceed" in session.screen():
            time.sleep(0.1)
        if "Do you want to proceed" not in session.screen():
            break
    session.wait_screen("Made it")


def decide(root: Path, request_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runeconsole", "permissions", "decide", request_id, *args,
         "--root", str(root)],
        capture_output=True, text=True, timeout=60, env=cli_env(), check=False,
    )  # fmt: skip


async def test_its_permission_prompts_are_decided_from_the_console(tmp_path: Path) -> None:
    root, home = new_project(tmp_path)
    (root / "src").mkdir()
    (root / "src" / "keep.py").write_text("kept = True\n")
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  claude:\n    permission_wait_seconds: 6\n"
    )
    assert install(root).returncode == 0
    script = [
        tool_turn("Bash", DENIED_INPUT),
        tool_turn("Bash", BASH_INPUT),
        tool_turn("Bash", LATE_INPUT),
        text_turn("All done."),
    ]
    app = create_app(root, rescan_seconds=60)
    async with app.run_test(size=(120, 34)) as pilot:
        await until(pilot, lambda: app.presence.held)
        pane = app.query_one(LocalPermissionsPane)

        def waiting() -> list:
            return [r for r in pane.records.values() if r.open]

        with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
            await in_thread(session.ready)
            await in_thread(lambda: session.type("Tidy up the project."))
            # 1. denied in the modal, with a reason the model receives
            await until(pilot, lambda: len(waiting()) == 1)
            assert waiting()[0].subject == "rm -rf src"
            await pilot.press("a")
            await until(pilot, lambda: isinstance(app.screen, PermissionModal))
            await pilot.press("t", *"keep the sources", "enter")
            screen = str(
                await in_thread(lambda: session.wait_screen("Denied by PermissionRequest hook"))
            )
            assert "keep the sources" in screen, screen
            requests = session.api.wait_for_requests(2, timeout=30)
            told = json.dumps(requests[1]["messages"][-1])
            assert "keep the sources" in told and '"is_error": true' in told, told
            assert (root / "src" / "keep.py").exists()
            # 2. allowed with the CLI: the command runs
            await until(pilot, lambda: len(waiting()) == 1)
            (allowed,) = waiting()
            assert allowed.subject == BASH_INPUT["command"]
            said = await in_thread(lambda: decide(root, allowed.id, "--allow"))
            assert said.returncode == 0, said.stderr  # type: ignore[union-attr]
            await until(pilot, lambda: (root / "made-by-bash").exists())
            # 3. nobody decides within the wait: Claude Code asks in its own dialog
            await until(pilot, lambda: len(waiting()) == 1)
            await until(pilot, lambda: not waiting(), timeout=30)  # the wait ran out
            await in_thread(lambda: session.wait_screen("Do you want to proceed", timeout=30))
            assert not (root / "too-late").exists()
            session.keys("Escape")
        records = {r.subject: r for r in Permissions(Project(root)).history()}
        assert records["rm -rf src"].outcome == "denied by operator: keep the sources"
        assert records[BASH_INPUT["command"]].decision["via"] == "cli"  # type: ignore[index]
        late = records[LATE_INPUT["command"]]
        assert late.decided_by == "nobody" and "nobody answered within 6s" in late.outcome
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()


def test_with_no_console_open_its_own_dialog_appears_and_the_fall_through_is_recorded(
    tmp_path: Path,
) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    script = [tool_turn("Bash", BASH_INPUT), text_turn("Made it.")]
    with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
        session.ready()
        session.type("Make the file.")
        session.wait_screen("Do you want to proceed")
        say_yes(session)
    assert (root / "made-by-bash").exists()
    (record,) = Permissions(Project(root)).history()
    assert record.decided_by == "nobody" and "no console was open" in record.outcome
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()


async def test_answered_in_its_own_dialog_the_request_closes_in_the_console(
    tmp_path: Path,
) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    script = [tool_turn("Bash", BASH_INPUT), text_turn("Made it.")]
    app = create_app(root, rescan_seconds=60)
    async with app.run_test(size=(120, 34)) as pilot:
        await until(pilot, lambda: app.presence.held)
        pane = app.query_one(LocalPermissionsPane)
        with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
            await in_thread(session.ready)
            await in_thread(lambda: session.type("Make the file."))
            await until(pilot, lambda: any(r.open for r in pane.records.values()))
            # Claude Code shows its dialog while the hook waits; answered there, it runs.
            await in_thread(lambda: session.wait_screen("Do you want to proceed"))
            await in_thread(lambda: say_yes(session))
            await until(pilot, lambda: not any(r.open for r in pane.records.values()), 20)
        (record,) = Permissions(Project(root)).history()
        assert "answered in Claude Code's own dialog" in record.outcome
    assert (root / "made-by-bash").exists()
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()
