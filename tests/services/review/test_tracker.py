"""The console's tracker: each agent looked at on its hook events and heartbeats, at most
once per ``refresh_seconds``, git asked only when a hook event or a moved file says so."""

from __future__ import annotations

from pathlib import Path

from runeconsole.services.claude.session.view import AgentView
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.review.tracker import ChangeTracker
from tests.support.review import agent_with_worktree, commit, reviews, write


class Tick:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def tracker(root: Path, clock: Tick) -> ChangeTracker:
    return ChangeTracker(reviews(root), 10.0, clock=clock)


def record(root: Path, key: str):
    return Registry(Project(root)).get(key)


def test_an_agent_is_looked_at_once_then_not_again_inside_its_window(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "a")
    clock = Tick()
    track = tracker(repo, clock)
    track.note([record(repo, key)])
    due = track.due()
    assert due == [(key, wt, True)]
    assert track.look(due)[key].changes.files == ()
    write(wt, {"a.txt": "edited\n"})
    Registry(Project(repo)).update(key, {"activity": "busy"})  # a hook event
    track.note([record(repo, key)])
    assert track.due() == []  # inside the 10 s window: put off to its end
    assert track.next_due() == 1010.0
    clock.now = 1010.0
    due = track.due()
    assert due == [(key, wt, True)]
    assert [f.path for f in track.look(due)[key].changes.files] == ["a.txt"]


def test_a_heartbeat_alone_asks_no_git(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "b")
    clock = Tick()
    track = tracker(repo, clock)
    track.note([record(repo, key)])
    track.look(track.due())
    cache = track.reviews.cache
    probes = cache.probed
    Registry(Project(repo)).heartbeat(key)
    clock.now += 11
    track.note([record(repo, key)])
    due = track.due()
    assert due == [(key, wt, False)]
    track.look(due)
    assert cache.probed == probes  # stat only: nothing moved
    commit(wt, {"b.txt": "b2\n"}, "b")  # a commit is seen by stat alone
    Registry(Project(repo)).heartbeat(key)
    clock.now += 11
    track.note([record(repo, key)])
    assert track.look(track.due())[key].changes.ahead == 1


def test_agents_without_a_worktree_are_not_followed(repo: Path) -> None:
    Registry(Project(repo)).register("worker", "plain")
    track = tracker(repo, Tick())
    track.note([record(repo, "worker-plain")])
    assert track.due() == [] and track.next_due() is None


def test_the_state_follows_the_record_as_it_is_now(repo: Path) -> None:
    key, wt = agent_with_worktree(repo, "c")
    commit(wt, {"c.txt": "c2\n"}, "c")
    track = tracker(repo, Tick())
    track.note([record(repo, key)])
    standing = track.look(track.due())[key]
    agent = record(repo, key)
    busy = AgentView(activity="busy", from_hooks=True)
    idle = AgentView(activity="idle", from_hooks=True)
    assert standing.state(agent, busy, None) == "working"
    assert standing.state(agent, idle, None) == "ready"
    reviews(repo).approve(key)
    track.note([agent], force=True)
    assert track.look(track.due())[key].state(agent, idle, None) == "approved"


def test_a_record_recoloured_by_time_alone_is_not_looked_at_again(repo: Path) -> None:
    key, _ = agent_with_worktree(repo, "d")
    clock = Tick()
    track = tracker(repo, clock)
    agent = record(repo, key)
    track.note([agent])
    assert track.look(track.due())  # the first look found its standing
    clock.now += 60
    track.note([agent])  # the same read (the console's tick turned it yellow)
    assert track.due() == [] and track.next_due() is None
    track.note([record(repo, key)])  # read again: looked at (by stat), nothing new found
    assert track.look(track.due()) == {}
