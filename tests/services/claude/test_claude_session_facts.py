"""Claude Code's newer hook events, through the hook-runner double and the installed
command: what each leaves in the agent's identity (and so in ``agents --json``), with
the payloads v2.1.328 wrote (``tests/fixtures/claude_hooks/``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.claude import KEY, Bridge, bridge
from tests.support.cli import CliResult

pytestmark = pytest.mark.timeout(120)


def row(cli: Callable[..., CliResult], root: Path, key: str = KEY) -> dict:
    result = cli("agents", "--json", "--root", str(root))
    assert result.code == 0, result.err
    return {r["key"]: r for r in result.json()}[key]  # type: ignore[union-attr]


def quiet(result: object) -> None:
    assert result.exit_code == 0, result  # type: ignore[attr-defined]
    assert result.stdout == "", result  # type: ignore[attr-defined]
    assert result.errors == [], result  # type: ignore[attr-defined]


def started(hooked: Bridge) -> Bridge:
    quiet(hooked.send("SessionStart"))
    return hooked


@pytest.mark.e2e
def test_the_last_message_is_its_flushes_joined_in_order_whatever_order_they_come_in(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    started(hooked)
    quiet(hooked.send("MessageDisplay-final"))  # hooks run in parallel: the end came first
    assert row(cli, hooked.project)["last_message"] == "Line three."
    quiet(hooked.send("MessageDisplay"))
    assert row(cli, hooked.project)["last_message"] == "Line one.\nLine two.\nLine three."
    quiet(hooked.send("MessageDisplay", index=0, delta="The same flush again.\n"))
    assert row(cli, hooked.project)["last_message"] == "Line one.\nLine two.\nLine three."
    quiet(hooked.send("MessageDisplay", message_id="next", index=0, final=True, delta="Next."))
    assert row(cli, hooked.project)["last_message"] == "Next."
    quiet(hooked.send("MessageDisplay", index=2, delta="A late flush of the one before."))
    assert row(cli, hooked.project)["last_message"] == "Next."


@pytest.mark.e2e
def test_a_turn_that_ends_on_a_billing_error_is_stopped_and_told_until_its_next_work(
    project: Path, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    told = tmp_path / "told.txt"
    note = f"import sys; open({str(told)!r}, 'a').write(sys.argv[1] + '|' + sys.argv[2])"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  notify:\n    command: "
        + json.dumps([sys.executable, "-c", note, "{title}", "{body}"])
        + "\n"
    )
    with bridge(project) as hooked:
        started(hooked)
        quiet(hooked.send("UserPromptSubmit"))
        quiet(hooked.send("StopFailure"))
        agent = row(cli, project)
        assert agent["activity"] == "stopped"
        assert agent["stopped"]["error"] == "billing_error"
        assert agent["stopped"]["message"] == "Credit balance is too low"
        assert agent["stopped"]["resets"] is None
        listed = cli("agents", "--root", str(project)).out
        assert "stopped: billing_error" in listed
        from tests.support.polling import wait_until

        wait_until(lambda: told.exists() and told.read_text(), 10)
        assert told.read_text() == f"{KEY} stopped: billing_error|Credit balance is too low"
        reminder = {
            "notification_type": "idle_prompt",
            "message": "Claude is waiting for your input",
        }
        quiet(hooked.send("Notification", **reminder))  # Claude Code's reminder: not work
        assert row(cli, project)["activity"] == "stopped"
        quiet(hooked.send("UserPromptSubmit"))
        agent = row(cli, project)
        assert agent["activity"] == "busy" and "stopped" not in agent


@pytest.mark.e2e
def test_a_rate_limit_says_when_it_resets(hooked: Bridge, cli: Callable[..., CliResult]) -> None:
    started(hooked)
    quiet(hooked.send("StopFailure-rate-limit"))
    stopped = row(cli, hooked.project)["stopped"]
    assert stopped["error"] == "rate_limit"
    assert stopped["resets"] == "9:06pm (UTC)"
    quiet(hooked.send("MessageDisplay"))  # it went on by itself at the reset
    agent = row(cli, hooked.project)
    assert agent["activity"] == "busy" and "stopped" not in agent


@pytest.mark.e2e
def test_subagents_are_counted_while_they_run_and_a_compactions_own_is_not(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    started(hooked)
    quiet(hooked.send("SubagentStart"))
    subagents = row(cli, hooked.project)["subagents"]
    assert list(subagents["running"]) == ["a49c0b8109aa9beba"]
    assert subagents["running"]["a49c0b8109aa9beba"]["type"] == "general-purpose"
    quiet(hooked.send("SubagentStop"))
    quiet(hooked.send("SubagentStop-compaction"))
    assert row(cli, hooked.project)["subagents"] == {"running": {}, "done": 1}


@pytest.mark.e2e
def test_tasks_are_open_until_completed(hooked: Bridge, cli: Callable[..., CliResult]) -> None:
    started(hooked)
    quiet(hooked.send("TaskCreated"))
    quiet(hooked.send("TaskCreated", task_id="2", task_subject="Test the parser"))
    tasks = row(cli, hooked.project)["tasks"]
    assert tasks["open"] == {"1": "Write the parser", "2": "Test the parser"}
    quiet(hooked.send("TaskCompleted"))
    tasks = row(cli, hooked.project)["tasks"]
    assert (tasks["open"], tasks["done"], tasks["last_done"]) == (
        {"2": "Test the parser"},
        1,
        "Write the parser",
    )


@pytest.mark.e2e
def test_the_last_failed_tool_is_kept(hooked: Bridge, cli: Callable[..., CliResult]) -> None:
    started(hooked)
    quiet(hooked.send("PostToolUseFailure"))
    agent = row(cli, hooked.project)
    assert agent["activity"] == "busy"
    failed = agent["failed_tool"]
    assert (failed["tool"], failed["what"], failed["error"]) == ("Bash", "false", "Exit code 1")
    assert failed["interrupted"] is False


@pytest.mark.e2e
def test_the_agents_directory_follows_a_cd(hooked: Bridge, cli: Callable[..., CliResult]) -> None:
    started(hooked)
    quiet(hooked.send("CwdChanged"))
    agent = row(cli, hooked.project)
    assert agent["cwd"] == str(hooked.project / "src")
    assert agent["claude"]["cwd"] == str(hooked.project / "src")
    quiet(hooked.send("CwdChanged", new_cwd="relative/not/a/place"))
    assert row(cli, hooked.project)["cwd"] == str(hooked.project / "src")


@pytest.mark.e2e
def test_after_a_compaction_the_meter_waits_for_the_next_answers_usage(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    hooked.write_usage("msg_1", input=3000, output=200, cache_read=150_000, cache_creation=9000)
    started(hooked)
    # of the 1,000,000 tokens of the model SessionStart names (claude-opus-5-5)
    assert row(cli, hooked.project)["context_left_percent"] == 84
    quiet(hooked.send("PreCompact"))
    quiet(hooked.send("PostCompact"))
    assert row(cli, hooked.project).get("context_left_percent") is None
    hooked.write_usage("msg_2", input=1000, output=40, cache_read=9000, cache_creation=0)
    quiet(hooked.send("UserPromptSubmit"))
    agent = row(cli, hooked.project)
    assert agent["context_left_percent"] == 99
    assert agent["tokens"]["cache_read"] == 159_000  # the compaction's tokens still count


@pytest.mark.e2e
def test_a_call_auto_mode_refused_is_in_the_permissions_history(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    started(hooked)
    quiet(hooked.send("PermissionDenied"))
    history = cli("permissions", "history", "--json", "--root", str(hooked.project)).json()
    (denied,) = history  # type: ignore[misc]
    assert (denied["agent"], denied["tool"], denied["subject"]) == (KEY, "Bash", "rm -rf build")
    assert denied["state"] == "denied" and denied["decision"]["decided_by"] == "auto-mode"
    assert "outside the task's scope" in denied["decision"]["message"]
    assert denied["outcome"].startswith("denied by auto-mode")
    assert row(cli, hooked.project)["activity"] == "busy"


def test_a_background_session_says_its_kind_short_id_and_name(
    project: Path, cli: Callable[..., CliResult]
) -> None:
    environ = {"CLAUDE_JOB_DIR": "/home/x/.claude/jobs/3decb0de", "CLAUDE_PID": "4242"}
    with bridge(project, environ) as hooked:
        quiet(hooked.send("SessionStart", session_title="fix the login"))
        agent = row(cli, project)
        assert (agent["kind"], agent["background_id"]) == ("background", "3decb0de")
        assert agent["session_name"] == "fix the login"
        assert agent["claude"]["pid"] == 4242


@pytest.mark.e2e
def test_an_interactive_session_is_said_so(hooked: Bridge, cli: Callable[..., CliResult]) -> None:
    started(hooked)
    agent = row(cli, hooked.project)
    assert agent["kind"] == "interactive" and "background_id" not in agent


@pytest.mark.e2e
def test_a_new_session_starts_its_facts_afresh(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    started(hooked)
    quiet(hooked.send("MessageDisplay-final"))
    quiet(hooked.send("TaskCreated"))
    quiet(hooked.send("StopFailure"))
    quiet(hooked.send("SessionStart", session_id="3decb0de-0000-4000-8000-000000000001"))
    agent = row(cli, hooked.project)
    assert not {"last_message", "tasks", "stopped"} & set(agent), agent
