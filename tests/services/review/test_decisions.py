"""Deciding on an agent's work: comments kept in review records, an approval that queues
the branch with its conflicts predicted, and where each agent's work stands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.errors import InvalidInput, RuneError
from runeconsole.services.claude.session.view import AgentView
from runeconsole.services.merge_queue import MergeQueue
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.prompt import compose
from runeconsole.services.review.records import APPROVED, ReviewRecords
from tests.support.merge_queue import commit_in_checkout, git
from tests.support.review import agent_with_worktree, commit, reviews, write


def test_comments_join_one_open_review_with_the_lines_they_quote(
    repo: Path, clock: ManualClock
) -> None:
    key, wt = agent_with_worktree(repo, "a", clock=clock)
    commit(wt, {"app.py": "def handler(request):\n    return 1\n"}, "handler")
    write(wt, {"app.py": "def handler(request):\n    return 2\n"})
    service = reviews(repo, clock)
    service.comment(key, "Validate the body first.", file="app.py", line=1)
    service.comment(key, "Was 1 wrong?", file="app.py", line=2, side="old")
    record = service.comment(key, "Please add tests.")
    assert [(c.place, c.quoted) for c in record.comments] == [
        ("app.py:1", "def handler(request):"),
        ("app.py:2 (before the change)", None),  # app.py is new since the base
        ("the whole change", None),
    ]
    assert len(ReviewRecords(Project(repo)).history(key)) == 1
    kept = json.loads(record.path.read_text())
    assert kept["branch"] == "feat-a" and kept["head"] == git(wt, "rev-parse", "HEAD")
    assert kept["verdict"] is None and record.path.parent == repo / ".claude/state/reviews" / key


def test_a_comment_on_a_removed_line_quotes_the_base(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "b")
    write(wt, {"a.txt": "rewritten\n"})
    record = reviews(repo).comment(key, "Keep this.", file="a.txt", line=1, side="old")
    assert record.comments[0].quoted == "a"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "  "}, "needs some text"),
        ({"text": "x", "line": 3}, "--line needs --file"),
        ({"text": "x", "file": "../../etc/passwd", "line": 1}, "inside the worktree"),
        ({"text": "x", "file": "a.txt", "line": 99}, "no line 99"),
        ({"text": "x", "file": "a.txt", "line": 1, "side": "left"}, "new or old"),
    ],
)
def test_a_bad_comment_is_refused_and_nothing_is_written(
    repo: Path, kwargs: dict, message: str
) -> None:
    key, _ = agent_with_worktree(repo, "c")
    text = kwargs.pop("text")
    with pytest.raises(InvalidInput, match=message):
        reviews(repo).comment(key, text, **kwargs)
    assert ReviewRecords(Project(repo)).history(key) == []


def test_approving_queues_the_branch_with_who_and_where_and_its_conflicts(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "d", node_id="node-7", bead_id="bead-9")
    commit(wt, {"a.txt": "agent's a\n"}, "agent edits a")
    commit_in_checkout(repo, {"a.txt": "operator's a\n"}, "operator edits a")
    service = reviews(repo)
    service.comment(key, "Looks good.")
    approval = service.approve(key)
    entry = approval.entry
    assert approval.created and entry.branch == "feat-d"
    assert (entry.identity, entry.get("worktree_path")) == (key, str(wt))
    assert (entry.get("node_id"), entry.get("bead_id")) == ("node-7", "bead-9")
    assert approval.prediction is not None and approval.prediction.against_main == ["a.txt"]
    assert approval.conflicts() == "with a.txt"
    record = approval.record
    assert record.verdict == APPROVED and record.queue_entry == entry.entry_id
    assert [c.text for c in record.comments] == ["Looks good."]
    assert MergeQueue(Project(repo)).read().find(entry.entry_id) is not None


@pytest.mark.e2e
def test_approving_twice_keeps_one_entry_and_says_what_is_left_out(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "e")
    commit(wt, {"e.txt": "e\n"}, "e")
    write(wt, {"scratch.txt": "not committed\n"})
    service = reviews(repo)
    first = service.approve(key)
    again = service.approve(key)
    assert not again.created and again.entry.entry_id == first.entry.entry_id
    assert "1 uncommitted file(s)" in again.warnings[0]
    assert len(ReviewRecords(Project(repo)).history(key)) == 2


def test_there_is_nothing_to_approve_without_commits_or_a_branch(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "f")
    with pytest.raises(RuneError, match="no commits ahead of main"):
        reviews(repo).approve(key)
    commit(wt, {"f.txt": "f\n"}, "f")
    git(wt, "checkout", "-q", "--detach")
    with pytest.raises(RuneError, match="detached HEAD"):
        reviews(repo).approve(key)
    assert MergeQueue(Project(repo)).read().entries == []


def test_sending_needs_comments(repo: Path) -> None:
    key, _ = agent_with_worktree(repo, "g")
    with pytest.raises(RuneError, match="no comments to send"):
        reviews(repo).send(key)


def test_the_prompt_names_each_line_quotes_it_and_says_what_to_do(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "h")
    commit(wt, {"app.py": "x = 1\ny = 2\n"}, "app")
    service = reviews(repo)
    service.comment(key, "Name it better.", file="app.py", line=2)
    record = service.comment(key, "Add tests\nfor both.")
    prompt = compose(record.comments, service.changes(key))
    head = git(wt, "rev-parse", "HEAD")[:8]
    assert prompt == (
        f"Review comments on your changes (feat-h, 1 commit ahead of main at {head}):\n"
        "\n"
        "1. app.py:2\n"
        "   > y = 2\n"
        "   Name it better.\n"
        "\n"
        "2. the whole change\n"
        "   Add tests\n"
        "   for both.\n"
        "\n"
        "Please address each comment, then commit your work."
    )


def test_an_unreadable_review_is_listed_with_its_reason(repo: Path) -> None:
    key, _ = agent_with_worktree(repo, "i")
    service = reviews(repo)
    service.comment(key, "first")
    directory = repo / ".claude/state/reviews" / key
    (directory / "0099-broken.json").write_text("{not json")
    history = ReviewRecords(Project(repo)).history(key)
    assert history[0].error is not None and "0099-broken.json" in str(history[0].path)
    assert [c.text for c in history[1].comments] == ["first"]
    # the broken newest file is skipped: the comment joins the readable open review
    assert service.comment(key, "second").comments[-1].text == "second"


def view(activity: str | None, waiting_for: str | None = None) -> AgentView:
    return AgentView(activity=activity, waiting_for=waiting_for, from_hooks=True)


@pytest.mark.e2e
def test_review_state_follows_the_agent_and_its_branch(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "j")
    service = reviews(repo)
    registry = Registry(Project(repo))
    record = registry.get(key)
    assert service.state(record, view("busy")) == "working"
    assert service.state(record, view("waiting", "permission: Bash ls")) == "needs_input"
    assert service.state(record, view("idle")) == "none"  # nothing ahead
    commit(wt, {"j.txt": "j\n"}, "j")
    assert service.state(record, view("idle")) == "ready"
    assert service.state(record, view("ended")) == "ready"
    assert service.state(record, view(None)) == "working"  # active, nothing says it stopped
    service.approve(key)
    assert service.state(record, view("idle")) == "approved"
    commit(wt, {"j.txt": "j2\n"}, "more after the approval")
    assert service.state(record, view("idle")) == "ready"


def test_a_landed_approval_is_merged(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "k")
    commit(wt, {"k.txt": "k\n"}, "k")
    service = reviews(repo)
    entry = service.approve(key).entry
    service.queue.update_entry(entry.entry_id, {"status": "completed"})
    record = Registry(Project(repo)).get(key)
    assert service.state(record, view("idle")) == "merged"
    Registry(Project(repo)).register("worker", "nowhere")
    assert service.state(Registry(Project(repo)).get("worker-nowhere"), view("idle")) == "none"
