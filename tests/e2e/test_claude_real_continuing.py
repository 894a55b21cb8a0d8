"""``runeconsole resume`` and ``runeconsole fork`` on the real Claude Code binary (pinned in
.ci/claude-code-version) under our supervisor, against the Messages-API stand-in that keeps
every request: a real session started by ``new``, killed, resumed (the same session id),
forked (a new one), and forked at its first answer (``--at``); each new session's first
request carries the earlier conversation, and the cut one only what came before the cut.
Skipped, saying why, where the binary is not installed."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from runeconsole.adapters.tmux import Tmux
from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from tests.support.claude_api import MessagesApi, text_turn
from tests.support.claude_binary import binary, new_project
from tests.support.claude_tasks import prepare_home, runeconsole, session_environment, texts
from tests.support.merge_queue import ignore_state
from tests.support.polling import wait_until

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]

TASK = "Remember the word PELICAN."
NOTED = "PELICAN noted."
ASKED = "Which word was it?"
RESUMED = "It was PELICAN, resumed."


def fields(root: Path, key: str) -> dict[str, Any]:
    registry = Registry(Project(root))
    return registry.get(key).fields if registry.path_for(key).exists() else {}


def claude_of(root: Path, key: str) -> dict[str, Any]:
    found = fields(root, key).get("claude")
    return found if isinstance(found, dict) else {}


def ready(root: Path, key: str) -> str:
    """Until the agent's session started (its hook recorded the session and its pane) and
    sits at its prompt; its session id."""
    wait_until(lambda: (claude_of(root, key).get("tmux") or {}).get("pane"), 60, what=key)
    wait_until(lambda: fields(root, key).get("activity") in ("idle", None), 30, what=key)
    return str(claude_of(root, key).get("session_id"))


def last_user_texts(request: dict[str, Any]) -> list[str]:
    """The text blocks of the request's last user message (the prompt, its reminders)."""
    users = [m for m in request.get("messages") or [] if m.get("role") == "user"]
    return texts({"messages": users[-1:]})


def asked(api: MessagesApi, prompt: str) -> dict[str, Any]:
    """The first main-loop request whose user's words end with ``prompt``."""

    def found() -> dict[str, Any] | None:
        with api.lock:
            return next((r for r in api.requests if prompt in last_user_texts(r)), None)

    if not wait_until_or_none(found, 60):
        seen = [last_user_texts(r)[-2:] for r in api.requests]
        raise AssertionError(f"no request asking {prompt!r}: {seen}")
    request = found()
    assert request is not None
    return request


def wait_until_or_none(probe: Any, timeout: float) -> Any:
    try:
        return wait_until(probe, timeout)
    except AssertionError:
        return None


def say(root: Path, env: dict[str, str], key: str, text: str) -> None:
    done = runeconsole(root, env, "say", key, f"--text={text}", "--json")
    assert done.returncode == 0, done.stderr


def first_answer(transcript: Path) -> str:
    """The uuid of the transcript's first assistant entry (the first answer)."""
    for line in transcript.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "assistant":
            return str(entry["uuid"])
    raise AssertionError(f"no answer in {transcript}")


def test_resume_and_fork_start_real_sessions_that_carry_the_earlier_conversation(
    tmp_path: Path,
) -> None:
    claude, why = binary()
    assert claude is not None, why
    root, home = new_project(tmp_path)
    ignore_state(root)
    prepare_home(home, root, [])
    socket = f"rc-cont-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    script = [text_turn(NOTED), text_turn(RESUMED), text_turn("Forked."), text_turn("Cut.")]
    with MessagesApi(script) as api:
        env = session_environment(home, api.url, claude, socket)
        try:
            assert runeconsole(root, env, "claude", "install").returncode == 0
            made = runeconsole(root, env, "new", "--task", TASK, "--name", "first",
                               "--permission-mode", "acceptEdits", "--json")  # fmt: skip
            assert made.returncode == 0, made.stderr
            key = "worker-first"
            asked(api, TASK)
            wait_until(lambda: fields(root, key).get("activity") == "idle", 60, what=key)
            session = ready(root, key)
            ended_id = fields(root, key)["agent_id"]

            # A live agent is not resumed; once killed, it is, in its session.
            refused = runeconsole(root, env, "resume", key)
            assert refused.returncode == 1 and "still running" in refused.stderr
            assert runeconsole(root, env, "kill", key).returncode == 0
            resumed = runeconsole(root, env, "resume", key, "--json")
            assert resumed.returncode == 0, resumed.stderr
            result = json.loads(resumed.stdout)
            assert result["session_id"] == session
            assert ready(root, key) == session  # Claude Code kept the session id
            assert fields(root, key)["predecessor_id"] == ended_id
            say(root, env, key, ASKED)
            words = texts(asked(api, ASKED))
            assert TASK in words and NOTED in words, words
            wait_until(lambda: fields(root, key).get("activity") == "idle", 60, what=key)

            # A fork: a new agent on a new session id with the whole conversation.
            forked = runeconsole(root, env, "fork", key, "--name", "second", "--json")
            assert forked.returncode == 0, forked.stderr
            fork = json.loads(forked.stdout)
            assert fork["key"] == "worker-second" and fork["from_session"] == session
            assert ready(root, "worker-second") == fork["session_id"] != session
            say(root, env, "worker-second", "Go on from here.")
            words = texts(asked(api, "Go on from here."))
            assert TASK in words and NOTED in words and RESUMED in words, words

            # A fork at the first answer: what came after it is left out; the cut itself
            # asked the model nothing and ran no hooks (no stray agent).
            transcript = Path(claude_of(root, key)["transcript_path"])
            before = len(api.requests)
            cut = runeconsole(root, env, "fork", key, "--name", "third", "--json",
                              "--at", first_answer(transcript))  # fmt: skip
            assert cut.returncode == 0, cut.stderr
            third = json.loads(cut.stdout)
            assert len(api.requests) == before
            assert ready(root, "worker-third") == third["session_id"] != session
            say(root, env, "worker-third", "Start over from the word.")
            words = texts(asked(api, "Start over from the word."))
            assert TASK in words and NOTED in words, words
            assert ASKED not in words and RESUMED not in words, words
            keys = {r.key for r in Registry(Project(root)).list()}
            assert keys == {key, "worker-second", "worker-third"}
        finally:
            Tmux(socket).kill_server()
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()
