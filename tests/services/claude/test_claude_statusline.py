"""``runeconsole claude statusline``, the installed command run as Claude Code runs it: the
user's own line shown unchanged (stdin, output, exit status), and what the JSON says
recorded for the agent: the real context window, the cost, the plan's rate limits."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from runeconsole.services.claude.hooks.hook import LOG_NAME
from tests.support.claude import KEY, Bridge, bridge

pytestmark = pytest.mark.timeout(120)

# Their line: what it was given goes to a file, a line with colours out, and exit 3.
THEIRS = 'cat > "$SEEN"; printf \'their \\033[1mline\\033[0m %s\\n\' "$PWD"; exit 3'


def their_settings(project: Path, **extra: object) -> Path:
    path = project / ".claude" / "settings.local.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {"type": "command", "command": THEIRS, "padding": 2, **extra}
    path.write_text(json.dumps({"statusLine": line}, indent=2) + "\n")
    return path


def log(made: Bridge) -> list[str]:
    path = made.paths.claude_bridge / LOG_NAME
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.e2e
def test_their_line_runs_with_the_same_stdin_and_shows_unchanged(
    project: Path, tmp_path: Path
) -> None:
    their_settings(project)
    seen = tmp_path / "seen.json"
    with bridge(project) as made:
        made.send("SessionStart")
        data = json.dumps(made.status_input("after-a-turn")).encode()
        result = made.status_line(data, SEEN=str(seen))
        assert result.returncode == 3  # theirs, kept
        assert result.stdout == f"their \033[1mline\033[0m {project}\n".encode()
        assert result.stderr == b""
        assert seen.read_bytes() == data
        assert made.identity()["cost"]["usd"] == pytest.approx(0.0238)
        assert log(made) == []


@pytest.mark.e2e
def test_without_a_line_of_their_own_ours_is_short(hooked: Bridge) -> None:
    hooked.send("SessionStart")
    result = hooked.status_line(hooked.status_input("subscription"))
    assert result.returncode == 0
    assert result.stdout.decode() == "Sonnet 5.5 · 100% context left · $1.46 · 5h 42% · 7d 17%\n"


@pytest.mark.e2e
def test_the_runeconsole_command_shows_the_same_line_as_the_installed_one(
    hooked: Bridge,
) -> None:
    hooked.send("SessionStart")
    data = json.dumps(hooked.status_input("subscription")).encode()
    script = Path(sys.executable).parent / "runeconsole"
    typed = subprocess.run(
        [str(script), "claude", "statusline"],
        input=data,
        capture_output=True,
        timeout=60,
        cwd=hooked.project,
        env=hooked.runner.environ | {"CLAUDE_PROJECT_DIR": str(hooked.project)},
        check=False,
    )
    assert typed.returncode == 0, typed.stderr
    assert typed.stdout == hooked.status_line(data).stdout


@pytest.mark.e2e
def test_the_real_window_and_cost_replace_the_assumed_ones(hooked: Bridge) -> None:
    hooked.write_usage("msg_1", input=1200, output=40, cache_read=16000, cache_creation=3000)
    hooked.send("SessionStart")
    before = hooked.identity()
    assert before["context_left_percent"] == 98  # the model's window, from the table
    assert before["cost"]["estimated"] is True
    assert before["cost"]["usd"] == pytest.approx(0.0238)  # estimated at its price
    hooked.status_line(hooked.status_input("after-a-turn"))
    after = hooked.identity()
    assert after["context_left_percent"] == 98  # remaining_percentage: the same figure
    assert after["claude"]["context_window"] == {"model": "claude-opus-5-5", "tokens": 1_000_000}
    assert after["cost"]["usd"] == pytest.approx(0.0238) and after["cost"]["estimated"] is False
    # Once the status line spoke for the session, the hook's estimate no longer counts.
    hooked.write_usage("msg_2", input=99999, output=99999)
    hooked.send("PostToolUse-Bash")
    assert hooked.identity()["cost"]["usd"] == pytest.approx(0.0238)


@pytest.mark.e2e
def test_a_configured_window_overrides_what_claude_code_reports(hooked: Bridge) -> None:
    talisman = hooked.project / ".claude" / "talisman.yml"
    talisman.write_text("runeconsole:\n  claude:\n    context_window_tokens: 40000\n")
    hooked.send("SessionStart")
    hooked.status_line(hooked.status_input("after-a-turn"))
    assert hooked.identity()["context_left_percent"] == 49  # 20,200 of 40,000 in use


@pytest.mark.e2e
def test_the_plans_rate_limits_are_recorded(hooked: Bridge) -> None:
    hooked.send("SessionStart")
    hooked.status_line(hooked.status_input("subscription"))
    limits = hooked.identity()["rate_limits"]
    assert limits["five_hour"] == {"used_percentage": 42, "resets_at": 1795640650}
    assert limits["seven_day"]["used_percentage"] == 17 and "reported_at" in limits


@pytest.mark.e2e
def test_a_line_that_changes_nothing_shown_writes_nothing(hooked: Bridge) -> None:
    hooked.send("SessionStart")
    data = hooked.status_input("after-a-turn")
    hooked.status_line(data)
    path = hooked.paths.identities / f"{KEY}.json"
    stamp = os.stat(path).st_mtime_ns
    for redraw in range(3):  # Claude Code redraws: durations and cache figures move
        hooked.status_line({**data, "cost": {**data["cost"], "total_duration_ms": redraw}})
    assert os.stat(path).st_mtime_ns == stamp


def test_a_session_not_registered_yet_is_not_recorded(hooked: Bridge) -> None:
    result = hooked.status_line(hooked.status_input("start"))
    assert result.returncode == 0 and result.stdout.startswith(b"Opus 5.5")
    assert not hooked.paths.identities.exists()
    assert log(hooked) == []


@pytest.mark.parametrize(
    "data",
    [b"", b"not JSON", b"[1, 2]", b'{"session_id": 7, "cwd": []}', b"\xff\xfe",
     b'{"x": "' + b"y" * (2 * 1024 * 1024) + b'"}'],
    ids=["nothing", "not JSON", "a list", "wrong types", "not UTF-8", "over the cap"],
)  # fmt: skip
@pytest.mark.e2e
def test_bad_input_still_shows_their_line(project: Path, tmp_path: Path, data: bytes) -> None:
    their_settings(project)
    with bridge(project) as made:
        result = made.status_line(data, SEEN=str(tmp_path / "seen"))
        assert (result.returncode, result.stderr) == (3, b"")
        assert result.stdout.startswith(b"their ")
        assert len(log(made)) <= 1  # a line for what could not be read, and nothing else
        assert not made.paths.identities.exists()


@pytest.mark.e2e
def test_a_line_whose_program_is_missing_keeps_the_shells_status(project: Path) -> None:
    path = their_settings(project)
    data = json.loads(path.read_text())
    data["statusLine"]["command"] = "no-such-status-program --short"
    path.write_text(json.dumps(data))
    with bridge(project) as made:
        made.send("SessionStart")
        result = made.status_line(made.status_input("after-a-turn"))
        assert (result.returncode, result.stdout) == (127, b"")  # Claude Code shows no line
        assert b"no-such-status-program" in result.stderr  # the shell's words, as without us
        assert made.identity()["cost"]["usd"] == pytest.approx(0.0238)  # recorded all the same


@pytest.mark.parametrize("chained", [False, True], ids=["ours alone", "theirs chained"])
@pytest.mark.e2e
def test_the_status_line_loads_no_console_watcher_tmux_parser_or_yaml(
    project: Path, chained: bool
) -> None:
    if chained:
        their_settings(project)
    with bridge(project) as made:
        made.send("SessionStart")
        settings = json.loads((project / ".claude" / "settings.local.json").read_text())
        words = shlex.split(settings["statusLine"]["command"])
        data = json.dumps(made.status_input("after-a-turn")).encode()
        for argv in ([*words[:6], "--record"], words) if chained else (words,):
            result = subprocess.run(
                [argv[0], "-X", "importtime", *argv[1:]],
                input=data,
                capture_output=True,
                timeout=60,
                env=made.runner.environ | {"CLAUDE_PROJECT_DIR": str(project), "SEEN": "/dev/null"},
                cwd=project,
                check=False,
            )
            loaded = {
                line.split("|")[-1].strip()
                for line in result.stderr.decode().splitlines()
                if line.startswith("import time:")
            }
            assert "runeconsole.services.claude.statusline.statusline" in loaded
            for heavy in ("textual", "rich", "watchdog", "libtmux", "argparse", "yaml", "filelock"):
                assert heavy not in loaded, (argv, heavy)
            if argv is words and chained:  # the recording is the other process's: this one
                assert "runeconsole.services.claude.session.meter" not in loaded  # runs theirs only
                assert "json" not in loaded
        assert made.identity()["cost"]["usd"] == pytest.approx(0.0238)
