"""The hook never harms the agent: whatever it is fed, it exits 0, prints nothing (or one
JSON object), shows no traceback, leaves one log line; it loads only what it needs."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runeconsole.adapters import git
from runeconsole.services.claude.bridge.payload import EVENTS, HookInputError
from runeconsole.services.claude.hooks import hook
from runeconsole.services.claude.statusline import statusline
from tests.support.claude import PAYLOADS, Bridge, payload
from tests.support.cli import cli_env

pytestmark = pytest.mark.timeout(180)


def installed_command(made: Bridge) -> list[str]:
    settings = json.loads((made.project / ".claude" / "settings.local.json").read_text())
    return shlex.split(settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"])


def run_raw(made: Bridge, data: bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = cli_env() | {"CLAUDE_PROJECT_DIR": str(made.project)} | env
    return subprocess.run(
        installed_command(made),
        input=data,
        capture_output=True,
        timeout=60,
        env=environ,
        cwd=made.project,
        check=False,
    )


def log_lines(made: Bridge) -> list[str]:
    path = made.paths.claude_bridge / hook.LOG_NAME
    return path.read_text().splitlines() if path.exists() else []


BAD_INPUT = {
    "nothing": b"",
    "not JSON": b"PostToolUse please",
    "a JSON list": b"[1, 2, 3]",
    "no event name": b'{"session_id": "abc", "cwd": "/"}',
    "not UTF-8": b'{"hook_event_name": "Stop", "x": "\xff\xfe"}',
    "nested too deep": b"[" * 200_000 + b"]" * 200_000,
    "over the size cap": b'{"hook_event_name": "Stop", "pad": "' + b"x" * (2 * 1024 * 1024) + b'"}',
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_stdin_is_one_log_line_and_no_harm(hooked: Bridge, case: str) -> None:
    result = run_raw(hooked, BAD_INPUT[case])
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    lines = log_lines(hooked)
    assert len(lines) == 1, lines
    assert not (hooked.paths.identities).exists()


def test_hostile_names_never_become_paths(hooked: Bridge) -> None:
    payload = hooked.payload("SessionStart", session_id="../../etc/x", cwd="/")
    result = run_raw(hooked, json.dumps(payload).encode(), RUNECONSOLE_AGENT="../../../tmp/evil")
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    names = os.listdir(hooked.paths.identities)
    assert names == ["claude-project-etc-x.json"], names  # only valid id characters are kept


@pytest.mark.e2e
def test_a_transcript_path_that_is_no_file_is_ignored(hooked: Bridge, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in ("/dev/zero", str(fifo), "relative/path.jsonl", str(tmp_path)):
        result = hooked.send("SessionStart", transcript_path=target)
        assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert "tokens" not in hooked.identity() or hooked.identity()["tokens"]["input"] == 0
    assert log_lines(hooked) == []


def test_the_hook_loads_no_console_watcher_tmux_parser_yaml_or_filelock(hooked: Bridge) -> None:
    hooked.send("SessionStart")  # registration may load more; the common events may not
    environ = cli_env() | {"CLAUDE_PROJECT_DIR": str(hooked.project)}
    command = installed_command(hooked)
    result = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        input=json.dumps(hooked.payload("PostToolUse-Bash")).encode(),
        capture_output=True,
        timeout=60,
        env=environ,
        check=False,
    )
    assert result.returncode == 0 and result.stdout == b""
    loaded = {
        line.split("|")[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "runeconsole.services.claude.hooks.hook" in loaded
    for heavy in ("textual", "watchdog", "libtmux", "argparse", "yaml", "filelock"):
        assert heavy not in loaded, heavy
    assert not any(name.startswith("runeconsole.cli") for name in loaded)


@pytest.mark.e2e
def test_a_hook_that_runs_past_its_time_stops_silently(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Stalling(io.BytesIO):
        def read(self, *_: object) -> bytes:
            time.sleep(30)
            return b""

    monkeypatch.setattr(hook, "EVENT_SECONDS", 1)
    started = time.monotonic()
    assert hook.run(Stalling(), {"RUNECONSOLE_ROOT": str(project)}) == ""  # type: ignore[arg-type]
    assert time.monotonic() - started < 10
    log = (project / ".claude" / "state" / "claude" / hook.LOG_NAME).read_text()
    assert "ran past its time" in log


# -- fuzz: in-process, the same code the command runs -----------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
KNOWN = (
    "session_id",
    "transcript_path",
    "cwd",
    "tool_name",
    "tool_input",
    "message",
    "notification_type",
    "source",
    "reason",
    "trigger",
    "tool_use_id",
    "prompt",
    # the newer events' (session_facts, elicitation)
    "error",
    "error_details",
    "last_assistant_message",
    "message_id",
    "delta",
    "index",
    "final",
    "agent_id",
    "agent_type",
    "task_id",
    "task_subject",
    "compact_summary",
    "is_interrupt",
    "old_cwd",
    "new_cwd",
    "mcp_server_name",
    "mode",
    "requested_schema",
    "session_title",
)
payloads = st.fixed_dictionaries(
    {"hook_event_name": st.sampled_from([*EVENTS, "TeammateIdle", "", 7])},
    optional={name: json_values for name in KNOWN},
).map(lambda d: {**d, "tool_name": d.get("tool_name", "AskUserQuestion")})
# A background session's hook environment (its job directory names its short id).
environs = st.fixed_dictionaries(
    {},
    optional={
        "CLAUDE_JOB_DIR": st.sampled_from(["/x/jobs/3decb0de", "/x/jobs/../..", "", "/"])
        | st.text(max_size=20),
        "CLAUDE_PID": st.sampled_from(["4242", "-1", "x"]),
    },
)


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz") / "project"
    git.init_repo(root)
    return root


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=300) | payloads.map(lambda d: json.dumps(d).encode()),
    environ=environs,
)
@pytest.mark.e2e
def test_fuzzed_stdin_never_raises_and_prints_nothing_or_json(
    fuzz_root: Path, data: bytes, environ: dict[str, str]
) -> None:
    out = hook.run(io.BytesIO(data), {"RUNECONSOLE_ROOT": str(fuzz_root), **environ})
    assert out == "" or isinstance(json.loads(out), dict)


@pytest.mark.parametrize("name", sorted(p.stem for p in PAYLOADS.glob("*.json")))
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(noise=st.dictionaries(st.sampled_from(KNOWN), json_values, max_size=4))
@pytest.mark.e2e
def test_every_fixture_with_fields_of_the_wrong_kind_never_raises(
    fuzz_root: Path, name: str, noise: dict[str, object]
) -> None:
    """The payloads Claude Code sent, each with some fields replaced by any JSON value."""
    real = payload(name, fuzz_root, fuzz_root / "transcript.jsonl")
    data = json.dumps({**real, **noise, "hook_event_name": real["hook_event_name"]}).encode()
    out = hook.run(io.BytesIO(data), {"RUNECONSOLE_ROOT": str(fuzz_root)})
    assert out == "" or isinstance(json.loads(out), dict)


schemas = st.recursive(
    json_values,
    lambda inner: st.fixed_dictionaries(
        {"type": st.sampled_from(["object", "string", "integer", "number", "boolean", 3])},
        optional={
            "properties": st.dictionaries(st.text(max_size=5), inner, max_size=3),
            "required": st.lists(st.text(max_size=5), max_size=3) | inner,
            "enum": st.lists(json_values, max_size=3),
            "oneOf": st.lists(inner, max_size=3),
            "minimum": json_values,
            "maximum": json_values,
            "default": json_values,
            "enumNames": json_values,
        },
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(schema=schemas, answer=json_values)
@pytest.mark.e2e
def test_any_schema_is_a_form_or_refused_and_any_answer_checked_or_refused(
    schema: object, answer: object
) -> None:
    from runeconsole.core.errors import InvalidInput
    from runeconsole.services.claude.questions.elicit_form import Form, Unsupported

    try:
        form = Form(schema)
    except Unsupported:
        return
    try:
        action, content = form.response(json.dumps(answer))
    except InvalidInput:
        return
    assert action in ("accept", "decline", "cancel")
    assert content is None or set(content) <= {field.name for field in form.fields}


# The status line's input: every field the recording reads, of any type, beside a
# session the project knows (so the recording reaches the identity and the ledger).
FUZZ_SESSION = "f022aa11-status"


def maybe_object(**fields: st.SearchStrategy) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional=fields) | json_values


status_inputs = st.fixed_dictionaries(
    {"session_id": st.sampled_from([FUZZ_SESSION, "other"]) | json_values},
    optional={
        "cwd": json_values,
        "model": maybe_object(id=json_values, display_name=json_values),
        "workspace": maybe_object(project_dir=json_values),
        "cost": maybe_object(total_cost_usd=json_values | st.floats(0, 1e6)),
        "context_window": maybe_object(
            context_window_size=json_values | st.integers(0, 10**7),
            remaining_percentage=json_values | st.integers(-5, 105),
            current_usage=maybe_object(
                input_tokens=json_values, cache_read_input_tokens=json_values
            ),
        ),
        "rate_limits": maybe_object(
            five_hour=maybe_object(used_percentage=json_values, resets_at=json_values),
            seven_day=json_values,
        ),
    },
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=300) | status_inputs.map(lambda d: json.dumps(d).encode()))
@pytest.mark.e2e
def test_fuzzed_status_line_input_is_recorded_or_refused_and_ours_stays_one_line(
    fuzz_root: Path, data: bytes
) -> None:
    environ = {"RUNECONSOLE_ROOT": str(fuzz_root), "CLAUDE_PROJECT_DIR": str(fuzz_root)}
    start = {"hook_event_name": "SessionStart", "session_id": FUZZ_SESSION, "cwd": "/"}
    hook.run(io.BytesIO(json.dumps(start).encode()), environ)  # the agent, registered
    try:
        status, fields = statusline.record(data, environ)
    except HookInputError:  # not JSON: refused (the process logs it; theirs still runs)
        return
    line = statusline.ours(status, fields)
    assert line and "\n" not in line
