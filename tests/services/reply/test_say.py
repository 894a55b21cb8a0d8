"""``say`` with real processes in panes of a private tmux server: what arrives is one
bracketed paste and an Enter, and nothing at all is typed where ``say`` must refuse."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.conversations.locate import OperatorPrompts
from runeconsole.services.reply import ENDED, NO_PANE, NOT_ITS_PANE, WAITING, Refused
from tests.support.paste_reader import PASTE_END, PASTE_START
from tests.support.paths import PANES
from tests.support.polling import wait_until
from tests.support.replies import TmuxAgents

MESSAGE = (
    'Use "argon2", not bcrypt.\nIt\'s fine to rename auth.py -> hashing.py;\n'
    "$(rm -rf /) stays text."
)


def pasted(text: str) -> bytes:
    """What a program asking for bracketed paste reads for ``say(text)``: the paste (tmux
    sends each line end as a carriage return, as a terminal does), then Enter."""
    return PASTE_START + text.replace("\n", "\r").encode() + PASTE_END + b"\r"


def read(log: Path, expected: bytes) -> bytes:
    wait_until(lambda: len(log.read_bytes()) >= len(expected), 10, what=f"{expected!r} in {log}")
    return log.read_bytes()


def nothing_typed(log: Path) -> bool:
    time.sleep(0.3)  # what would have been typed has arrived by now
    return log.read_bytes() == b""


def refused(tmux_agents: TmuxAgents, key: str, text: str = "hello") -> Refused:
    with pytest.raises(Refused) as caught:
        tmux_agents.replies.say(key, text)
    return caught.value


def test_a_message_with_newlines_and_quotes_arrives_as_one_paste_then_enter(
    tmux_agents: TmuxAgents,
) -> None:
    log = tmux_agents.spawn("a")
    result = tmux_agents.replies.say("worker-a", MESSAGE)
    assert read(log, pasted(MESSAGE)) == pasted(MESSAGE)
    assert (result.agent, result.pane, result.lines) == (
        "worker-a",
        "tmux session rune-worker-a",
        3,
    )
    assert result.to_json()["chars"] == len(MESSAGE)


def test_what_was_said_is_kept_as_the_operator_s_for_the_agent_s_conversation(
    tmux_agents: TmuxAgents,
) -> None:
    tmux_agents.spawn("a")
    tmux_agents.spawn("b")
    tmux_agents.replies.say("worker-a", MESSAGE)
    project = tmux_agents.replies.project
    prompts = OperatorPrompts.of(project, "worker-a")
    assert prompts.which(MESSAGE) == "say" and prompts.which("something else") is None
    tmux_agents.registry.mark_terminated("worker-b", "done")
    assert refused(tmux_agents, "worker-b").reason == ENDED  # refused: nothing kept for it
    assert OperatorPrompts.of(project, "worker-b").which("hello") is None


def test_control_characters_never_reach_the_pane(tmux_agents: TmuxAgents) -> None:
    """An escape in the text could end the paste early and be taken as keys."""
    log = tmux_agents.spawn("a")
    tmux_agents.replies.say("worker-a", "first\x1b[201~\x03second\r\nthird\x9b")
    assert read(log, pasted("first[201~second\nthird")) == pasted("first[201~second\nthird")


def test_a_pane_recorded_by_the_hook_is_used_while_it_holds_the_session(
    tmux_agents: TmuxAgents,
) -> None:
    log = tmux_agents.root.parent / "by-hand.log"
    pane, pid = tmux_agents.pane("by-hand", log)
    key = tmux_agents.hooked("by-hand", pane, pid)
    result = tmux_agents.replies.say(key, MESSAGE)
    assert result.pane == f"pane {pane} on {tmux_agents.socket_path()}"
    assert read(log, pasted(MESSAGE)) == pasted(MESSAGE)


def test_a_pane_that_belongs_to_another_process_is_refused(tmux_agents: TmuxAgents) -> None:
    """The hook recorded pane P for the session; P now runs someone else's program, and
    the session's own process runs elsewhere."""
    other_log = tmux_agents.root.parent / "other.log"
    pane, _ = tmux_agents.pane("someone-else", other_log)
    session = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        key = tmux_agents.hooked("moved", pane, session.pid)
        why = refused(tmux_agents, key)
        assert why.reason == NOT_ITS_PANE
        assert f"pane {pane} runs" in why.message and "someone else's pane" in why.message
        assert f"(pid {session.pid})" in why.message
        assert nothing_typed(other_log)
    finally:
        session.kill()
        session.wait()


