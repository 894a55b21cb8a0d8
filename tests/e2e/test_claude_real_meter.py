"""The real Claude Code binary (pinned) with ``runeconsole claude install``'s status line,
against the Messages-API stand-in: the user's own status line still on screen, the meter
on the default model's 1,000,000-token window, the cost it reports, a budget hold the
model is told about, and a subscription's rate limits. Skipped, saying why, where the
binary is not installed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runeconsole.services.claude.hooks.hook import LOG_NAME
from tests.support.claude import install
from tests.support.claude_api import Turn, rate_limit_headers, text_turn, tool_turn
from tests.support.claude_binary import (
    BASH_INPUT,
    SUBSCRIPTION,
    ClaudeSession,
    binary,
    new_project,
)
from tests.support.cli import cli_env
from tests.support.polling import wait_until

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(binary()[0] is None, reason=binary()[1] or "Claude Code is installed"),
]
THEIRS = "printf 'their own line: %s\\n' \"$(cat | head -c 12)\""


def identity(root: Path) -> dict:
    """The one agent the session registered (``{}`` until it did)."""
    found = sorted((root / ".claude" / "state" / "identities").glob("claude-*.json"))
    return json.loads(found[0].read_text()) if found else {}


def cost(root: Path) -> float:
    return float(identity(root).get("cost", {}).get("usd") or 0)


def settle(root: Path, usd: float) -> None:
    """Until the status line has booked ``usd`` (it is redrawn a moment after each answer)."""
    wait_until(lambda: abs(cost(root) - usd) < 1e-6, 30)


def test_their_status_line_stays_and_the_meter_is_of_the_real_window(tmp_path: Path) -> None:
    root, home = new_project(tmp_path)
    settings = root / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"statusLine": {"type": "command", "command": THEIRS}}))
    before = settings.read_bytes()
    assert install(root).returncode == 0
    with ClaudeSession(root, home, [text_turn("Done.")], "--permission-mode", "default") as s:
        s.wait_screen(r'their own line: \{"session_id', timeout=60)
        s.type("Say done.")
        s.wait_screen("Done.")
        settle(root, 0.0238)  # what Claude Code itself counts for the stand-in's usage
        agent = identity(root)
        assert agent["context_left_percent"] == 98  # 20,200 of 1,000,000, as it says
        assert agent["claude"]["context_window"] == {
            "model": "claude-opus-5-5",
            "tokens": 1_000_000,
        }
        assert agent["cost"]["estimated"] is False
        assert "their own line" in s.screen()
    assert not (root / ".claude" / "state" / "claude" / LOG_NAME).exists()
    result = install(root, "--dry-run")  # installed exactly so: nothing would change
    assert result.stdout == settings.read_text()
    uninstall = [sys.executable, "-m", "runeconsole", "claude", "uninstall", "--root", str(root)]
    subprocess.run(uninstall, check=True, env=cli_env(), capture_output=True, timeout=60)
    assert settings.read_bytes() == before  # theirs back, byte for byte


def test_a_held_agents_next_tool_call_is_denied_and_the_model_told_why(tmp_path: Path) -> None:
    root, home = new_project(tmp_path)
    (root / ".claude").mkdir()
    (root / ".claude" / "talisman.yml").write_text(
        "runeconsole:\n  budgets:\n    per_day_usd: 0.02\n"
    )
    assert install(root).returncode == 0
    script = [text_turn("First."), tool_turn("Bash", BASH_INPUT), text_turn("Stopped.")]
    with ClaudeSession(root, home, script, "--permission-mode", "default") as session:
        session.wait_screen("Opus 5.5 · ", timeout=60)  # our own line: they had none
        session.type("Start.")
        session.wait_screen("First.")
        settle(root, 0.0238)
        wait_until(lambda: identity(root)["cost"].get("budget", {}).get("state") == "held", 30)
        session.wait_screen("HELD: per_day_usd", timeout=30)  # our line says so, too
        session.type("Make the file.")
        requests = session.api.wait_for_requests(3, timeout=60)
        told = json.dumps(requests[2]["messages"][-1])
        assert "is held: its budget is spent (per_day_usd: $0.02 of $0.02 today" in told, told
        assert "runeconsole budget allow" in told
        session.wait_screen("Stopped.")
    assert not (root / "made-by-bash").exists()
    assert identity(root)["cost"]["budget"]["state"] == "held"


def test_a_subscriptions_rate_limits_reach_the_agent(tmp_path: Path) -> None:
    root, home = new_project(tmp_path)
    assert install(root).returncode == 0
    now = int(time.time())
    headers = rate_limit_headers(now + 3600, used=0.42, seven_day=0.17,
                                 seven_day_reset=now + 3 * 86400)  # fmt: skip
    script = [Turn(text="Done.", headers=headers)]
    with ClaudeSession(
        root, home, script, "--permission-mode", "default", env=SUBSCRIPTION
    ) as session:
        session.wait_screen(" · ", timeout=60)
        session.type("Say done.")
        session.wait_screen("Done.")
        wait_until(lambda: "rate_limits" in identity(root), 30)
        limits = identity(root)["rate_limits"]
        assert limits["five_hour"] == {"used_percentage": 42, "resets_at": now + 3600}
        assert limits["seven_day"]["used_percentage"] == 17
        session.wait_screen("5h 42% · 7d 17%", timeout=30)  # our line shows the plan
