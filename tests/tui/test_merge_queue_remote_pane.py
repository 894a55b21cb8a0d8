"""The Merge queue pane of a queue that lands on a remote: the header's second line says
where main is (here and on the remote, the last fetch's age, races, the last error), `f`
fetches, and the detail shows a pull request, a teammate's branch and a wait for the
remote. Real git: a bare ``origin``, the project a clone of it, a teammate's clone."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from runeconsole.adapters.clock import ManualClock
from runeconsole.core.timeutil import iso_z
from runeconsole.services.merge_queue import MergeQueue, QueueEntry
from runeconsole.services.merge_queue.model import REMOTE_STATE
from runeconsole.services.project import Project
from runeconsole.tui.console.app import RuneConsole
from runeconsole.tui.panes.merge_queue_pane import MergeQueuePane
from runeconsole.tui.panes.merge_queue_rows import detail_text, search_fields, status_cell
from tests.support.console import settle
from tests.support.merge_queue import (
    commit_in_checkout,
    commit_on,
    git,
    ignore_state,
    write_talisman,
)
from tests.support.paths import SNAP
from tests.tui.test_merge_queue_pane import build_project, console, open_queue

# Every commit the same on every run (the remote's tip is shown, seven digits of it).
FIXED_GIT = {
    "GIT_AUTHOR_NAME": "runeconsole",
    "GIT_AUTHOR_EMAIL": "runeconsole@example.invalid",
    "GIT_COMMITTER_NAME": "runeconsole",
    "GIT_COMMITTER_EMAIL": "runeconsole@example.invalid",
    "GIT_AUTHOR_DATE": "2026-02-26T11:00:00Z",
    "GIT_COMMITTER_DATE": "2026-02-26T11:00:00Z",
}
BASE = {"src/api.py": "def handler():\n    return 1\n", "src/db.py": "SCHEMA = 1\n"}
TIMED_OUT = "ssh: connect to host git.example.com port 22: Connection timed out"


@pytest.fixture(autouse=True)
def fixed_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FIXED_GIT.items():
        monkeypatch.setenv(name, value)


@dataclass
class Team:
    origin: Path  # the bare remote
    project: Path  # our clone, the queue's root; its queue lands on origin/main
    mate: Path  # a teammate's clone

    def mate_pushes(self, files: dict[str, str], message: str = "teammate's work") -> str:
        git(self.mate, "pull", "--quiet", "--ff-only", "origin", "main")
        commit = commit_in_checkout(self.mate, files, message)
        git(self.mate, "push", "--quiet", "origin", "main")
        return commit

    def mate_branch(self, branch: str, files: dict[str, str]) -> str:
        """A teammate's branch on origin, fetched here (``origin/<branch>``)."""
        commit = commit_on(self.mate, branch, files, base="origin/main", message=branch)
        git(self.mate, "push", "--quiet", "origin", f"{branch}:refs/heads/{branch}")
        git(self.project, "fetch", "--quiet", "origin", branch)
        return commit


def make_team(base: Path, project: Path) -> Team:
    """``origin`` holding main with the base files, cloned as ``project`` (its talisman
    says ``remote: origin``) and as the teammate's ``mate``."""
    origin, mate = base.resolve() / "origin.git", base.resolve() / "mate"
    git(base, "init", "--quiet", "--bare", "-b", "main", str(origin))
    git(base, "clone", "--quiet", str(origin), str(project.resolve()))
    git(project, "symbolic-ref", "HEAD", "refs/heads/main")  # whatever git's default
    (project / "src").mkdir()
    commit_in_checkout(project, BASE, "service skeleton")
    git(project, "push", "--quiet", "origin", "main")
    git(base, "clone", "--quiet", str(origin), str(mate))
    ignore_state(project)
    write_talisman(project, "true", remote="origin")
    return Team(origin, project, mate)


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return make_team(tmp_path, tmp_path / "project")


def clock_ahead() -> ManualClock:
    """The queue's clock, an hour from now: the last fetch is the queue's own, on its
    clock, whatever the file system's says."""
    return ManualClock(datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1))


def where_line(pane: MergeQueuePane) -> str:
    return str(pane.where_line.render())


