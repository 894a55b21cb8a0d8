"""The real Claude Code binary's newer hook events, with hooks installed by ``runeconsole
claude install`` and the Messages-API stand-in: a turn that ends on a billing error is
``stopped`` until the next prompt; a rate limit says when it resets; the last message
comes from MessageDisplay; a subagent is counted while it runs and when it is done; an
MCP server's elicitation is answered from the console's relay (the server receives the
typed values) or, with no console, left to Claude Code's own dialog. Skipped, saying
why, where the binary is not installed."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from runeconsole.services.claude.bridge.presence import ConsolePresence
from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.claude.questions import answers
from runeconsole.services.claude.session.view import agent_view
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.supervision.problems import find_problems
from runeconsole.services.worker_questions import Questions
from tests.support.claude import install
from tests.support.claude_api import Turn, billing_error, rate_limited, text_turn, tool_turn
from tests.support.claude_binary import ClaudeSession, binary, new_project
from tests.support.paths import REPO
from tests.support.polling import wait_until

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]
AGENT_INPUT = {
    "description": "Look around",
    "prompt": "List the files",
    "subagent_type": "general-purpose",
}


def agent(root: Path) -> dict:
    """The session's identity and what it is doing (read in-process)."""
    for record in Registry(Project(root)).list():
        if record.get("role") == "claude" and not record.error:
            return {**record.fields, **agent_view(record.fields, None).to_json()}
    return {}


def hooked_project(tmp_path: Path) -> tuple[Path, Path]:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    return root, home


def no_hook_errors(root: Path) -> None:
    log = root / ".claude" / "state" / "claude" / LOG_NAME
    assert not log.exists(), log.read_text()


def test_a_billing_error_stops_the_agent_until_its_next_prompt(tmp_path: Path) -> None:
    root, home = hooked_project(tmp_path)
    script = [billing_error(), text_turn("Back at work.")]
    with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
        session.ready()
        session.type("Fix the parser.")
        session.wait_screen("Credit balance")
        stopped = wait_until(lambda: agent(root).get("stopped"), 30)
        assert stopped["error"] == "billing_error"
        assert stopped["message"] == "Credit balance is too low"
        assert agent(root)["activity"] == "stopped"
        (problem,) = [p for p in find_problems(Registry(Project(root)).list(), {}) if p.kind]
        assert (problem.kind, problem.detail) == (
            "stopped",
            "billing_error: Credit balance is too low",
        )
        session.type("Try again.")
        session.wait_screen("Back at work")
        wait_until(lambda: agent(root).get("activity") == "idle", 30)
        assert "stopped" not in agent(root)
    no_hook_errors(root)


def test_a_subscriptions_rate_limit_says_when_it_resets(tmp_path: Path) -> None:
    root, home = hooked_project(tmp_path)
    reset = int(time.time()) + 3600
    env = {
        "CLAUDE_CODE_MAX_RETRIES": "1",  # retried once, not ten times
        "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-" + "r" * 80,  # a subscription's token
        "ANTHROPIC_API_KEY": None,
    }
    script = [rate_limited(1, reset), rate_limited(1, reset)]
    with ClaudeSession(root, home, script, "--permission-mode", "default", env=env) as session:
        session.ready()
        session.type("Fix the parser.")
        session.wait_screen("hit your .*limit")
        stopped = wait_until(lambda: agent(root).get("stopped"), 30)
        assert stopped["error"] == "rate_limit"
        assert stopped["resets"] and stopped["resets"] in stopped["message"]
        assert stopped["resets"].startswith(time.strftime("%-I:", time.gmtime(reset)))
    no_hook_errors(root)


def test_the_last_message_comes_from_message_display(tmp_path: Path) -> None:
    root, home = hooked_project(tmp_path)
    said = "Line one.\nLine two.\nLine three."
    with ClaudeSession(root, home, [text_turn(said)], "--permission-mode", "default") as session:
        session.ready()
        session.type("Say three lines.")
        session.wait_screen("Line three")
        wait_until(lambda: agent(root).get("last_message") == said, 30)
    no_hook_errors(root)


def test_a_subagent_is_counted_while_it_runs_and_when_it_is_done(tmp_path: Path) -> None:
    root, home = hooked_project(tmp_path)
    slow = [Turn(text="Nothing here.", delay=4.0), Turn(text="Sub done.", delay=4.0)]
    script = [tool_turn("Agent", AGENT_INPUT), *slow]
    allowed = ("--permission-mode", "default", "--allowedTools", "Agent")
    with ClaudeSession(root, home, script, *allowed) as session:
        session.ready()
        session.type("Look around with a subagent.")
        running = wait_until(lambda: agent(root).get("subagents", {}).get("running"), 30)
        ((_, about),) = running.items()
        assert about["type"] == "general-purpose"
        wait_until(lambda: agent(root).get("subagents", {}).get("done") == 1, 60)
        assert agent(root)["subagents"]["running"] == {}
    no_hook_errors(root)


def texts(value: object) -> list[str]:
    """Every string in a request's JSON (a tool result's text, wherever it nests)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in texts(item)]
    return []


def elicit_session(root: Path, home: Path, tmp_path: Path, script: list[Turn]) -> ClaudeSession:
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "tests.support.mcp_elicit"]}
    server["env"] = {"PYTHONPATH": str(REPO)}  # type: ignore[assignment]
    config.write_text(json.dumps({"mcpServers": {"deploy": server}}))
    args = ("--permission-mode", "default", "--mcp-config", str(config))
    return ClaudeSession(root, home, script, *args, "--allowedTools", "mcp__deploy__deploy")


def test_an_elicitation_is_answered_from_the_console_and_the_server_gets_the_values(
    tmp_path: Path,
) -> None:
    root, home = hooked_project(tmp_path)
    presence = ConsolePresence(Project(root).paths)
    assert presence.try_hold(pid_note="test")  # a console is open on the project
    script = [tool_turn("mcp__deploy__deploy", {}), text_turn("Deployed.")]
    try:
        with elicit_session(root, home, tmp_path, script) as session:
            session.ready()
            session.type("Deploy it.")
            questions = Questions(Project(root))
            (question,) = wait_until(lambda: questions.list(), 60)
            assert question.text == "Where should this deploy go?"
            said = "input: deploy: Where should this deploy go?"
            wait_until(lambda: agent(root).get("waiting_for") == said, 30)  # written just after
            content = {"branch": "main", "replicas": 3, "canary": False, "region": "us"}
            text = json.dumps({"action": "accept", "content": content})
            answers.answer(questions, question, text=text)
            session.wait_screen("Deployed")
            told = texts(session.api.wait_for_requests(2, timeout=30)[1]["messages"])
            expected = json.dumps({"action": "accept", "content": content}, sort_keys=True)
            assert any(f"elicitation answer: {expected}" in text for text in told), told
    finally:
        presence.release()
    no_hook_errors(root)


def test_with_no_console_claude_code_asks_in_its_own_dialog(tmp_path: Path) -> None:
    root, home = hooked_project(tmp_path)
    script = [tool_turn("mcp__deploy__deploy", {}), text_turn("Deployed.")]
    with elicit_session(root, home, tmp_path, script) as session:
        session.ready()
        session.type("Deploy it.")
        screen = session.wait_screen("Where should this deploy go", timeout=60)
        assert "Accept" in screen and "Decline" in screen
        wait_until(lambda: agent(root).get("activity") == "waiting", 30)
        assert not Questions(Project(root)).list()  # nothing relayed, nothing answered
        session.keys("Escape")
        session.wait_screen("Deployed")
    no_hook_errors(root)
