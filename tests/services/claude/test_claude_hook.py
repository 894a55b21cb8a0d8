"""Each hook event's effect on the agent, through the hook-runner double and the real
installed command (``runeconsole claude install`` wrote it into the project's settings)."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runeconsole.core.timeutil import iso_z
from runeconsole.services.claude.bridge.payload import HookPayload
from runeconsole.services.claude.hooks import agent_state
from runeconsole.services.claude.hooks.hook import LOG_NAME
from runeconsole.services.claude.install.install import HOOK_EVENTS
from tests.support.claude import KEY, PAYLOADS, Bridge, bridge
from tests.support.cli import CliResult
from tests.support.file_events import FileEvents

pytestmark = pytest.mark.timeout(120)


def agents(cli: Callable[..., CliResult], root: Path) -> dict[str, dict]:
    result = cli("agents", "--json", "--root", str(root))
    assert result.code == 0, result.err
    return {row["key"]: row for row in result.json()}  # type: ignore[union-attr]


def quiet(result: object) -> None:
    """What a hook must always be: exit 0, nothing on stdout, nothing Claude Code reports."""
    assert result.exit_code == 0, result  # type: ignore[attr-defined]
    assert result.stdout == "", result  # type: ignore[attr-defined]
    assert result.errors == [], result  # type: ignore[attr-defined]


def session_facts_events() -> set[str]:
    """The newer events we hook (each has a fixture)."""
    first = [event for event, _, _ in HOOK_EVENTS].index("StopFailure")
    return {event for event, _, _ in HOOK_EVENTS[first:]}


def test_every_fixture_payload_is_a_real_event_shape() -> None:
    names = {path.stem for path in PAYLOADS.glob("*.json")}
    assert {name.split("-")[0] for name in names} == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Notification",
        "PreCompact",
        "Stop",
        "SessionEnd",
        "PermissionRequest",
        *session_facts_events(),
    }


def test_install_writes_one_command_for_every_event_it_hooks(hooked: Bridge) -> None:
    settings = json.loads((hooked.project / ".claude" / "settings.local.json").read_text())
    commands = {
        hook["command"]
        for groups in settings["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    }
    assert len(commands) == 1
    (command,) = commands
    program, *rest = shlex.split(command)
    # The interpreter by absolute path: it works whatever PATH Claude Code runs it with.
    assert os.path.isabs(program) and os.access(program, os.X_OK)
    assert rest == ["-P", "-m", "runeconsole", "claude", "hook"]


@pytest.mark.e2e
def test_a_new_session_becomes_an_agent_named_after_its_directory_and_session(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    quiet(hooked.send("SessionStart"))
    row = agents(cli, hooked.project)[KEY]
    assert (row["role"], row["name"], row["status"]) == ("claude", "project-3decb0de", "active")
    assert row["session_id"] == hooked.session
    assert row["activity"] == "idle" and row["waiting_for"] is None
    assert row["claude"]["transcript_path"] == str(hooked.transcript)
    assert row["claude"]["cwd"] == str(hooked.project)
    assert row["worktree"] == str(hooked.project)
    signals = os.listdir(hooked.paths.signals)
    assert sum(name.endswith("AGENT_REGISTERED.json") for name in signals) == 1


@pytest.mark.parametrize(
    ("name", "activity", "waiting_for"),
    [
        ("UserPromptSubmit", "busy", None),
        ("PreToolUse-Bash", "busy", None),
        ("PostToolUse-Bash", "busy", None),
        (
            "PreToolUse-AskUserQuestion",
            "waiting",
            "Which hash should the auth module use? (+1 more)",
        ),
        ("PostToolUse-AskUserQuestion", "busy", None),
        ("Notification", "waiting", "Claude needs your permission"),
        ("PreCompact", "compacting", None),
        ("Stop", "idle", None),
        ("SessionEnd", "ended", None),
    ],
)
@pytest.mark.e2e
def test_each_event_sets_what_the_agent_is_doing(
    hooked: Bridge, cli: Callable[..., CliResult], name: str, activity: str, waiting_for: str | None
) -> None:
    quiet(hooked.send("SessionStart"))
    quiet(hooked.send(name))
    row = agents(cli, hooked.project)[KEY]
    assert (row["activity"], row["waiting_for"]) == (activity, waiting_for)


def test_tokens_are_summed_over_the_session_and_context_is_the_latest_message(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    hooked.write_usage("msg_1", input=1000, output=50, cache_read=10000, cache_creation=2000)
    quiet(hooked.send("SessionStart"))
    # One message written over two lines (a block a line) repeats its id: counted once.
    hooked.write_usage("msg_2", input=1200, output=10, cache_read=16000, cache_creation=3000)
    hooked.write_usage("msg_2", input=1200, output=40, cache_read=16000, cache_creation=3000)
    quiet(hooked.send("PostToolUse-Bash"))
    row = agents(cli, hooked.project)[KEY]
    assert row["tokens"] == {
        "input": 2200,
        "output": 90,
        "cache_read": 26000,
        "cache_creation": 5000,
    }
    # 20,200 in use of the 1,000,000 tokens of the model SessionStart names (claude-opus-5-5)
    assert row["context_left_percent"] == 98
    assert row["claude"]["transcript"]["context_tokens"] == 20200


def test_the_context_window_comes_from_the_talisman(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    talisman = hooked.project / ".claude" / "talisman.yml"
    talisman.write_text("runeconsole:\n  claude:\n    context_window_tokens: 40000\n")
    hooked.write_usage("msg_1", input=1000, cache_read=9000)
    quiet(hooked.send("SessionStart"))
    assert agents(cli, hooked.project)[KEY]["context_left_percent"] == 75


@pytest.mark.e2e
def test_a_new_session_in_the_same_agent_starts_its_tokens_again(
    hooked: Bridge, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    hooked.runner.environ["RUNECONSOLE_AGENT"] = "worker-parser"
    hooked.write_usage("msg_1", input=500, output=5)
    quiet(hooked.send("SessionStart"))
    assert agents(cli, hooked.project)["worker-parser"]["tokens"]["input"] == 500
    fresh = hooked.project.parent / "second.jsonl"
    fresh.write_text("")
    hooked.session = "99999999-bbbb"
    quiet(hooked.send("SessionStart", transcript_path=str(fresh)))
    row = agents(cli, hooked.project)["worker-parser"]
    assert row["session_id"] == "99999999-bbbb"
    assert row["tokens"] == {"input": 0, "output": 0, "cache_read": 0, "cache_creation": 0}


@pytest.mark.e2e
def test_an_agent_named_in_the_environment_is_the_one_updated(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    cli("agent", "register", "--role", "worker", "--name", "parser", "--root", str(hooked.project))
    hooked.runner.environ["RUNECONSOLE_AGENT"] = "worker-parser"
    quiet(hooked.send("UserPromptSubmit"))
    rows = agents(cli, hooked.project)
    assert set(rows) == {"worker-parser"}
    assert rows["worker-parser"]["activity"] == "busy"
    assert rows["worker-parser"]["session_id"] == hooked.session


def test_events_within_a_second_that_change_nothing_are_not_written(hooked: Bridge) -> None:
    # In-process, with the moment of each event given: a busy machine must not decide it.
    quiet(hooked.send("SessionStart"))
    path = hooked.paths.identities / f"{KEY}.json"

    def event(name: str, at: float) -> bool:
        payload = HookPayload(hooked.payload(name))
        moment = start + timedelta(seconds=at)
        return agent_state.record(hooked.paths, "claude", "project-3decb0de", payload, moment).wrote

    start = datetime.now(UTC) + timedelta(seconds=5)
    assert event("PreToolUse-Bash", 0.0)  # idle -> busy: written
    inode = path.stat().st_ino
    assert not event("PostToolUse-Bash", 0.4)  # busy again within the second: not written
    assert path.stat().st_ino == inode  # an atomic replace would change the inode
    assert event("PostToolUse-Bash", 1.2)  # a second later: last_seen is refreshed
    assert hooked.identity()["last_seen"] == iso_z(start + timedelta(seconds=1.2))
    assert event("Stop", 1.3)  # idle: written at once, however soon
    assert hooked.identity()["activity"] == "idle"


@pytest.mark.e2e
def test_session_end_terminates_the_agent_but_clear_does_not(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    quiet(hooked.send("SessionStart"))
    quiet(hooked.send("SessionEnd", reason="clear"))
    row = agents(cli, hooked.project)[KEY]
    assert (row["status"], row["activity"]) == ("active", "idle")
    quiet(hooked.send("SessionEnd"))
    row = agents(cli, hooked.project)[KEY]
    assert (row["status"], row["activity"], row["liveness"]) == ("terminated", "ended", "grey")
    assert row["metadata"]["terminated_reason"] == "Claude Code session ended (prompt_input_exit)"
    # Later events of the ended session change nothing; a new start brings the agent back.
    quiet(hooked.send("PostToolUse-Bash"))
    assert agents(cli, hooked.project)[KEY]["status"] == "terminated"
    quiet(hooked.send("SessionStart", source="resume"))
    row = agents(cli, hooked.project)[KEY]
    assert row["status"] == "active" and row["predecessor_id"].startswith(KEY)


def signal_types(hooked: Bridge) -> list[str]:
    names = sorted(os.listdir(hooked.paths.signals))
    return [name.rsplit("-", 1)[1].removesuffix(".json") for name in names]


def test_each_event_reads_the_agents_identity_once_and_writes_it_at_most_once(
    hooked: Bridge,
) -> None:
    # The kernel counts the opens and replaces of the real file by the installed command.
    identity = f"{KEY}.json"
    with FileEvents(hooked.paths.identities) as files:
        quiet(hooked.send("SessionStart"))  # a session never seen: nothing there to read
        assert files.take(identity) == (0, 1)
        for name in ("UserPromptSubmit", "PreToolUse-Bash", "PostToolUse-Bash", "PreCompact"):
            quiet(hooked.send(name))
            reads, writes = files.take(identity)
            assert (reads, writes <= 1) == (1, True), (name, reads, writes)
        quiet(hooked.send("SessionEnd"))  # applied and terminated in one read and one write
        assert files.take(identity) == (1, 1)
        quiet(hooked.send("SessionStart", source="resume"))  # brought back: the same
        assert files.take(identity) == (1, 1)
    assert signal_types(hooked) == [
        "AGENT_REGISTERED",
        "HOOK_UPDATED",
        "AGENT_TERMINATED",
        "AGENT_REGISTERED",
    ]


def test_a_session_end_and_a_new_start_keep_the_registrys_chain_and_history(
    hooked: Bridge,
) -> None:
    quiet(hooked.send("SessionStart"))
    first = hooked.identity()
    quiet(hooked.send("SessionEnd", reason="logout"))
    ended = hooked.identity()
    assert (ended["status"], ended["activity"]) == ("terminated", "ended")
    assert ended["terminated_at"] and ended["agent_id"] == first["agent_id"]
    assert ended["metadata"] == {
        "started_by": "claude-code",
        "terminated_reason": "Claude Code session ended (logout)",
    }
    quiet(hooked.send("SessionStart", source="resume"))
    again = hooked.identity()
    assert again["status"] == "active" and again["activity"] == "idle"
    assert again["predecessor_id"] == first["agent_id"] != again["agent_id"]
    assert again["metadata"] == {"started_by": "claude-code"}
    kept = hooked.paths.identity_history / f"{first['agent_id']}.json"
    assert json.loads(kept.read_text())["status"] == "terminated"
    registered = [
        json.loads(path.read_text()) for path in sorted(hooked.paths.signals.glob("*-AGENT_*.json"))
    ]
    assert [(s["signal_type"], s["payload"]["agent_id"]) for s in registered] == [
        ("AGENT_REGISTERED", first["agent_id"]),
        ("AGENT_TERMINATED", first["agent_id"]),
        ("AGENT_REGISTERED", again["agent_id"]),
    ]
    assert registered[1]["payload"]["reason"] == "Claude Code session ended (logout)"
    assert registered[2]["payload"]["predecessor_id"] == first["agent_id"]


@pytest.mark.e2e
def test_precompact_checkpoints_the_hook_file_without_counting_as_the_agents_save(
    hooked: Bridge, cli: Callable[..., CliResult]
) -> None:
    quiet(hooked.send("SessionStart"))
    quiet(hooked.send("PreCompact"))
    hook = json.loads((hooked.paths.hook_files / f"{KEY}.json").read_text())
    assert hook["updated_by"] == "claude_hook"
    assert hook["agent_updates"] == 0 if "agent_updates" in hook else True
    assert hook["last_checkpoint_at"]
    assert agents(cli, hooked.project)[KEY]["activity"] == "compacting"
    # After an automatic compaction the turn goes on: busy, not idle.
    quiet(hooked.send("SessionStart", source="compact"))
    assert agents(cli, hooked.project)[KEY]["activity"] == "busy"


@pytest.mark.e2e
def test_outside_a_git_checkout_nothing_is_written(tmp_path: Path, project: Path) -> None:
    with bridge(project) as made:
        elsewhere = tmp_path / "not-a-repo"
        elsewhere.mkdir()
        made.runner.project = elsewhere
        (elsewhere / ".claude").mkdir()
        (project / ".claude" / "settings.local.json").rename(
            elsewhere / ".claude" / "settings.local.json"
        )
        quiet(made.send("SessionStart", cwd=str(elsewhere)))
        assert sorted(p.name for p in elsewhere.iterdir()) == [".claude"]
        assert not (elsewhere / ".claude" / "state").exists()


def test_a_state_it_cannot_write_is_one_log_line_and_no_harm(hooked: Bridge) -> None:
    hooked.paths.state.mkdir(parents=True)
    hooked.paths.identities.write_text("a file where the identities directory belongs")
    result = hooked.send("SessionStart")
    quiet(result)
    assert result.stderr == ""
    lines = (hooked.paths.claude_bridge / LOG_NAME).read_text().splitlines()
    assert len(lines) == 1 and " SessionStart " in lines[0], lines