async def test_the_header_says_where_main_is_here_and_on_the_remote_and_the_age_moves(
    team: Team,
) -> None:
    commit_in_checkout(team.project, {"notes.txt": "mine\n"}, "a local commit")
    clock = clock_ahead()
    async with console(team.project, clock).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        tip = git(team.project, "rev-parse", "origin/main")[:7]
        assert pane.where_line.display
        assert where_line(pane) == f"origin/main {tip} · local 1 ahead · never fetched"
        await pilot.press("f")
        await settle(pilot)
        assert "· fetched 0s ago" in where_line(pane)
        clock.advance(180)
        pane.tick()
        await pilot.pause()
        assert "· fetched 3m00s ago" in where_line(pane)
        assert "running · depth 0" in str(pane.query_one("#mq-header").render())


async def test_f_fetches_and_a_teammates_push_shows_up_as_behind(team: Team) -> None:
    async with console(team.project, clock_ahead()).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        assert "local even" in where_line(pane)
        pushed = team.mate_pushes({"src/api.py": "def handler():\n    return 2\n"})
        await pilot.press("f")
        await settle(pilot)
        assert f"origin/main {pushed[:7]} · local 1 behind" in where_line(pane)
        said = [n for n in pilot.app._notifications if n.severity != "information"]
        assert said == []  # nothing to warn of


async def test_a_fetch_that_cannot_reach_the_remote_warns_and_the_line_says_so_in_red(
    team: Team,
) -> None:
    git(team.project, "remote", "set-url", "origin", str(team.origin.parent / "gone.git"))
    app = console(team.project, clock_ahead())
    async with app.run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        await pilot.press("f")
        await settle(pilot)
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert len(warnings) == 1 and "origin is unreachable" in warnings[0]
        shown = pane.where_line.content
        assert isinstance(shown, Text)
        error = shown.plain.splitlines()[1]
        assert error.startswith("unreachable 0s ago: ") and "gone.git" in error
        assert any(span.style == "red" for span in shown.spans)


class WhereNoting:
    """``MergeQueue.where`` noting whether each call ran on the UI (main) thread."""

    def __init__(self, where: Callable[[], Any]) -> None:
        self.where = where
        self.on_ui_thread: list[bool] = []

    def __call__(self) -> Any:
        self.on_ui_thread.append(threading.current_thread() is threading.main_thread())
        return self.where()


async def test_where_main_is_is_asked_of_git_off_the_ui_thread_never_on_a_tick(
    team: Team,
) -> None:
    async with console(team.project, clock_ahead()).run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        pane.queue.where = noting = WhereNoting(pane.queue.where)  # type: ignore[method-assign]
        for _ in range(3):
            pane.tick()
        assert noting.on_ui_thread == []  # the age redrawn from what was read
        pane.rescan()
        await settle(pilot)
        assert noting.on_ui_thread == [False]


