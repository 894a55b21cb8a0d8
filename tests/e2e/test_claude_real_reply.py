"""``say`` and ``peek`` against the real Claude Code binary (pinned in
.ci/claude-code-version) in tmux, with hooks installed by ``runeconsole claude install``
and the local Messages-API stand-in: the pane comes from ``$TMUX_PANE`` recorded at
SessionStart, the message reaches the model as the user's, and a permission dialog or an
ended session is refused. Skipped, saying why, where the binary is not installed."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.reply import ENDED, WAITING, Refused, Replies
from tests.support.claude import install
from tests.support.claude_api import text_turn, tool_turn
from tests.support.claude_binary import BASH_INPUT, ClaudeSession, binary, new_project
from tests.support.polling import wait_until

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]

MESSAGE = 'Use "argon2", not bcrypt.\nAnd it\'s fine to rename auth.py -> hashing.py.'


def claude_fields(root: Path) -> dict[str, Any]:
    for record in Registry(Project(root)).list():
        if record.get("role") == "claude":
            return {**record.fields, "key": record.key}
    return {}


def recorded_pane(root: Path) -> dict[str, Any]:
    claude = claude_fields(root).get("claude") or {}
    return claude.get("tmux") or {}


def user_texts(request: dict[str, Any]) -> list[str]:
    """Every text the request gives as the user's (a string, or its text blocks)."""
    texts = []
    for message in request["messages"]:
        if message.get("role") != "user":
            continue
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts += [b["text"] for b in blocks if b.get("type") == "text"]
    return texts


def pane_of(session: ClaudeSession) -> tuple[str, int, str]:
    """(pane id, its first process, the server's socket path) as tmux says."""
    said = "#{pane_id} #{pane_pid} #{socket_path}"
    out = subprocess.run(
        [*session.tmux(), "display-message", "-p", "-t", "claude", said],
        capture_output=True, text=True, timeout=20, check=True,
    ).stdout.split()  # fmt: skip
    return out[0], int(out[1]), out[2]


def test_say_reaches_the_model_through_the_pane_recorded_at_session_start(
    tmp_path: Path,
) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    script = [text_turn("Understood: argon2, and the rename.")]
    with ClaudeSession(root, home, script) as session:
        session.ready()
        wait_until(lambda: recorded_pane(root).get("pane"), 30)
        pane, pane_pid, socket = pane_of(session)
        # What the hook saw in $TMUX_PANE and $TMUX, and the session's own process.
        assert recorded_pane(root) == {
            "pane": pane,
            "socket": socket,
            "pid": pane_pid,  # claude is the pane's first process here
            "pid_start": recorded_pane(root)["pid_start"],
        }
        key = claude_fields(root)["key"]
        replies = Replies(Project(root))
        said = replies.say(key, MESSAGE)
        assert (said.pane, said.lines) == (f"pane {pane} on {socket}", 2)
        request = session.api.wait_for_requests(1, timeout=30)[0]
        assert MESSAGE in user_texts(request), user_texts(request)
        session.wait_screen("Understood: argon2")
        wait_until(lambda: claude_fields(root).get("activity") == "idle", 30)
        peeked = replies.peek(key, lines=30)
        assert peeked.screen_from == f"pane {pane} on {socket}"
        assert "Understood: argon2, and the rename." in peeked.screen
        assert peeked.last_message is not None
        assert peeked.last_message.text == "Understood: argon2, and the rename."
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()


def test_a_permission_dialog_and_an_ended_session_are_refused(tmp_path: Path) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    script = [tool_turn("Bash", BASH_INPUT), text_turn("Made it.")]
    with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
        session.ready()
        wait_until(lambda: recorded_pane(root).get("pane"), 30)
        key = claude_fields(root)["key"]
        replies = Replies(Project(root))
        replies.say(key, "Make the file.")
        session.wait_screen("Do you want to proceed")
        with pytest.raises(Refused) as refused:
            replies.say(key, "1")  # would have picked "Yes" in the dialog
        assert refused.value.reason == WAITING
        assert "answer that first" in refused.value.message
        assert "Do you want to proceed" in session.screen()  # nothing was typed into it
        assert len(session.api.requests) == 1
        session.keys("Escape")  # declined: nothing runs
        session.wait_screen("What should Claude do instead")
        session.type("/exit")
        wait_until(lambda: claude_fields(root).get("status") == "terminated", 30)
        with pytest.raises(Refused) as ended:
            replies.say(key, "Are you there?")
        assert ended.value.reason == ENDED
        assert "has ended" in ended.value.message
    assert not (root / "made-by-bash").exists()
