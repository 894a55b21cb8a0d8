"""``runeconsole events --fleet FILE``: every source of a fleet file as one stream, keys
``source/key``, a row per source with its state, a missing or unreachable source
reported there while the others go on."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runeconsole.core.fleet_file import SourceSpec
from runeconsole.core.paths import ProjectPaths
from runeconsole.services.claude.bridge.presence import console_open
from runeconsole.services.events import Event
from runeconsole.services.project import Project
from runeconsole.services.registry import Registry
from runeconsole.services.sources.fleet import FleetFeed
from runeconsole.services.sources.remote import wait_for
from tests.support.fleet import fleet_file, project_root
from tests.support.sshd import Sshd


def roots(tmp_path: Path, *names: str) -> list[Path]:
    """A root per name, with ``worker-NAME`` registered."""
    return [project_root(tmp_path, name, name) for name in names]


def rows(events: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["kind"], e["key"]): e["data"] for e in events if e["event"] == "upsert"}


def test_local_roots_are_one_snapshot_keyed_by_source_and_a_missing_root_is_a_down_row(
    tmp_path: Path, cli: Callable
) -> None:
    one, two = roots(tmp_path, "one", "two")
    fleet = tmp_path / "fleet.yml"
    fleet.write_text(
        f"sources:\n  - {{name: one, root: '{one}'}}\n  - {{name: two, root: '{two}'}}\n"
        f"  - {{name: gone, root: '{tmp_path / 'nowhere'}'}}\n"
    )

    result = cli("events", "--fleet", str(fleet), "--json")

    assert result.code == 0, result.err
    events = [json.loads(line) for line in result.out.splitlines()]
    assert events[0]["sources"] == ["one", "two", "gone"] and events[-1]["event"] == "ready"
    seen = rows(events)
    assert {key for kind, key in seen if kind == "agent"} == {"one/worker-one", "two/worker-two"}
    assert seen[("source", "one")]["state"] == seen[("source", "two")]["state"] == "up"
    assert seen[("source", "gone")]["state"] == "down"
    assert "no such directory" in seen[("source", "gone")]["reason"]


def test_one_source_keeps_its_keys_as_with_root(tmp_path: Path, cli: Callable) -> None:
    (one,) = roots(tmp_path, "one")
    fleet = fleet_file(tmp_path, {"name": "one", "root": one})
    events = [
        json.loads(line) for line in cli("events", "--fleet", str(fleet), "--json").out.splitlines()
    ]
    assert ("agent", "worker-one") in rows(events)


class Collector:
    def __init__(self, feed: FleetFeed) -> None:
        self.events: list[Event] = []
        self.feed = feed
        self.thread = threading.Thread(target=feed.run, args=(self.events.extend,), daemon=True)
        self.thread.start()

    def has(self, predicate: Callable[[dict[tuple[str, str], dict[str, Any]]], bool]) -> bool:
        return wait_for(lambda: predicate(rows(list(self.events))), 30)

    def stop(self) -> None:
        self.feed.stop()
        self.thread.join(10)


@pytest.mark.e2e
def test_a_local_root_that_appears_later_is_followed_once_it_does(tmp_path: Path) -> None:
    (here,) = roots(tmp_path, "here")
    later = tmp_path / "later"
    collector = Collector(
        FleetFeed([SourceSpec("here", str(here)), SourceSpec("later", str(later))], heartbeat=0.5)
    )
    try:
        assert collector.has(lambda seen: seen.get(("source", "later"), {}).get("state") == "down")
        project_root(tmp_path, "later", "late")  # the root is made, an agent registered
        assert collector.has(
            lambda seen: (
                seen[("source", "later")]["state"] == "up"
                and ("agent", "later/worker-late") in seen
            )
        )
    finally:
        collector.stop()


def test_two_hosts_over_ssh_and_a_local_root_in_one_stream_and_a_down_host_spares_the_others(
    sshd: Sshd, tmp_path: Path
) -> None:
    alpha, beta, here = roots(tmp_path, "alpha", "beta", "here")
    command = tuple(sshd.remote_command())
    ssh = tuple(sshd.ssh_prefix)
    refused = (*ssh, "-p", "1")
    feed = FleetFeed(
        [
            SourceSpec("alpha", str(alpha), "alpha", command, ssh),
            SourceSpec("beta", str(beta), "beta", command, ssh),
            SourceSpec("here", str(here)),
            SourceSpec("down", str(alpha), "alpha", command, refused),
        ],
        heartbeat=0.5,
        sockets=sshd.sockets,
    )
    collector = Collector(feed)
    try:
        assert collector.has(
            lambda seen: (
                {("agent", "alpha/worker-alpha"), ("agent", "beta/worker-beta")} <= seen.keys()
                and ("agent", "here/worker-here") in seen
            )
        )
        assert collector.has(lambda seen: seen[("source", "down")]["state"] == "down")
        assert "refused" in rows(collector.events)[("source", "down")]["reason"]
        Registry(Project(beta)).mark_crashed("worker-beta")
        assert collector.has(
            lambda seen: seen[("agent", "beta/worker-beta")]["status"] == "crashed"
        )
    finally:
        collector.stop()


def test_a_present_feed_stands_for_an_open_console_on_every_source_until_it_stops(
    sshd: Sshd, tmp_path: Path
) -> None:
    far, near = roots(tmp_path, "far", "near")
    command, ssh = tuple(sshd.remote_command()), tuple(sshd.ssh_prefix)
    feed = FleetFeed(
        [SourceSpec("far", str(far), "alpha", command, ssh), SourceSpec("near", str(near))],
        heartbeat=0.5,
        sockets=sshd.sockets,
        present=True,
    )
    held = [ProjectPaths(far), ProjectPaths(near)]
    collector = Collector(feed)
    try:
        assert wait_for(lambda: all(console_open(paths) for paths in held), 30)
    finally:
        collector.stop()
    assert wait_for(lambda: not any(console_open(paths) for paths in held), 15)


def test_a_snapshot_taken_after_every_source_answered_still_holds_their_rows(
    tmp_path: Path,
) -> None:
    """A slow reader (a loaded machine) sees every source answered before it first looks:
    the rows and states that came with the answers are in its snapshot all the same."""
    one, two = roots(tmp_path, "one", "two")
    specs = [
        SourceSpec(name="one", root=str(one)),
        SourceSpec(name="two", root=str(two)),
        SourceSpec(name="gone", root=str(tmp_path / "nowhere")),
    ]
    feed = FleetFeed(specs)
    emitted: list[Event] = []

    def slow(events: list[Event]) -> None:
        if not emitted:  # the header: every source answers while the reader is away
            answered = lambda: all(s["state"] != "connecting" for s in feed.states.values())  # noqa: E731
            assert wait_for(answered, timeout=10)
        emitted.extend(events)

    feed.run(slow, follow_changes=False)

    seen = rows(emitted)
    assert {key for kind, key in seen if kind == "agent"} == {"one/worker-one", "two/worker-two"}
    assert {key: seen[("source", key)]["state"] for key in ("one", "two", "gone")} == {
        "one": "up",
        "two": "up",
        "gone": "down",
    }