async def test_a_queue_on_the_local_main_has_no_remote_line_and_f_says_why(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    clock = build_project(root)
    app = console(root, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        pane = await open_queue(pilot)
        assert not pane.where_line.display
        await pilot.press("f")
        await pilot.pause()
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert warnings and "no remote to fetch" in warnings[0]


# -- the detail of an entry -----------------------------------------------------------------

NOW = datetime(2026, 2, 26, 12, 0, 0, tzinfo=UTC)


def entry(**fields: Any) -> QueueEntry:
    base = {"entry_id": "mq-x-1", "branch": "feat/x", "status": "pending", "attempts": 0}
    return QueueEntry({**base, **fields}, 0)


def test_the_detail_names_the_pull_request_and_the_filter_finds_it() -> None:
    shown = detail_text(entry(pr_number=12), None, NOW, "origin").plain
    assert shown.startswith("mq-x-1  feat/x  PR #12  pending")
    assert "#12" in search_fields(entry(pr_number=12))


def test_the_detail_says_a_branch_is_a_teammates_on_the_remote_or_one_the_queue_pushed() -> None:
    mate = entry(branch="origin/feat/ui", remote="origin", remote_branch="feat/ui")
    assert "a teammate's branch on origin: feat/ui" in detail_text(mate, None, NOW).plain
    ours = entry(remote="origin", remote_branch="feat/x", pushed_by_us=True)
    said = detail_text(ours, None, NOW).plain
    assert "pushed to origin as feat/x by the queue: deleted there once it lands" in said


def test_an_entry_waiting_for_the_remote_says_why_which_try_and_when_the_next() -> None:
    wait = {
        "reason": TIMED_OUT,
        "tries": 3,
        "next_try_in_seconds": 8.0,
        "since": iso_z(NOW - timedelta(seconds=80)),
    }
    waiting = entry(
        status="in_progress",
        batch_id="b1",
        processor_pid=os.getpid(),
        current_step="waiting for origin",
        remote_wait=wait,
    )
    lines = detail_text(waiting, None, NOW, "origin").plain.splitlines()
    assert lines[1] == f"waiting for origin 1m20s: {TIMED_OUT} · try 3, next in 8s"
    assert lines[2] == "in batch b1"
    assert status_cell(waiting).plain == "waiting b1"
    recovered = entry(current_step="waiting for origin", remote_wait=wait)  # its run killed
    assert "waiting for" not in detail_text(recovered, None, NOW, "origin").plain


def test_an_entry_given_up_on_says_it_is_back_in_the_queue_until_it_is_taken_again() -> None:
    gave_up = {"reason": TIMED_OUT, "gave_up_at": iso_z(NOW - timedelta(minutes=5))}
    lines = detail_text(entry(remote_wait=gave_up), None, NOW, "origin").plain.splitlines()
    assert lines[1] == f"gave up waiting for origin 5m00s ago: {TIMED_OUT}; back in the queue"
    landed = entry(status="completed", remote_wait=gave_up)
    assert "gave up" not in detail_text(landed, None, NOW, "origin").plain


# -- snapshots ------------------------------------------------------------------------------

SNAP_ROOT = SNAP / "merge-queue-remote"


def build_scene(base: Path, project: Path, clock: ManualClock) -> MergeQueue:
    """origin unreachable now: the head entry (a teammate's branch, PR #42) waits for it,
    try 3; two more wait behind it, one pushed there by the queue; the last fetch 12
    minutes ago saw a teammate's push (local main one behind), one push lost a race."""
    team = make_team(base, project)
    queue = MergeQueue(Project(project, clock))
    team.mate_branch("feat/search-ui", {"src/search.py": "UI = 1\n"})
    here = project.resolve()  # a private index file git finds from anywhere
    commit_on(here, "feat/auth-tokens", {"src/auth.py": "TOKENS = 1\n"})
    commit_on(here, "feat/billing-api", {"src/api.py": "# bill\n"})
    team.mate_pushes({"src/db.py": "SCHEMA = 2\n"}, "teammate: schema 2")
    git(project, "fetch", "--quiet", "origin", "main")
    os.utime(Path(project, ".git", "FETCH_HEAD"), (clock.now().timestamp(),) * 2)
    fetched = iso_z(clock.now())
    head, _ = queue.add("origin/feat/search-ui", identity="mate-search", pr_number=42)
    clock.advance(60)
    queue.add("feat/auth-tokens", identity="orchestrator-auth", pr_number=12)
    clock.advance(90)
    queue.add("feat/billing-api", identity="worker-billing", push=True)
    clock.advance(9 * 60 + 30)
    queue.claim_batch([head], "b1")
    wait = {"reason": TIMED_OUT, "tries": 3, "next_try_in_seconds": 8.0}
    wait["since"] = iso_z(clock.now() - timedelta(seconds=80))
    queue.update_entry(head.entry_id, {"current_step": "waiting for origin", "remote_wait": wait})
    kept = {"name": "origin", "branch": "main", "last_fetch_at": fetched, "races": 1}
    kept.update(last_error=TIMED_OUT, error_at=iso_z(clock.now() - timedelta(seconds=40)))
    queue.write_later({REMOTE_STATE: kept})
    queue.flush()
    clock.advance(60)
    return queue


@pytest.fixture
def snap_scene(snap_dir: Path) -> tuple[Path, ManualClock]:
    clock = ManualClock()
    SNAP_ROOT.parent.mkdir(parents=True, exist_ok=True)
    build_scene(SNAP_ROOT.parent, SNAP_ROOT, clock)
    return SNAP_ROOT, clock


@pytest.mark.parametrize("size", [(80, 24), (140, 32)])
def test_snapshot_merge_queue_on_a_remote(snap_compare, snap_scene, size) -> None:
    root, clock = snap_scene

    async def run_before(pilot) -> None:
        pane = await open_queue(pilot)
        pane.table.move_cursor(row=0)
        await pilot.pause()

    app: RuneConsole = console(root, clock)
    assert snap_compare(app, terminal_size=size, run_before=run_before)
