"""Every CLI write on a full disk: a clear message, nothing half-written (the files as they
were, no temp file left), and the same command works once space returns."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from tests.disk.conftest import Scene
from tests.support.cli import cli_env

FULL = "was not written: the disk is full (no space left on device): free some space"


def runeconsole(scene: Scene, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runeconsole", *args, "--root", str(scene.root)],
        capture_output=True, text=True, timeout=60, env=cli_env(), check=False,
    )  # fmt: skip


# Each write path: its command (made from the scene), and what shows it went through.
ACTIONS: dict[str, tuple[Callable[[Scene], list[str]], Callable[[Scene], bool]]] = {
    "a question's answer": (
        lambda s: ["question", "answer", s.question, "--option", "A"],
        lambda s: (s.root / "tmp/.rune-signals" / f"{s.question}.answer").exists(),
    ),
    "a permission decision": (
        lambda s: ["permissions", "decide", s.request, "--deny", "--message", "not now"],
        lambda s: "decision" in str(list((s.root / "tmp/.rune-signals/claude-code").iterdir())),
    ),
    "a decision and its rule": (
        lambda s: ["permissions", "decide", s.request, "--allow", "--always"],
        lambda s: "npm test --n 0" in (s.paths.state / "permission-rules.json").read_text(),
    ),
    "a new rule": (
        lambda s: ["permissions", "deny", "Bash", "rm -rf /"],
        lambda s: "rm -rf /" in (s.paths.state / "permission-rules.json").read_text(),
    ),
    "a rule taken out": (
        lambda s: ["permissions", "remove", s.rule],
        lambda s: s.rule not in (s.paths.state / "permission-rules.json").read_text(),
    ),
    "a branch queued": (
        lambda s: ["merge-queue", "add", "--branch", "feat/lexer"],
        lambda s: "feat/lexer" in s.paths.merge_queue.read_text(),
    ),
    "a queue entry removed": (
        lambda s: ["merge-queue", "remove", s.entry],
        lambda s: (
            s.entry
            not in [e["entry_id"] for e in json.loads(s.paths.merge_queue.read_text())["entries"]]
        ),
    ),
    "the queue paused": (
        lambda s: ["merge-queue", "pause"],
        lambda s: '"paused":true' in s.paths.merge_queue.read_text().replace(" ", ""),
    ),
    "a budget lifted": (
        lambda s: ["budget", "allow", "claude-web-0000", "--usd", "5"],
        lambda s: (
            "allowance" in (s.paths.state / "cost/agents/claude-web-0000.json").read_text()
            if (s.paths.state / "cost/agents/claude-web-0000.json").exists()
            else False
        ),
    ),
    "a suspended task resumed": (
        lambda s: ["suspended", "resume", "7"],
        lambda s: "resume_count: 1" in s.context.read_text(),
    ),
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_on_a_full_disk_every_write_fails_cleanly_and_works_once_space_returns(
    scene: Scene, action: str
) -> None:
    command, done = ACTIONS[action]
    before = scene.files()
    scene.disk.fill()

    refused = runeconsole(scene, *command(scene))

    assert refused.returncode == 1, refused
    assert FULL in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    assert scene.disk.temp_files() == []
    assert scene.files() == before  # nothing half-written, nothing lost
    assert not done(scene)
    scene.disk.free()
    again = runeconsole(scene, *command(scene))
    assert again.returncode == 0, again.stderr
    assert done(scene)


def test_a_prune_on_a_full_disk_moves_nothing_and_says_why(scene: Scene) -> None:
    from datetime import UTC, datetime, timedelta

    from tests.support.old_records import decided_requests

    old = decided_requests(scene.root, 20, newest=datetime.now(UTC) - timedelta(days=30))
    before = scene.files()
    scene.disk.fill()

    refused = runeconsole(scene, "prune")

    assert refused.returncode == 1 and FULL in refused.stderr, refused
    assert scene.files() == before and scene.disk.temp_files() == []
    scene.disk.free()
    assert runeconsole(scene, "prune").returncode == 0
    listed = runeconsole(scene, "permissions", "history", "--all", "--json")
    assert all(request_id in listed.stdout for request_id in old)


def test_a_disk_full_between_the_decision_and_its_rule_says_which_stands(scene: Scene) -> None:
    scene.disk.fill(leave_pages=2)  # room for the journal and the decision, not the rules

    refused = runeconsole(scene, "permissions", "decide", scene.request, "--allow", "--always")

    assert refused.returncode == 1
    assert f"{scene.request} is allowed once, but the rule was not saved" in refused.stderr
    assert "runeconsole permissions allow Bash 'npm test --n 0' --agent" in refused.stderr
    assert scene.disk.temp_files() == []
    decided = runeconsole(scene, "permissions", "history", "--json")
    assert '"behavior": "allow"' in decided.stdout.replace('":"', '": "')
