"""``runeconsole events``: a whole snapshot, then one line per change, heartbeats, and a
clean end when the reader goes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runeconsole.adapters.clock import ManualClock
from runeconsole.services.events import EventStream
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from tests.support.cli import cli_env
from tests.support.merge_queue import git
from tests.support.questions import ask
from tests.support.suspended import write_context

EVENTS = [sys.executable, "-m", "runeconsole", "events", "--follow", "--json"]


def by_kind(events: list[dict[str, Any]]) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for event in events:
        if event["event"] == "upsert":
            kinds.setdefault(event["kind"], set()).add(event["key"])
    return kinds


def test_without_follow_the_snapshot_holds_every_kind_then_ready(
    project: Path, cli: Callable
) -> None:
    assert (
        cli("agent", "register", "--role", "worker", "--name", "a", "--root", str(project)).code
        == 0
    )
    ask(project)
    write_context(project)
    git(project, "branch", "feature/x")
    assert cli("merge-queue", "add", "--branch", "feature/x", "--root", str(project)).code == 0

    result = cli("events", "--json", "--root", str(project))

    assert result.code == 0, result.err
    events = [json.loads(line) for line in result.out.splitlines()]
    assert events[0]["event"] == "snapshot" and events[0]["protocol"] == 1
    assert events[0]["root"] == str(project.resolve())
    assert events[-1] == {"event": "ready", "at": events[-1]["at"], "rows": len(events) - 2}
    kinds = by_kind(events)
    assert kinds["agent"] == {"worker-a"}
    assert kinds["question"] == {"rune-work-20261123-120000/task-1.q1"}
    assert len(kinds["suspended"]) == 1
    assert len(kinds["queue"]) == 1 and kinds["queue-state"] == {"queue"}


def streamed(project: Path, clock: ManualClock) -> tuple[Registry, EventStream]:
    """An agent ``worker-a`` registered, and a stream that has told its snapshot."""
    registry = Registry(Project(project, clock))
    registry.register("worker", "a")
    stream = EventStream(Project(project, clock, strict=False))
    stream.snapshot()
    return registry, stream


def test_a_change_is_one_line_an_unchanged_reread_none_and_a_removal_a_remove(
    project: Path, clock: ManualClock
) -> None:
    registry, stream = streamed(project, clock)
    identity = registry.path_for("worker-a")

    assert stream.apply_paths({identity}) == []  # read again, nothing moved
    clock.advance(10)
    registry.heartbeat("worker-a")
    (event,) = stream.apply_paths({identity})
    assert event["event"] == "upsert" and event["data"]["last_seen"] == registry.get(
        "worker-a"
    ).get("last_seen")
    identity.unlink()
    assert stream.apply_paths({identity}) == [
        {"event": "remove", "kind": "agent", "key": "worker-a"}
    ]


def test_time_alone_turns_an_agent_yellow_on_the_tick_and_the_rescan_finds_missed_files(
    project: Path, clock: ManualClock
) -> None:
    registry, stream = streamed(project, clock)
    assert stream.tick() == []
    clock.advance(150)
    (event,) = stream.tick()
    assert event["data"]["liveness"] == "yellow"
    registry.register("worker", "b")  # no file event given: only the rescan sees it
    assert [(e["event"], e["key"]) for e in stream.rescan()] == [("upsert", "worker-b")]
    assert stream.rescan() == []


def test_the_monitors_saved_readings_come_and_go_as_observation_rows(
    project: Path, clock: ManualClock
) -> None:
    stream = EventStream(Project(project, clock, strict=False))
    stream.snapshot()
    saved = project / ".claude/state/supervisor/observations.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    reading = {"key": "worker-a", "agent_id": None, "tmux_session": "s", "state": "running"}
    saved.write_text(json.dumps({"agents": {"worker-a": {**reading, "observed_at": "x"}}}))
    (event,) = stream.apply_paths({saved})
    assert (event["kind"], event["key"], event["data"]["state"]) == (
        "observation",
        "worker-a",
        "running",
    )
    saved.write_text(json.dumps({"agents": {}}))
    assert stream.apply_paths({saved}) == [
        {"event": "remove", "kind": "observation", "key": "worker-a"}
    ]


# -- the real process --------------------------------------------------------------------


class Reader:
    """Lines of a running ``events --follow --json``, with deadlines."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.buffer = ""

    def line(self, timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        stdout = self.process.stdout
        assert stdout is not None
        while "\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([stdout], [], [], max(0.0, left))
            if not ready:
                raise AssertionError(f"no line within {timeout}s (have {self.buffer!r})")
            chunk = os.read(stdout.fileno(), 65536).decode()
            if not chunk:
                raise AssertionError("the stream ended")
            self.buffer += chunk
        line, self.buffer = self.buffer.split("\n", 1)
        return json.loads(line)

    def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            event = self.line()
            if predicate(event):
                return event


@pytest.fixture
def following(project: Path) -> Iterator[Reader]:
    process = subprocess.Popen(
        [*EVENTS, "--heartbeat", "0.5", "--root", str(project)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    yield Reader(process)
    process.kill()
    process.wait(timeout=10)


@pytest.mark.e2e
def test_following_a_project_tells_each_change_as_it_happens_and_beats_when_quiet(
    following: Reader, project: Path, run_cli: Callable
) -> None:
    assert following.line()["event"] == "snapshot"
    assert following.until(lambda e: e["event"] == "ready")["rows"] == 1  # the queue's state
    assert (
        run_cli(
            "agent", "register", "--role", "worker", "--name", "a", "--root", str(project)
        ).returncode
        == 0
    )
    added = following.until(lambda e: e["event"] != "heartbeat")
    assert (added["event"], added["kind"], added["key"]) == ("upsert", "agent", "worker-a")
    ask(project, "task-9")
    asked = following.until(lambda e: e["event"] != "heartbeat")
    assert (asked["kind"], asked["data"]["question"]) == ("question", "Which parser?")
    assert following.line(timeout=5)["event"] == "heartbeat"


@pytest.mark.e2e
def test_a_reader_that_goes_away_ends_the_stream_quietly(following: Reader) -> None:
    assert following.line()["event"] == "snapshot"
    process = following.process
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the pipe's far end is gone: the next heartbeat cannot be written
    assert process.wait(timeout=15) == 0
    assert process.stderr.read() == ""


def test_a_section_that_cannot_be_read_is_a_problem_row_and_the_others_go_on(
    project: Path, clock: ManualClock
) -> None:
    registry, stream = streamed(project, clock)
    identities = registry.paths.identities
    moved = identities.with_name("identities.away")
    identities.rename(moved)
    identities.write_text("a file where a directory belongs")
    ask(project)
    events = stream.rescan()
    problem = [e for e in events if e["kind"] == "problem"]
    assert problem and "should be a directory" in problem[0]["data"]["message"]
    assert ("question", "rune-work-20261123-120000/task-1.q1") in stream.rows
    assert ("agent", "worker-a") in stream.rows  # kept as it was, not reported gone
    identities.unlink()
    moved.rename(identities)
    assert {(e["event"], e["kind"]) for e in stream.rescan()} == {("remove", "problem")}
