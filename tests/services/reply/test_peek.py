"""``peek``: the agent's screen, read only from its own pane (else the screen kept when it
stopped, else why there is none), and its last assistant message from the transcript or
the Stop hook, whichever is newer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput
from runeconsole.services.reply.last_message import from_transcript
from runeconsole.services.supervision.screens import screen_path
from tests.support.polling import wait_until
from tests.support.replies import TmuxAgents


def said(message_id: str, *blocks: dict, at: str, sidechain: bool = False) -> str:
    entry = {
        "type": "assistant",
        "isSidechain": sidechain,
        "timestamp": at,
        "message": {"id": message_id, "role": "assistant", "content": list(blocks)},
    }
    return json.dumps(entry) + "\n"


def text(value: str) -> dict:
    return {"type": "text", "text": value}


TOOL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
USER = json.dumps({"type": "user", "message": {"role": "user", "content": "assistant?"}}) + "\n"


def transcript(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_the_last_message_is_the_last_text_of_the_main_conversation(tmp_path: Path) -> None:
    path = transcript(
        tmp_path,
        said("msg_1", text("Looking at the tests."), at="2026-01-01T10:00:00.000Z"),
        USER,
        said("msg_2", text("Both fixed."), at="2026-01-01T10:01:00.000Z"),
        said("msg_2", text("Ready for review."), at="2026-01-01T10:01:01.000Z"),
        said("msg_2", TOOL, at="2026-01-01T10:01:02.000Z"),  # a tool call says nothing
        said("msg_3", text("a sub-agent's"), at="2026-01-01T10:02:00.000Z", sidechain=True),
        "{not json\n",
    )
    found = from_transcript(str(path))
    assert found is not None
    assert (found.text, found.at, found.source) == (
        "Both fixed.\nReady for review.",
        "2026-01-01T10:01:01.000Z",
        "transcript",
    )


def test_no_transcript_or_no_text_is_no_message(tmp_path: Path) -> None:
    assert from_transcript(str(tmp_path / "missing.jsonl")) is None
    assert from_transcript("relative.jsonl") is None
    assert from_transcript(str(tmp_path)) is None  # a directory
    only_tools = transcript(tmp_path, said("msg_1", TOOL, at="2026-01-01T10:00:00Z"))
    assert from_transcript(str(only_tools)) is None


def test_peek_shows_the_pane_and_the_newer_of_transcript_and_hook(tmux_agents: TmuxAgents) -> None:
    log = tmux_agents.root.parent / "by-hand.log"
    pane, pid = tmux_agents.pane("by-hand", log)
    path = transcript(
        tmux_agents.root.parent,
        said("msg_1", text("From the transcript."), at="2026-01-01T10:00:00Z"),
    )
    key = tmux_agents.hooked(
        "by-hand",
        pane,
        pid,
        transcript_path=str(path),
        last_assistant_message="From the Stop hook.",
        last_assistant_message_at="2026-01-01T09:00:00Z",
    )
    tmux_agents.replies.say(key, "status?")
    wait_until(lambda: "status?" in tmux_agents.replies.peek(key).screen, 10)
    peeked = tmux_agents.replies.peek(key, lines=5)
    assert peeked.screen_from == f"pane {pane} on {tmux_agents.socket_path()}"
    assert peeked.last_message is not None
    assert peeked.last_message.text == "From the transcript."  # the newer one
    claude = tmux_agents.registry.get(key).fields["claude"]
    claude["last_assistant_message_at"] = "2026-01-01T11:00:00Z"
    tmux_agents.registry.update(key, {"claude": claude})
    assert tmux_agents.replies.peek(key).to_json()["last_message"] == "From the Stop hook."
    assert tmux_agents.replies.peek(key).to_json()["last_message_from"] == "hook"


def test_peek_keeps_the_last_lines_with_blank_runs_squeezed(tmux_agents: TmuxAgents) -> None:
    tmux_agents.spawn("a")
    tmux_agents.replies.say("worker-a", "one\n\n\n\n\ntwo\nthree")
    wait_until(lambda: "three" in tmux_agents.replies.peek("worker-a").screen, 10)
    assert tmux_agents.replies.peek("worker-a", lines=3).screen.splitlines() == ["", "two", "three"]


def test_peek_never_shows_someone_elses_pane_as_the_agents(tmux_agents: TmuxAgents) -> None:
    log = tmux_agents.root.parent / "other.log"
    pane, _ = tmux_agents.pane("someone-else", log)
    session = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        key = tmux_agents.hooked("moved", pane, session.pid)
        peeked = tmux_agents.replies.peek(key)
    finally:
        session.kill()
        session.wait()
    assert (peeked.screen, peeked.screen_from) == ("", None)
    assert peeked.screen_note is not None and "someone else's pane" in peeked.screen_note


def test_a_stopped_agent_shows_the_screen_kept_when_it_stopped(tmux_agents: TmuxAgents) -> None:
    tmux_agents.spawn("a")
    record = tmux_agents.supervisor.kill("worker-a")
    kept = screen_path(tmux_agents.supervisor.paths, str(record.get("agent_id")))
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("last words\n")
    peeked = tmux_agents.replies.peek("worker-a")
    assert (peeked.status, peeked.activity) == ("terminated", "ended")
    assert (peeked.screen, peeked.screen_from) == ("last words", "last screen kept when it stopped")
    assert peeked.screen_note == "its tmux session rune-worker-a is gone"


def test_an_agent_with_no_pane_says_why(tmux_agents: TmuxAgents) -> None:
    tmux_agents.registry.register("claude", "elsewhere", session_id="s-1")
    peeked = tmux_agents.replies.peek("claude-elsewhere")
    assert (peeked.screen, peeked.screen_from, peeked.last_message) == ("", None, None)
    assert peeked.screen_note is not None and "$TMUX_PANE" in peeked.screen_note


def test_lines_out_of_range_are_refused(tmux_agents: TmuxAgents) -> None:
    with pytest.raises(InvalidInput, match="--lines 0"):
        tmux_agents.replies.peek("worker-a", lines=0)
