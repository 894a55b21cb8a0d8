"""``runeconsole say`` and ``runeconsole peek`` (each with ``--json``) on agents in panes
of a private tmux server."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from runeconsole.services.reply.text import MAX_CHARS
from tests.support.cli import CliResult
from tests.support.paste_reader import PASTE_END, PASTE_START
from tests.support.polling import wait_until
from tests.support.replies import TmuxAgents

Cli = Callable[..., CliResult]


def arrived(log: Path, text: str) -> bool:
    return log.read_bytes() == PASTE_START + text.replace("\n", "\r").encode() + PASTE_END + b"\r"


def test_say_pastes_the_words_and_reports_where(tmux_agents: TmuxAgents, cli: Cli) -> None:
    log = tmux_agents.spawn("a")
    result = cli("say", "worker-a", "run", "the", "tests", "--root", str(tmux_agents.root))
    assert result.code == 0, result.err
    assert result.out == ("worker-a: said 1 line (13 characters) into tmux session rune-worker-a\n")
    wait_until(lambda: arrived(log, "run the tests"), 10)


def test_say_json_and_text_as_one_argument(tmux_agents: TmuxAgents, cli: Cli) -> None:
    log = tmux_agents.spawn("a")
    result = cli(
        "say",
        "worker-a",
        "--text=-v is verbose\nsee above",
        "--json",
        "--root",
        str(tmux_agents.root),
    )
    assert result.code == 0, result.err
    report = result.json()
    assert isinstance(report, dict)
    assert {k: report[k] for k in ("agent", "pane", "chars", "lines")} == {
        "agent": "worker-a",
        "pane": "tmux session rune-worker-a",
        "chars": 23,
        "lines": 2,
    }
    assert report["sent_at"].endswith("Z")
    wait_until(lambda: arrived(log, "-v is verbose\nsee above"), 10)


def test_say_reads_a_message_of_several_lines_from_stdin(
    tmux_agents: TmuxAgents, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    log = tmux_agents.spawn("a")
    message = 'Two things:\n1. "quote" it\n2. don\'t $(expand) it\n'
    done = run_cli("say", "worker-a", "-", "--root", str(tmux_agents.root), input=message)
    assert done.returncode == 0, done.stderr
    wait_until(lambda: arrived(log, message.rstrip("\n")), 10)


def test_a_refusal_exits_1_with_the_reason_and_prints_nothing(
    tmux_agents: TmuxAgents, cli: Cli
) -> None:
    log = tmux_agents.spawn("a")
    tmux_agents.registry.mark_terminated("worker-a", "done")
    result = cli("say", "worker-a", "hello", "--json", "--root", str(tmux_agents.root))
    assert (result.code, result.out) == (1, "")
    assert result.err == "runeconsole: worker-a has ended (terminated: done): nothing to say to\n"
    assert log.read_bytes() == b""


def test_say_without_a_message_is_a_usage_error(tmux_agents: TmuxAgents, cli: Cli) -> None:
    tmux_agents.spawn("a")
    assert cli("say", "worker-a", "--root", str(tmux_agents.root)).code == 2
    both = cli("say", "worker-a", "x", "--text", "y", "--root", str(tmux_agents.root))
    assert (both.code, "not both" in both.err) == (2, True)
    huge = cli("say", "worker-a", "x" * (MAX_CHARS + 1), "--root", str(tmux_agents.root))
    assert (huge.code, "at most" in huge.err) == (2, True)


def test_peek_prints_the_screen_and_the_last_message(tmux_agents: TmuxAgents, cli: Cli) -> None:
    tmux_agents.spawn("a")
    tmux_agents.replies.say("worker-a", "hello there")
    wait_until(lambda: "hello there" in tmux_agents.replies.peek("worker-a").screen, 10)
    tmux_agents.registry.update(
        "worker-a",
        {"claude": {"last_assistant_message": "All green.\nReady.", "last_event": "Stop"}},
    )
    result = cli("peek", "worker-a", "--lines", "5", "--root", str(tmux_agents.root))
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "worker-a  active",
        "── screen: tmux session rune-worker-a",
        "> hello there",
        "── last message (hook, when unknown)",
        "All green.",
        "Ready.",
    ]
    report = cli("peek", "worker-a", "--json", "--root", str(tmux_agents.root)).json()
    assert isinstance(report, dict)
    assert report["screen"] == "> hello there"
    assert (report["last_message"], report["last_message_from"]) == ("All green.\nReady.", "hook")


def test_peek_of_an_unknown_agent_is_an_error(tmux_agents: TmuxAgents, cli: Cli) -> None:
    result = cli("peek", "worker-zz", "--root", str(tmux_agents.root))
    assert result.code == 1 and "no agent 'worker-zz'" in result.err
