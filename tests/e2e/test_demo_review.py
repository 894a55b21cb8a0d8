"""The demo's review flow with a real fake agent in tmux: it commits its work and stops
(ready for review), a review's comment is sent to it as a prompt, and it commits a fix."""

from __future__ import annotations

from pathlib import Path

from runeconsole.adapters.tmux import Tmux
from runeconsole.demo.fleet import agent_worktree
from runeconsole.demo.project import make_project
from runeconsole.demo.review_work import COMMENT, review_one
from runeconsole.services.project import Project
from runeconsole.services.review.records import CHANGES_REQUESTED, ReviewRecords
from runeconsole.services.review.service import Reviews
from runeconsole.services.supervision.service import Supervisor, SupervisorSettings
from tests.support.polling import wait_until
from tests.support.tmux import fake_agent


def test_a_ready_agent_gets_a_review_comment_and_commits_a_fix(
    tmp_path: Path, tmux_socket: str
) -> None:
    root = make_project(tmp_path / "demo", tmux_socket)
    supervisor = Supervisor(
        Project(root), settings=SupervisorSettings(socket_name=tmux_socket), tmux=Tmux(tmux_socket)
    )
    key = "worker-schema"
    worktree = agent_worktree(root, key)
    supervisor.spawn(
        "worker", "schema", fake_agent(key, root, "--ready-at", "0.5"), worktree=worktree
    )
    reviews = Reviews(Project(root))
    record = lambda: supervisor.registry.get(key)  # noqa: E731
    wait_until(lambda: reviews.state(record()) == "ready", 30, what="ready for review")
    assert reviews.changes(key).ahead == 1
    prompt = review_one(root, key, "schema")
    assert COMMENT in prompt and "src/schema.py:8" in prompt
    wait_until(lambda: reviews.changes(key).ahead == 2, 30, what="the fix committed")
    [review] = ReviewRecords(Project(root)).history(key)
    assert review.verdict == CHANGES_REQUESTED
    wait_until(lambda: reviews.state(record()) == "ready", 30, what="ready again")