def test_a_spawned_pane_whose_process_is_not_the_agents_is_refused(tmux_agents: TmuxAgents) -> None:
    log = tmux_agents.spawn("a")
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        tmux_agents.registry.update("worker-a", {"pid": stranger.pid})
        assert refused(tmux_agents, "worker-a").reason == NOT_ITS_PANE
        assert nothing_typed(log)
    finally:
        stranger.kill()
        stranger.wait()


def test_a_session_process_reused_by_another_program_is_refused(tmux_agents: TmuxAgents) -> None:
    """Same pid, another start time: the process the hook recorded is gone."""
    log = tmux_agents.root.parent / "reused.log"
    pane, pid = tmux_agents.pane("reused", log)
    key = tmux_agents.hooked("reused", pane, pid)
    claude = tmux_agents.registry.get(key).fields["claude"]
    claude["tmux"]["pid_start"] -= 1
    tmux_agents.registry.update(key, {"claude": claude})
    why = refused(tmux_agents, key)
    assert (why.reason, f"session process {pid} has exited" in why.message) == (NOT_ITS_PANE, True)
    assert nothing_typed(log)


def test_an_ended_agent_is_refused(tmux_agents: TmuxAgents) -> None:
    log = tmux_agents.spawn("a")
    tmux_agents.registry.mark_terminated("worker-a", "done for the day")
    why = refused(tmux_agents, "worker-a")
    assert why.reason == ENDED
    assert why.message == "worker-a has ended (terminated: done for the day): nothing to say to"
    assert nothing_typed(log)


def test_an_agent_whose_program_exited_is_refused(tmux_agents: TmuxAgents) -> None:
    tmux_agents.spawn("a")
    pane = tmux_agents.supervisor.tmux.pane("rune-worker-a")
    assert pane is not None and pane.pid is not None
    subprocess.run(["kill", str(pane.pid)], check=True)
    wait_until(lambda: (p := tmux_agents.supervisor.tmux.pane("rune-worker-a")) and p.dead, 10)
    why = refused(tmux_agents, "worker-a")
    assert why.reason == ENDED and "has exited" in why.message


def test_an_agent_with_a_permission_dialog_on_screen_is_refused(tmux_agents: TmuxAgents) -> None:
    """Claude Code's own dialog: Enter would pick its highlighted "Yes"."""
    log = tmux_agents.spawn("a", screen=PANES / "claude_permission_prompt.txt")
    wait_until(lambda: "Do you want to proceed" in tmux_agents.supervisor.pane_tail("worker-a"), 10)
    why = refused(tmux_agents, "worker-a")
    assert why.reason == WAITING
    assert why.message.startswith("worker-a waits on a permission")
    assert why.message.endswith("answer that first")
    assert nothing_typed(log)


def test_an_agent_waiting_on_a_relayed_question_is_refused(tmux_agents: TmuxAgents) -> None:
    """The hook waits for the console's answer; the screen shows no dialog."""
    log = tmux_agents.root.parent / "asked.log"
    pane, pid = tmux_agents.pane("asked", log)
    key = tmux_agents.hooked("asked", pane, pid, last_event="PreToolUse")
    tmux_agents.registry.update(key, {"activity": "waiting", "waiting_for": "Which hash?"})
    why = refused(tmux_agents, key)
    assert (why.reason, why.message) == (
        WAITING,
        f"{key} waits on a question (Which hash?): answer that first",
    )
    assert nothing_typed(log)


def test_an_agent_that_only_said_it_waits_for_input_is_told(tmux_agents: TmuxAgents) -> None:
    """Claude Code's idle Notification is no dialog: a message is what it waits for."""
    log = tmux_agents.root.parent / "idle.log"
    pane, pid = tmux_agents.pane("idle", log)
    key = tmux_agents.hooked("idle", pane, pid, last_event="Notification")
    waiting = {"activity": "waiting", "waiting_for": "Claude is waiting for your input"}
    tmux_agents.registry.update(key, waiting)
    tmux_agents.replies.say(key, "carry on")
    assert read(log, pasted("carry on")) == pasted("carry on")


def test_an_agent_with_no_pane_known_is_refused(tmux_agents: TmuxAgents) -> None:
    tmux_agents.registry.register("claude", "elsewhere", session_id="s-1")
    why = refused(tmux_agents, "claude-elsewhere")
    assert why.reason == NO_PANE
    assert "did not start inside tmux" in why.message


def test_an_empty_message_or_an_unknown_agent_is_an_error(tmux_agents: TmuxAgents) -> None:
    tmux_agents.spawn("a")
    with pytest.raises(InvalidInput, match="empty"):
        tmux_agents.replies.say("worker-a", " \n\x1b ")
    with pytest.raises(RuneError, match="no agent 'worker-b'"):
        tmux_agents.replies.say("worker-b", "hello")
    with pytest.raises(InvalidInput):
        tmux_agents.replies.say("../x", "hello")
