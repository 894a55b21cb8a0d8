"""The real Claude Code binary (pinned in .ci/claude-code-version) in tmux, against the
local Messages-API stand-in, with hooks installed by ``runeconsole claude install``: its
AskUserQuestion answered from the console, a permission prompt seen as ``waiting``, its
end seen as ``ended``. Skipped, saying why, where the binary is not installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.claude.session.view import agent_view
from runeconsole.services.conversations.index import ConversationIndex
from runeconsole.services.conversations.locate import transcript_for
from runeconsole.services.conversations.reading import read_conversation
from runeconsole.services.conversations.turns import Turn
from runeconsole.services.pane_patterns import read_pane
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.tui.console.app import create_app
from runeconsole.tui.modals.question_modal import QuestionModal
from runeconsole.tui.panes.questions_pane import LocalQuestionsPane
from tests.support.claude import in_thread, install
from tests.support.claude_api import text_turn, tool_turn
from tests.support.claude_binary import ASK_INPUT, BASH_INPUT, ClaudeSession, binary, new_project
from tests.support.polling import until, wait_until

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]


def claude_agent(root: Path) -> dict[str, Any] | None:
    """The session's row as ``agents --json`` has it (read in-process: a console may be
    running in this test, and it owns stdout)."""
    for record in Registry(Project(root)).list():
        if record.get("role") == "claude":
            return {**record.to_json(), **agent_view(record.fields, None).to_json()}
    return None


async def test_its_ask_user_question_is_answered_from_the_console(
    tmp_path: Path,
) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    script = [tool_turn("AskUserQuestion", ASK_INPUT), text_turn("Done: argon2, lint and e2e.")]
    app = create_app(root, rescan_seconds=60)
    async with app.run_test(size=(120, 34)) as pilot:
        await until(pilot, lambda: app.presence.held)
        with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
            await in_thread(session.ready)
            await in_thread(lambda: session.type("Ask me about the auth module."))
            pane = app.query_one(LocalQuestionsPane)
            await until(pilot, lambda: len(pane.records) == 2)
            # The questions come first, the agent's state right after them.
            await until(pilot, lambda: (claude_agent(root) or {}).get("activity") == "waiting")
            await pilot.press("a")  # from the Agents pane
            await until(pilot, lambda: isinstance(app.screen, QuestionModal))
            await pilot.press("B")
            await until(pilot, lambda: app.screen.question.seq == 2)  # type: ignore[attr-defined]
            await pilot.press("A", "C", "enter")
            screen = str(await in_thread(lambda: session.wait_screen("Done: argon2")))
            assert "Answered Claude's questions" in screen
            assert "→ argon2" in screen and "→ lint, e2e" in screen
            requests = session.api.wait_for_requests(2, timeout=30)
            told = json.dumps(requests[1]["messages"][-1])
            assert '\\"Which checks should run?\\"=\\"lint, e2e\\"' in told, told
            await until(pilot, lambda: claude_agent(root)["activity"] == "idle")  # type: ignore[index]
            row = claude_agent(root)
            assert row is not None
            # The transcript is written behind the events: at Stop, at least the first answer.
            assert row["tokens"]["cache_read"] >= 16000
            # 20,200 of the default model's 1,000,000 (its status line and hooks agree)
            assert row["context_left_percent"] == 98
            # Its conversation: the call with the answers given here, then its last text;
            # the console indexed it when the hooks said Stop.
            transcript = transcript_for(Project(root), row["key"])

            def turns() -> list[Turn]:
                return read_conversation(transcript).turns

            await until(pilot, lambda: any("Done: argon2" in t.text for t in turns()))
            (asked,) = [t for t in turns() if t.tool == "AskUserQuestion"]
            assert asked.subject == ASK_INPUT["questions"][0]["question"]
            assert "argon2" in asked.result and "lint, e2e" in asked.result
            index = ConversationIndex(Project(root))
            await until(pilot, lambda: bool(index.search("argon2")), timeout=20)
            assert {hit.tool for hit in index.search("argon2")} >= {"AskUserQuestion"}
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()


def test_a_permission_prompt_is_waiting_and_its_exit_is_ended(
    tmp_path: Path,
) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    script = [tool_turn("Bash", BASH_INPUT), text_turn("Made it.")]
    with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
        session.ready()
        session.type("Make the file.")
        screen = session.wait_screen("Do you want to proceed")
        reading = read_pane(screen)
        assert (reading.waiting_for_input, reading.menu) == ("permission", True)
        wait_until(lambda: (claude_agent(root) or {}).get("activity") == "waiting", 30)
        row = claude_agent(root)
        # The PermissionRequest hook says what it waits for; the Notification after it, less.
        assert row is not None and row["waiting_for"] in (
            "permission: Bash touch made-by-bash",
            "Claude needs your permission",
        )
        session.keys("Escape")  # declined: nothing runs
        session.wait_screen("What should Claude do instead")
        session.type("/exit")
        wait_until(lambda: (claude_agent(root) or {}).get("status") == "terminated", 30)
    row = claude_agent(root)
    assert row is not None and (row["activity"], row["liveness"]) == ("ended", "grey")
    assert not (root / "made-by-bash").exists()
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()
