"""Reviewing the work of the real Claude Code binary (pinned in .ci/claude-code-version),
in tmux on its own branch in a worktree, against the Messages-API stand-in: scripted
Write and Edit calls change files, the Agents pane shows its ``+N −M``, the review shows
the diff, and a comment sent from the review reaches the model as the user's message.
Skipped, saying why, where the binary is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.records import CHANGES_REQUESTED, ReviewRecords
from runeconsole.tui.console.app import create_app
from runeconsole.tui.modals.confirm import ConfirmScreen
from runeconsole.tui.review.diff_view import DiffView
from runeconsole.tui.review.screen import ReviewScreen
from tests.e2e.test_claude_real_reply import recorded_pane, user_texts
from tests.support.claude import in_thread, install
from tests.support.claude_api import edit_turn, text_turn, tool_turn, write_turn
from tests.support.claude_binary import ClaudeSession, binary, new_project
from tests.support.merge_queue import git
from tests.support.polling import until
from tests.support.review import commit

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]

GREET = "def greet(name):\n    return 'hi ' + name\n"


def changes_cell(app, key: str) -> str:
    table = app.agents_pane.table
    return str(table.get_cell(key, "changes")) if table.has(key) else ""


def claude_key(root: Path) -> str | None:
    return next((r.key for r in Registry(Project(root)).list() if r.get("role") == "claude"), None)


async def test_a_sessions_edits_are_reviewed_and_a_comment_reaches_the_model(
    tmp_path: Path,
) -> None:
    root, home = new_project(tmp_path)
    (root / ".git" / "info" / "exclude").write_text(".claude/\n")
    commit(root, {"notes.txt": "alpha\nbeta\n"}, "notes on main")
    (root / ".claude").mkdir()
    (root / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  review:\n    refresh_seconds: 1\n"
    )
    worktree = tmp_path / "wt"
    git(root, "worktree", "add", "--quiet", "-b", "feat-greet", str(worktree), "main")
    commit(worktree, {"plan.md": "# greet\n"}, "plan the greeting")  # earlier work: ahead 1
    assert install(worktree).returncode == 0
    notes = str(worktree / "notes.txt")
    script = [
        write_turn(str(worktree / "greet.py"), GREET),
        tool_turn("Read", {"file_path": notes}),
        edit_turn(notes, "beta", "beta, edited"),
        text_turn("Wrote greet.py and edited notes.txt."),
        text_turn("Understood: an f-string it is."),
    ]
    app = create_app(root, rescan_seconds=60)
    async with app.run_test(size=(160, 40)) as pilot:
        with ClaudeSession(worktree, home, script, "--permission-mode", "acceptEdits") as session:
            await in_thread(lambda: session.wait_screen("accept edits on", timeout=60))
            await in_thread(lambda: session.type("Write the greeting."))
            await in_thread(lambda: session.wait_screen("Wrote greet.py"))
            await until(pilot, lambda: claude_key(root) is not None)
            key = claude_key(root)
            ready = "● +4 −1 3f"  # its turn over, its branch ahead of main: ready
            await until(pilot, lambda: changes_cell(app, key) == ready)
            await until(pilot, lambda: recorded_pane(root).get("pane"))
            app.agents_pane.select(key)
            await pilot.press("d")
            await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.loads)
            screen = app.screen
            diff = screen.document.diff
            assert [f.path for f in diff.files] == ["greet.py", "notes.txt", "plan.md"]
            assert diff.file("greet.py").lines[1:] == [
                "+def greet(name):",
                "+    return 'hi ' + name",
            ]
            assert "+beta, edited" in diff.file("notes.txt").lines
            rows = screen.document.rows
            screen.query_one(DiffView).move_to(
                next(n for n, r in enumerate(rows) if r[1] == "    return 'hi ' + name")
            )
            await pilot.press("c", *"Use an f-string here.", "enter")
            await until(pilot, lambda: len(screen.comments) == 1)
            await pilot.press("S")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            requests = await in_thread(lambda: session.api.wait_for_requests(5, timeout=60))
            told = "\n".join(user_texts(requests[-1]))
            assert "1. greet.py:2\n   >     return 'hi ' + name\n   Use an f-string here." in told
            await in_thread(lambda: session.wait_screen("an f-string it is"))
    [review] = ReviewRecords(Project(root)).history(key)
    assert review.verdict == CHANGES_REQUESTED and "Use an f-string here." in review.get("prompt")
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()
