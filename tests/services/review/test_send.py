"""``review send``: the open review's comments reach the agent as one prompt, through the
reply service's ``say``, with a real process reading pastes in a private tmux server."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from runeconsole.services.project import Project
from runeconsole.services.reply import Refused
from runeconsole.services.review.records import CHANGES_REQUESTED, ReviewRecords
from tests.support.paste_reader import PASTE_END, PASTE_START
from tests.support.polling import wait_until
from tests.support.replies import TmuxAgents, reader
from tests.support.review import commit, reviews, worktree_for


def spawn_in_worktree(tmux_agents: TmuxAgents, name: str) -> tuple[str, Path, Path]:
    worktree = worktree_for(tmux_agents.root, name)
    log = tmux_agents.root.parent / f"{name}.log"
    tmux_agents.supervisor.spawn("worker", name, reader(log), worktree=worktree)
    wait_until(log.exists, 20, what=f"{name} ready")
    return f"worker-{name}", worktree, log


def test_the_comments_arrive_as_one_paste_and_the_review_ends(
    tmux_agents: TmuxAgents,
) -> None:
    key, worktree, log = spawn_in_worktree(tmux_agents, "a")
    commit(worktree, {"app.py": "def handler(request):\n    return 1\n"}, "handler")
    service = reviews(tmux_agents.root)
    service.comment(key, "Validate the body first.", file="app.py", line=1)
    service.comment(key, "Add a test.")
    sent = service.send(key)
    assert sent.comments == 2
    assert "1. app.py:1\n   > def handler(request):\n   Validate the body first." in sent.prompt
    expected = PASTE_START + sent.prompt.replace("\n", "\r").encode() + PASTE_END + b"\r"
    wait_until(lambda: len(log.read_bytes()) >= len(expected), 10, what="the paste")
    assert log.read_bytes() == expected
    [record] = ReviewRecords(Project(tmux_agents.root)).history(key)
    assert record.verdict == CHANGES_REQUESTED and record.get("prompt") == sent.prompt
    assert record.get("sent_at") is not None


def test_a_refused_send_types_nothing_and_keeps_the_review_open(
    tmux_agents: TmuxAgents,
) -> None:
    key, worktree, log = spawn_in_worktree(tmux_agents, "b")
    commit(worktree, {"b.txt": "b\n"}, "b")
    tmux_agents.registry.update(
        key, {"activity": "waiting", "waiting_for": "permission: Bash rm -rf build"}
    )
    service = reviews(tmux_agents.root)
    service.comment(key, "Careful.")
    with pytest.raises(Refused, match="permission"):
        service.send(key)
    time.sleep(0.3)
    assert log.read_bytes() == b""
    [record] = ReviewRecords(Project(tmux_agents.root)).history(key)
    assert record.open and [c.text for c in record.comments] == ["Careful."]
